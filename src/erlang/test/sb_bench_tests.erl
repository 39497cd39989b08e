%% Each benchmark at a small size, in-process: exact counts and values in the printed
%% record (tests/python/conformance validates records against the schema).
-module(sb_bench_tests).
-include_lib("eunit/include/eunit.hrl").

record(Bench, Args) ->
    {run, BenchBin, Params} = sb_cli:parse([atom_to_list(Bench) | Args]),
    ?assertEqual(atom_to_binary(Bench), BenchBin),
    {Code, Out, Err} = sb_cli:execute([atom_to_list(Bench) | Args]),
    ?assertEqual({0, <<>>}, {Code, iolist_to_binary(Err)}),
    [Line] = sb_test_util:lines(iolist_to_binary(Out)),
    R = sb_json_decode:decode(Line),
    ?assertEqual(<<"erlang">>, maps:get(<<"language">>, R)),
    ?assertEqual(atom_to_binary(Bench), maps:get(<<"benchmark">>, R)),
    ?assertEqual(erlang:system_info(schedulers_online),
                 maps:get(<<"schedulers">>, maps:get(<<"runtime">>, R))),
    {Params, R}.

get(Path, M) -> lists:foldl(fun(K, Acc) -> maps:get(K, Acc) end, M, Path).

pingping_test_() ->
    {timeout, 30,
     [fun() ->
              Args = ["--message-bytes", integer_to_list(B), "--repetitions", integer_to_list(R),
                      "--payload", P],
              {_, Rec} = record(pingping, Args),
              ?assertEqual(2 * R, get([<<"metrics">>, <<"messages">>], Rec)),
              ?assertEqual(#{<<"ok">> => true, <<"received_a">> => R, <<"received_b">> => R,
                             <<"payload_errors">> => 0}, maps:get(<<"validation">>, Rec)),
              ?assertEqual(#{<<"message_bytes">> => B, <<"repetitions">> => R,
                             <<"payload">> => list_to_binary(P)}, maps:get(<<"params">>, Rec))
      end || B <- [1, 2, 64, 65, 5000], R <- [1, 7, 2000], P <- ["copy", "share"]]}.

spawn_test_() ->
    {timeout, 30,
     [fun() ->
              {_, Rec} = record(spawn, ["--processes", integer_to_list(N)]),
              ?assertEqual(#{<<"ok">> => true, <<"ready">> => N}, maps:get(<<"validation">>, Rec)),
              M = maps:get(<<"metrics">>, Rec),
              ?assert(maps:get(<<"all_ready_s">>, M) >= maps:get(<<"spawn_call_s">>, M)),
              ?assert(is_integer(maps:get(<<"rss_bytes_before">>, M))),
              ?assert(is_integer(maps:get(<<"runtime_memory_bytes">>, M)))
      end || N <- [1, 5000]]}.

throughput_test_() ->
    {timeout, 30,
     [fun() ->
              Args = ["--pairs", integer_to_list(NP), "--message-bytes", integer_to_list(B),
                      "--duration-s", "0.35", "--report-every", integer_to_list(K), "--payload", P],
              {_, Rec} = record(throughput, Args),
              V = maps:get(<<"validation">>, Rec),
              M = maps:get(<<"metrics">>, Rec),
              Ex = maps:get(<<"exchanges">>, M),
              ?assertEqual(true, maps:get(<<"ok">>, V)),
              ?assertEqual(0, maps:get(<<"payload_errors">>, V)),
              ?assertEqual(Ex, maps:get(<<"reported_exchanges">>, V)),
              ?assertEqual(Ex, maps:get(<<"counted_exchanges">>, V)),
              ?assert(maps:get(<<"min_pair_exchanges">>, V) >= 1),
              ?assert(maps:get(<<"elapsed_s">>, M) >= 0.35),
              ?assert(abs(maps:get(<<"exchanges_per_s">>, M) * 60
                          - maps:get(<<"paper_msgs_per_min">>, M)) < 1.0e-6 * Ex * 60 + 1),
              Samples = maps:get(<<"samples">>, M),
              %% the last sample is the end: [elapsed, total]
              ?assertEqual([maps:get(<<"elapsed_s">>, M), Ex], lists:last(Samples)),
              %% all but the last are >= 0.1 s apart (the first counts from the clock
              %% start) and cumulative counts never fall
              Ts = [0.0 | [T || [T, _] <- lists:droplast(Samples)]],
              [?assert(T2 - T1 >= 0.1 - 1.0e-9) || {T1, T2} <- lists:zip(lists:droplast(Ts), tl(Ts))],
              Cs = [C || [_, C] <- Samples],
              ?assertEqual(Cs, lists:sort(Cs))
      end || {NP, B, K, P} <- [{1, 500, 1000, "copy"}, {3, 1, 7, "share"}, {4, 70000, 10, "copy"}]]}.

%% The samples follow cli.json's throughput_sample_min_interval_s: never closer
%% (report_every 1 reports all the time), and not much sparser either (at least half
%% as many as the interval allows), so a wrong interval in the code fails here.
sample_interval_follows_cli_json_test_() ->
    {timeout, 30,
     fun() ->
             Interval = maps:get(<<"throughput_sample_min_interval_s">>,
                                 sb_test_util:read_json("spec/cli.json")),
             Duration = 8 * Interval,
             {_, Rec} = record(throughput, ["--pairs", "1", "--message-bytes", "1",
                                            "--duration-s", float_to_list(Duration, [short]),
                                            "--report-every", "1"]),
             Samples = maps:get(<<"samples">>, maps:get(<<"metrics">>, Rec)),
             Ts = [0.0 | [T || [T, _] <- lists:droplast(Samples)]],
             Gaps = [T2 - T1 || {T1, T2} <- lists:zip(lists:droplast(Ts), tl(Ts))],
             ?assert(lists:min(Gaps) >= Interval - 1.0e-9),
             ?assert(length(Samples) - 1 >= Duration / Interval / 2)
     end}.
