%% @doc Command line of serverbench, as spec/cli.json fixes it (docs/spec.md 1).
%%
%% parse/1 is pure; execute/1 turns arguments into {ExitCode, Stdout, Stderr} so the
%% whole contract can be tested in-process; serverbench:main/1 only writes and halts.
%% The flag table below restates spec/cli.json; test/sb_cli_tests.erl reads that file
%% and checks this parser against it.
-module(sb_cli).
-export([parse/1, execute/1, usage/0, spec/1, benchmarks/0, version_info/0,
         program_version/0, implemented_variants/0]).

-define(EXIT_OK, 0).
-define(EXIT_FAILED, 1).
-define(EXIT_USAGE, 2).

program_version() -> <<"0.1.0">>.

benchmarks() -> [pingping, spawn, throughput].

implemented_variants() -> ["fair"].

%% {Flag, Param, Type, required | {default, ParsedValue}}
spec(pingping) ->
    [{"--message-bytes", message_bytes, {int, 1, 67108864}, required},
     {"--repetitions", repetitions, {int, 1, 1000000000}, required},
     payload(), variant()];
spec(spawn) ->
    [{"--processes", processes, {int, 1, 200000000}, required},
     variant()];
spec(throughput) ->
    [{"--pairs", pairs, {int, 1, 1000000}, required},
     {"--message-bytes", message_bytes, {int, 1, 67108864}, required},
     {"--duration-s", duration_s, {number, {exclusive, 0}, 86400}, required},
     {"--report-every", report_every, {int, 1, 1000000000}, {default, 10000}},
     payload(), variant()].

payload() -> {"--payload", payload, {enum, ["copy", "share"]}, {default, <<"copy">>}}.
variant() -> {"--variant", variant, {enum, ["fair", "paper"]}, {default, <<"fair">>}}.

usage() ->
    <<"usage:\n"
      "  serverbench pingping   --message-bytes B --repetitions R [--payload copy|share] [--variant fair|paper]\n"
      "  serverbench spawn      --processes N [--variant fair|paper]\n"
      "  serverbench throughput --pairs P --message-bytes B --duration-s T [--report-every K]\n"
      "                         [--payload copy|share] [--variant fair|paper]\n"
      "  serverbench --version\n"
      "  serverbench --help\n"
      "Flags: --name value or --name=value, any order, each at most once.\n"
      "Schedulers are not a flag: set ERL_FLAGS=\"+S C:C +P L\".\n"
      "stdout: one JSON record; exit 0 ok, 1 run failed, 2 bad command line.\n">>.

version_info() ->
    {[{program, <<"serverbench">>},
      {program_version, program_version()},
      {language, <<"erlang">>},
      {runtime, sb_sys:runtime()}]}.

%% ---------------------------------------------------------------------------
%% parse

-spec parse([string()]) ->
          version | help | {run, atom(), map()} | {error, string()}.
parse(["--version"]) -> version;
parse(["--help"]) -> help;
parse(["-h"]) -> help;
parse([]) -> {error, "missing sub-command (pingping, spawn, throughput); see --help"};
parse([Cmd | Rest]) ->
    case [B || B <- benchmarks(), atom_to_list(B) =:= Cmd] of
        [Bench] -> parse_flags(Bench, spec(Bench), Rest, #{});
        [] when Cmd =:= "--version"; Cmd =:= "--help" ->
            {error, fmt("~s takes no other arguments", [Cmd])};
        [] -> {error, fmt("unknown sub-command '~s' (expected pingping, spawn or throughput)",
                          [printable(Cmd)])}
    end.

parse_flags(Bench, Spec, [], Seen) ->
    finish(Bench, Spec, Seen);
parse_flags(_Bench, _Spec, ["--help" | _], _Seen) ->
    help;
parse_flags(Bench, Spec, ["--" ++ _ = Arg | Rest], Seen) ->
    {Name, Inline} = case string:split(Arg, "=") of
                         [N, V] -> {N, {value, V}};
                         [N] -> {N, none}
                     end,
    case lists:keyfind(Name, 1, Spec) of
        false ->
            {error, fmt("unknown flag '~s' for ~s", [printable(Name), Bench])};
        {_, Param, _, _} when is_map_key(Param, Seen) ->
            {error, fmt("~s given more than once", [Name])};
        {_, Param, Type, _} ->
            case take_value(Inline, Rest) of
                {ok, Raw, Rest1} ->
                    case convert(Name, Type, Raw) of
                        {ok, Value} -> parse_flags(Bench, Spec, Rest1, Seen#{Param => Value});
                        {error, _} = E -> E
                    end;
                missing ->
                    {error, fmt("~s needs a value", [Name])}
            end
    end;
parse_flags(_Bench, _Spec, [Arg | _], _Seen) ->
    {error, fmt("unexpected argument '~s' (flags are --name value or --name=value)",
                [printable(Arg)])}.

%% A following token that starts with "--" is the next flag, not this flag's value.
take_value({value, V}, Rest) -> {ok, V, Rest};
take_value(none, ["--" ++ _ | _]) -> missing;
take_value(none, [V | Rest]) -> {ok, V, Rest};
take_value(none, []) -> missing.

finish(Bench, Spec, Seen) ->
    Missing = [F || {F, P, _, required} <- Spec, not is_map_key(P, Seen)],
    case Missing of
        [F | _] -> {error, fmt("missing required flag ~s", [F])};
        [] ->
            Params = lists:foldl(
                       fun({_, P, _, {default, D}}, Acc) when not is_map_key(P, Acc) ->
                               Acc#{P => D};
                          (_, Acc) -> Acc
                       end, Seen, Spec),
            Variant = binary_to_list(maps:get(variant, Params)),
            case lists:member(Variant, implemented_variants()) of
                true -> {run, Bench, Params};
                false -> {error, fmt("--variant ~s is not built yet (implemented: ~s)",
                                     [Variant, lists:join(", ", implemented_variants())])}
            end
    end.

%% Integers: plain decimal digits only (no sign, exponent or '_').
convert(Name, {int, Min, Max}, Raw) ->
    case digits(Raw) of
        true ->
            I = list_to_integer(Raw),
            if I < Min; I > Max -> {error, range(Name, Raw, "an integer", "[", Min, Max)};
               true -> {ok, I}
            end;
        false -> {error, fmt("~s must be an integer in [~b, ~b], got '~s'",
                             [Name, Min, Max, printable(Raw)])}
    end;
%% --duration-s: a decimal number (60, 0.5, .5, 5.); nan, inf and exponents refused.
convert(Name, {number, {exclusive, Min}, Max}, Raw) ->
    case decimal(Raw) of
        {ok, F} when F > Min, F =< Max -> {ok, F};
        _ -> {error, range(Name, Raw, "a decimal number", "(", Min, Max)}
    end;
convert(Name, {enum, Values}, Raw) ->
    case lists:member(Raw, Values) of
        true -> {ok, list_to_binary(Raw)};
        false -> {error, fmt("~s must be one of ~s, got '~s'",
                             [Name, lists:join("|", Values), printable(Raw)])}
    end.

range(Name, Raw, What, Open, Min, Max) ->
    fmt("~s must be ~s in ~s~p, ~p], got '~s'", [Name, What, Open, Min, Max, printable(Raw)]).

digits([]) -> false;
digits(S) -> lists:all(fun(C) -> C >= $0 andalso C =< $9 end, S).

decimal(S) ->
    case string:split(S, ".") of
        [I] -> int_part(I, "0");
        [I, F] when I =/= [] orelse F =/= [] -> int_part(I, F);
        _ -> error
    end.

int_part(I, F) ->
    I1 = case I of [] -> "0"; _ -> I end,
    F1 = case F of [] -> "0"; _ -> F end,
    case digits(I1) andalso digits(F1) of
        %% A value too large for a float is simply out of range.
        true -> try {ok, list_to_float(I1 ++ "." ++ F1)} catch error:badarg -> error end;
        false -> error
    end.

%% Keep the one error line one line, whatever the user typed.
printable(S) ->
    [case C of $\n -> $\s; $\r -> $\s; _ -> C end || C <- S].

fmt(F, A) -> lists:flatten(io_lib:format(F, A)).

%% ---------------------------------------------------------------------------
%% execute

-spec execute([string()]) -> {0 | 1 | 2, iodata(), iodata()}.
execute(Args) ->
    case parse(Args) of
        help -> {?EXIT_OK, usage(), []};
        version -> {?EXIT_OK, [sb_json:encode(version_info()), $\n], []};
        {error, Msg} -> {?EXIT_USAGE, [], ["error: ", Msg, $\n]};
        {run, Bench, Params} -> run(Bench, Params)
    end.

run(Bench, Params) ->
    Mod = list_to_atom("sb_" ++ atom_to_list(Bench)),
    case Mod:run(Params) of
        {ok, Record, Ok} ->
            Code = case Ok of true -> ?EXIT_OK; false -> ?EXIT_FAILED end,
            {Code, [sb_json:encode(Record), $\n], []};
        {error, Msg} ->
            {?EXIT_FAILED, [], ["error: ", Msg, $\n]}
    end.
