%% The paper variant's quirks at tiny sizes (docs/spec.md "The paper variant").
-module(sb_paper_tests).
-include_lib("eunit/include/eunit.hrl").

run(Args) ->
    {Code, Out, Err} = sb_cli:execute(Args),
    {Code, iolist_to_binary(Out), iolist_to_binary(Err)}.

rec(Args) ->
    {0, Out, <<>>} = run(Args),
    [Line] = sb_test_util:lines(Out),
    sb_json_decode:decode(Line).

get(Path, M) -> lists:foldl(fun(K, Acc) -> maps:get(K, Acc) end, M, Path).

pingping_paper_shares_and_matches_bound_test() ->
    R = rec(["pingping", "--message-bytes", "500", "--repetitions", "300", "--variant", "paper"]),
    ?assertEqual(#{<<"match">> => <<"bound">>, <<"payload_build">> => <<"in_clock">>,
                   <<"send">> => <<"share">>, <<"message_shape">> => <<"original">>},
                 maps:get(<<"knobs">>, R)),
    ?assertEqual(<<"copy">>, get([<<"params">>, <<"payload">>], R)),  % the flag; send share in knobs
    ?assertEqual(true, get([<<"validation">>, <<"ok">>], R)),
    ?assert(is_number(get([<<"metrics">>, <<"reported_elapsed_s">>], R))).

bound_match_with_copies_still_matches_test() ->
    R = rec(["pingping", "--message-bytes", "100", "--repetitions", "50", "--variant", "mixed",
             "--match", "bound", "--send", "copy"]),
    ?assertEqual(0, get([<<"validation">>, <<"payload_errors">>], R)).

%% The original's 4-tuples {From, Counter, Payload, Parent}: every combination with the
%% other pingping knobs receives exactly R per side, odd and even R, R = 1 included.
message_shape_original_counts_every_message_test_() ->
    {timeout, 60,
     fun() ->
             [begin
                  Args = ["pingping", "--message-bytes", integer_to_list(Bytes), "--repetitions",
                          integer_to_list(Reps), "--variant", "mixed", "--message-shape", "original",
                          "--match", Match, "--send", Send, "--payload-build", Build],
                  R = rec(Args),
                  ?assertEqual(<<"original">>, get([<<"knobs">>, <<"message_shape">>], R)),
                  ?assertEqual(<<"original">>, get([<<"params">>, <<"message_shape">>], R)),
                  ?assertEqual({Args, true, Reps, Reps, 0},
                               {Args, get([<<"validation">>, <<"ok">>], R),
                                get([<<"validation">>, <<"received_a">>], R),
                                get([<<"validation">>, <<"received_b">>], R),
                                get([<<"validation">>, <<"payload_errors">>], R)})
              end
              || Reps <- [1, 2, 7, 1000], Bytes <- [1, 300],
                 Match <- ["check", "bound"], Send <- ["payload", "share", "copy"],
                 Build <- ["before_clock", "in_clock"]]
     end}.

spawn_paper_reports_the_spawn_loop_test() ->
    R = rec(["spawn", "--processes", "2000", "--variant", "paper"]),
    M = maps:get(<<"metrics">>, R),
    ?assertEqual(maps:get(<<"all_ready_s">>, M), maps:get(<<"true_elapsed_s">>, M)),
    %% wall-clock milliseconds, as the original printed
    Ms = maps:get(<<"reported_elapsed_s">>, M) * 1000,
    ?assert(abs(Ms - round(Ms)) < 1.0e-6).

throughput_paper_counts_whole_batches_test_() ->
    {timeout, 30,
     fun() ->
             R = rec(["throughput", "--pairs", "3", "--message-bytes", "100", "--duration-s", "0.2",
                      "--variant", "paper"]),
             M = maps:get(<<"metrics">>, R),
             ?assertEqual(100, maps:get(<<"batch_size">>, M)),
             Rep = maps:get(<<"reported_exchanges">>, M),
             ?assertEqual(0, Rep rem 100),
             ?assert(Rep =< maps:get(<<"true_exchanges">>, M)),
             ?assertEqual(maps:get(<<"exchanges">>, M), maps:get(<<"true_exchanges">>, M)),
             ?assertEqual(true, get([<<"validation">>, <<"ok">>], R))
     end}.

knob_refusals_test() ->
    {2, <<>>, E1} = run(["pingping", "--message-bytes", "5", "--repetitions", "5", "--mailbox", "100",
                         "--variant", "mixed"]),
    ?assertEqual(<<"error: --mailbox is not a knob of erlang pingping (only go)\n">>, E1),
    {2, <<>>, E2} = run(["throughput", "--pairs", "1", "--message-bytes", "5", "--duration-s", "0.1",
                         "--counting", "batched"]),
    ?assertEqual(<<"error: --counting batched contradicts --variant fair (fair means exact; use --variant mixed)\n">>, E2),
    {2, <<>>, E3} = run(["spawn", "--processes", "5", "--variant", "paper", "--timer", "all_ready"]),
    ?assertMatch(<<"error: --timer all_ready contradicts --variant paper", _/binary>>, E3).

echo_alone_checks_clean_test() ->
    R = rec(["throughput", "--pairs", "2", "--message-bytes", "100", "--duration-s", "0.1",
             "--variant", "mixed", "--send", "share"]),
    ?assertEqual(0, get([<<"validation">>, <<"payload_errors">>], R)).
