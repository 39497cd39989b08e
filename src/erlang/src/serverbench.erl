%% @doc escript entry point: everything else is in sb_cli and the sb_* benchmarks.
-module(serverbench).
-export([main/1]).

-spec main([string()]) -> no_return().
main(Args) ->
    %% The default logger handler writes to standard_io, but stdout must carry only
    %% the record (e.g. the emulator's "Too many processes" report goes to stderr).
    _ = logger:remove_handler(default),
    ok = logger:add_handler(default, logger_std_h, #{config => #{type => standard_error}}),
    {Code, Out, Err} =
        try sb_cli:execute(Args)
        catch Class:Reason:Stack ->
                %% Never let the VM crash (no crash dump): report and exit 1.
                {1, [], io_lib:format("error: internal: ~p:~0p ~0p~n", [Class, Reason, Stack])}
        end,
    ok = io:put_chars(standard_error, Err),
    ok = io:put_chars(standard_io, Out),
    erlang:halt(Code).
