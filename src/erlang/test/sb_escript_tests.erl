%% The built escript as the harness runs it (spec/cli.json languages.erlang).
-module(sb_escript_tests).
-include_lib("eunit/include/eunit.hrl").

version_test() ->
    {0, Out, Err} = sb_test_util:run([], ["--version"]),
    ?assertEqual(<<>>, Err),
    [Line] = sb_test_util:lines(Out),
    ?assertEqual(<<"erlang">>, maps:get(<<"language">>, sb_json_decode:decode(Line))).

erl_flags_are_honoured_test() ->
    {0, Out, _} = sb_test_util:run([{"ERL_FLAGS", "+S 1:1 +P 400000"}], ["--version"]),
    RT = maps:get(<<"runtime">>, sb_json_decode:decode(Out)),
    ?assertEqual(1, maps:get(<<"schedulers">>, RT)),
    ?assert(maps:get(<<"process_limit">>, RT) >= 400000).

record_from_escript_test() ->
    {0, Out, Err} = sb_test_util:run([{"ERL_FLAGS", "+S 1:1"}, {"ERL_CRASH_DUMP_BYTES", "0"}],
                                     ["pingping", "--message-bytes=100", "--repetitions=10"]),
    ?assertEqual(<<>>, Err),
    [Line] = sb_test_util:lines(Out),
    R = sb_json_decode:decode(Line),
    ?assertEqual(1, maps:get(<<"schedulers">>, maps:get(<<"runtime">>, R))).

%% 300,000 > the default process limit (262,144): works with +P raised, and without
%% it fails cleanly (exit 1, one error line, nothing on stdout, no crash dump) even
%% when ERL_CRASH_DUMP_BYTES is not set.
spawn_above_default_limit_test_() ->
    {timeout, 60,
     fun() ->
             {0, Out, _} = sb_test_util:run([{"ERL_FLAGS", "+P 400000"}],
                                            ["spawn", "--processes", "300000"]),
             R = sb_json_decode:decode(Out),
                      ?assertEqual(#{<<"ok">> => true, <<"ready">> => 300000}, maps:get(<<"validation">>, R))
     end}.

spawn_system_limit_test_() ->
    {timeout, 60,
     fun() ->
             Dir = string:trim(os:cmd("mktemp -d")),
             {Code, Out, Err} = sb_test_util:run_in(Dir, [], ["spawn", "--processes", "300000"]),
             {ok, Files} = file:list_dir(Dir),
             os:cmd("rm -rf '" ++ Dir ++ "'"),
             ?assertEqual(1, Code),
             ?assertEqual(<<>>, Out),
             ?assertMatch([<<"error: system_limit: cannot spawn 300000 processes", _/binary>>],
                          sb_test_util:lines(Err)),
             ?assertEqual(["stderr", "stdout"], lists:sort(Files))
     end}.
