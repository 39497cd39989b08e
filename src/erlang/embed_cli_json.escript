#!/usr/bin/env escript
%% rebar.config pre-compile hook: spec/cli.json -> include/sb_cli_json.hrl (gitignored),
%% so that sb_cli parses the command line from the contract built into the escript.
%% The file is rewritten only when its content changes (no needless recompiles).
main([Src, Dst]) ->
    {ok, Json} = file:read_file(Src),
    New = iolist_to_binary(
            io_lib:format("%% Generated from spec/cli.json by embed_cli_json.escript; do not edit.~n"
                          "-define(CLI_JSON, ~w).~n", [Json])),
    case file:read_file(Dst) of
        {ok, New} -> ok;
        _ -> ok = filelib:ensure_dir(Dst), ok = file:write_file(Dst, New)
    end.
