-module(sb_payload_tests).
-include_lib("eunit/include/eunit.hrl").

markers_match_cli_json_test() ->
    M = maps:get(<<"markers">>, sb_test_util:read_json("spec/cli.json")),
    [?assertEqual(maps:get(atom_to_binary(K), M), V) || {K, V} <- maps:to_list(sb_payload:markers())].

layout_test() ->
    [begin
         Bin = sb_payload:build(65, B),
         ?assertEqual(B, byte_size(Bin)),
         ?assertEqual(65, binary:at(Bin, 0)),
         [?assertEqual(I rem 256, binary:at(Bin, I)) || I <- lists:seq(1, B - 1)],
         ?assert(sb_payload:check(Bin, B, 65))
     end || B <- [1, 2, 255, 256, 257, 1000]].

detects_corruption_test() ->
    B = 5000,
    Bin = sb_payload:build(83, B),
    ?assert(sb_payload:check(Bin, B, 83)),
    ?assertNot(sb_payload:check(Bin, B, 67)),                       % wrong marker
    ?assertNot(sb_payload:check(binary:part(Bin, 0, B - 1), B, 83)), % short
    ?assertNot(sb_payload:check(<<Bin/binary, 0>>, B, 83)),          % long
    <<H:(B - 1)/binary, _>> = Bin,
    ?assertNot(sb_payload:check(<<H/binary, 0>>, B, 83)),            % last byte
    ?assertNot(sb_payload:check(<<>>, 1, 83)),
    ?assertNot(sb_payload:check(<<84>>, 1, 83)),
    ?assert(sb_payload:check(<<83>>, 1, 83)).

copy_is_fresh_test() ->
    B = 5000,
    %% The source lives inside a larger binary; a fresh copy references only B bytes,
    %% while anything that reused the source would still reference 2B.
    Big = sb_payload:build(65, 2 * B),
    Src = binary:part(Big, 0, B),
    ?assertEqual(2 * B, binary:referenced_byte_size(Src)),
    C = sb_payload:copy(Src, 66),
    ?assertEqual(B, byte_size(C)),
    ?assertEqual(B, binary:referenced_byte_size(C)),
    ?assertEqual(66, binary:first(C)),
    ?assertEqual(binary:part(Src, 1, B - 1), binary:part(C, 1, B - 1)),
    ?assert(sb_payload:check(C, B, 66)),
    ?assertEqual(<<66>>, sb_payload:copy(<<65>>, 66)).
