-module(sb_json_tests).
-include_lib("eunit/include/eunit.hrl").

enc(T) -> iolist_to_binary(sb_json:encode(T)).

expected_string_test() ->
    T = {[{benchmark, <<"pingping">>},
          {n, 3},
          {neg, -7},
          {x, 0.5},
          {small, 0.001},
          {tiny, 1.0e-10},
          {whole, 60.0},
          {ok, true},
          {no, false},
          {nothing, null},
          {list, [1, [2.5, <<"a">>], {[]}, []]},
          {sorted, #{b => 1, a => 2}},
          {<<"esc">>, <<"q\"b\\n\nt\tc", 1, "é"/utf8>>}]},
    ?assertEqual(<<"{\"benchmark\":\"pingping\",\"n\":3,\"neg\":-7,\"x\":0.5,"
                   "\"small\":0.001,\"tiny\":1.0e-10,\"whole\":60.0,\"ok\":true,"
                   "\"no\":false,\"nothing\":null,\"list\":[1,[2.5,\"a\"],{},[]],"
                   "\"sorted\":{\"a\":2,\"b\":1},"
                   "\"esc\":\"q\\\"b\\\\n\\nt\\tc\\u0001", "é"/utf8, "\"}">>,
                 enc(T)).

round_trip_test() ->
    T = #{<<"a">> => [1, 2.25, -3, 1.0e-10, 123456789012345678901234567890],
          <<"b">> => #{<<"c">> => null, <<"d">> => <<"x\ny\"z\\", 0, 31>>},
          <<"e">> => true, <<"f">> => false, <<"g">> => [], <<"h">> => #{},
          <<"utf8">> => <<"日本"/utf8>>},
    ?assertEqual(T, sb_json_decode:decode(sb_json:encode(T))).

floats_round_trip_test() ->
    [?assertEqual(F, sb_json_decode:decode(sb_json:encode(F)))
     || F <- [0.0, 1.5, 1.0e-3, 1.0e-300, 1.7976931348623157e308, 123456.789, 2.5e15]].

decoder_rejects_garbage_test() ->
    [?assertError(_, sb_json_decode:decode(B))
     || B <- [<<"{">>, <<"[1,]">>, <<"{\"a\":1,}">>, <<"1 2">>, <<"nul">>,
              <<"{\"a\":1,\"a\":2}">>, <<"\"a\nb\"">>, <<"1.">>]].
