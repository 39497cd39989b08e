-module(sb_schema_tests).
-include_lib("eunit/include/eunit.hrl").

good() ->
    #{<<"benchmark">> => <<"pingping">>, <<"language">> => <<"erlang">>,
      <<"variant">> => <<"fair">>,
      <<"params">> => #{<<"message_bytes">> => 5, <<"repetitions">> => 3,
                        <<"payload">> => <<"copy">>},
      <<"metrics">> => #{<<"elapsed_s">> => 0.5, <<"messages">> => 6,
                         <<"ns_per_message">> => 10.0},
      <<"validation">> => #{<<"ok">> => true, <<"received_a">> => 3,
                            <<"received_b">> => 3, <<"payload_errors">> => 0},
      <<"runtime">> => #{<<"name">> => <<"erlang">>, <<"version">> => <<"x">>,
                         <<"schedulers">> => 1, <<"process_limit">> => null}}.

put_in([K], V, M) -> M#{K => V};
put_in([K | Ks], V, M) -> M#{K => put_in(Ks, V, maps:get(K, M))}.

del_in([K], M) -> maps:remove(K, M);
del_in([K | Ks], M) -> M#{K => del_in(Ks, maps:get(K, M))}.

accepts_good_test() ->
    ?assertEqual([], sb_schema:validate(sb_test_util:schema(), good())).

rejects_broken_test_() ->
    S = sb_test_util:schema(),
    G = good(),
    Broken =
        [{"missing field", del_in([<<"metrics">>], G)},
         {"missing nested", del_in([<<"validation">>, <<"received_b">>], G)},
         {"extra field", G#{<<"extra">> => 1}},
         {"extra nested", put_in([<<"params">>, <<"x">>], 1, G)},
         {"wrong const", G#{<<"benchmark">> => <<"pingpong">>}},
         {"wrong enum", G#{<<"language">> => <<"cobol">>}},
         {"integer as float", put_in([<<"metrics">>, <<"messages">>], 6.5, G)},
         {"integer as string", put_in([<<"params">>, <<"repetitions">>], <<"3">>, G)},
         {"below minimum", put_in([<<"params">>, <<"repetitions">>], 0, G)},
         {"negative seconds", put_in([<<"metrics">>, <<"elapsed_s">>], -1.0, G)},
         {"bool wrong type", put_in([<<"validation">>, <<"ok">>], <<"true">>, G)},
         {"empty name", put_in([<<"runtime">>, <<"name">>], <<>>, G)},
         {"type list", put_in([<<"runtime">>, <<"process_limit">>], <<"1">>, G)},
         {"type list min", put_in([<<"runtime">>, <<"process_limit">>], 0, G)},
         {"not an object", [1]}],
    [{Name, ?_assertNotEqual([], sb_schema:validate(S, R))} || {Name, R} <- Broken].

throughput_keywords_test() ->
    S = sb_test_util:schema(),
    T = #{<<"benchmark">> => <<"throughput">>, <<"language">> => <<"go">>,
          <<"variant">> => <<"fair">>,
          <<"params">> => #{<<"pairs">> => 1, <<"message_bytes">> => 1,
                            <<"duration_s">> => 0.5, <<"report_every">> => 1,
                            <<"payload">> => <<"share">>},
          <<"metrics">> => #{<<"exchanges">> => 2, <<"elapsed_s">> => 1,
                             <<"exchanges_per_s">> => 2, <<"paper_msgs_per_min">> => 120,
                             <<"samples">> => [[0.1, 1], [1, 2]]},
          <<"validation">> => #{<<"ok">> => true, <<"reported_exchanges">> => 2,
                                <<"counted_exchanges">> => 2, <<"payload_errors">> => 0,
                                <<"min_pair_exchanges">> => 2},
          <<"runtime">> => #{<<"name">> => <<"go">>, <<"version">> => <<"1">>,
                             <<"schedulers">> => 2}},
    ?assertEqual([], sb_schema:validate(S, T)),
    Bad = fun(Path, V) -> ?assertNotEqual([], sb_schema:validate(S, put_in(Path, V, T))) end,
    Bad([<<"metrics">>, <<"samples">>], [[0.1]]),            % minItems
    Bad([<<"metrics">>, <<"samples">>], [[0.1, 1, 2]]),      % maxItems
    Bad([<<"metrics">>, <<"samples">>], [[0.1, -1]]),        % items minimum
    Bad([<<"metrics">>, <<"samples">>], [1]),                % items type
    Bad([<<"params">>, <<"duration_s">>], 0),                % exclusiveMinimum
    Bad([<<"params">>, <<"payload">>], <<"move">>),          % $ref enum
    %% oneOf: a throughput record claiming to be a spawn record matches no branch.
    ?assertNotEqual([], sb_schema:validate(S, T#{<<"benchmark">> => <<"spawn">>})).

one_of_counts_matches_test() ->
    Root = #{},
    Two = #{<<"oneOf">> => [#{<<"type">> => <<"integer">>}, #{<<"type">> => <<"number">>}]},
    ?assertNotEqual([], sb_schema:validate(Root, Two, 3)),
    ?assertEqual([], sb_schema:validate(Root, Two, 3.5)).
