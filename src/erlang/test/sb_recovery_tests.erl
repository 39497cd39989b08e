%% recovery: the seeded schedule every language draws, and a small run in-process.
-module(sb_recovery_tests).
-include_lib("eunit/include/eunit.hrl").

%% Vigna's splitmix64.c from seed 0 (the Go test checks the same draws).
splitmix64_reference_test() ->
    {A, S1} = sb_recovery:splitmix64(0),
    {B, S2} = sb_recovery:splitmix64(S1),
    {C, _} = sb_recovery:splitmix64(S2),
    ?assertEqual([16#E220A8397B1DCDAF, 16#6E789E6AA1B965F4, 16#06C45D188009454F], [A, B, C]).

schedule_one_crash_per_interval_test() ->
    S = sb_recovery:schedule(7, 100, 1.0, 4),
    ?assertEqual(100, length(S)),
    lists:foreach(fun({K, {At, Pair}}) ->
                          ?assert(At >= K / 100 andalso At < (K + 1) / 100),
                          ?assert(Pair >= 1 andalso Pair =< 4)
                  end, lists:zip(lists:seq(0, 99), S)),
    ?assertEqual([], sb_recovery:schedule(7, 0, 1.0, 4)).

too_few_crashes_is_usage_test() ->
    {2, [], Err} = sb_cli:execute(["recovery", "--pairs", "1", "--duration-s", "0.5", "--crashes-per-s", "1"]),
    ?assertMatch({match, _}, re:run(iolist_to_binary(Err), "--crashes-per-s")).

run_recovers_every_crash_test_() ->
    {timeout, 30,
     fun() ->
             {0, Out, _} = sb_cli:execute(["recovery", "--pairs", "2", "--duration-s", "0.2",
                                           "--crashes-per-s", "50", "--fault", "aggregator"]),
             R = sb_json_decode:decode(iolist_to_binary(Out)),
             V = maps:get(<<"validation">>, R),
             ?assertEqual(true, maps:get(<<"ok">>, V)),
             ?assertEqual(maps:get(<<"crashes_injected">>, V), maps:get(<<"restarts">>, V))
     end}.
