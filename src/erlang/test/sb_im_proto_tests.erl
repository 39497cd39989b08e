%% The im wire format (sb_im_proto): parsing, nick and channel rules, numerics, line
%% splitting with the 512-byte limit.
-module(sb_im_proto_tests).
-include_lib("eunit/include/eunit.hrl").

limits() ->
    #{server_name => <<"irc.serverbench">>, line_max_bytes => 512, nick_max_chars => 9,
      channel_max_chars => 50}.

parse_test_() ->
    [?_assertEqual({<<"PRIVMSG">>, [<<"bob">>, <<"hello there">>]}, sb_im_proto:parse(<<"privmsg bob :hello there">>)),
     ?_assertEqual({<<"NICK">>, [<<"al">>]}, sb_im_proto:parse(<<":al!a@h NICK al">>)),
     ?_assertEqual({<<"USER">>, [<<"a">>, <<"0">>, <<"*">>, <<"A B">>]}, sb_im_proto:parse(<<"USER a 0 * :A B">>)),
     ?_assertEqual({<<"PRIVMSG">>, [<<"bob">>, <<>>]}, sb_im_proto:parse(<<"PRIVMSG bob :">>)),
     ?_assertEqual({<<>>, []}, sb_im_proto:parse(<<"   ">>)),
     ?_assertEqual(error, sb_im_proto:parse(<<":prefix">>)),
     ?_assertEqual(error, sb_im_proto:parse(<<":prefix   ">>))].

fifteen_params_test() ->
    Line = iolist_to_binary(["CMD", [[" p", integer_to_list(I)] || I <- lists:seq(1, 16)]]),
    {<<"CMD">>, Ps} = sb_im_proto:parse(Line),
    ?assertEqual(15, length(Ps)),
    ?assertEqual(<<"p15 p16">>, lists:last(Ps)).

nick_test_() ->
    L = limits(),
    [?_assert(sb_im_proto:valid_nick(<<"c1z">>, L)),
     ?_assert(sb_im_proto:valid_nick(<<"[a]-b">>, L)),
     ?_assert(sb_im_proto:valid_nick(<<"abcdefghi">>, L)),
     ?_assertNot(sb_im_proto:valid_nick(<<"abcdefghij">>, L)),
     ?_assertNot(sb_im_proto:valid_nick(<<"1abc">>, L)),
     ?_assertNot(sb_im_proto:valid_nick(<<"-abc">>, L)),
     ?_assertNot(sb_im_proto:valid_nick(<<"a b">>, L)),
     ?_assertNot(sb_im_proto:valid_nick(<<>>, L))].

channel_test_() ->
    L = limits(),
    [?_assert(sb_im_proto:valid_channel(<<"#c">>, L)),
     ?_assertNot(sb_im_proto:valid_channel(<<"#">>, L)),
     ?_assertNot(sb_im_proto:valid_channel(<<"c">>, L)),
     ?_assertNot(sb_im_proto:valid_channel(<<"#a,b">>, L)),
     ?_assertNot(sb_im_proto:valid_channel(<<$#, (binary:copy(<<"x">>, 50))/binary>>, L))].

fold_test() -> ?assertEqual(<<"abc[]">>, sb_im_proto:fold(<<"AbC[]">>)).

numeric_test_() ->
    L = limits(),
    [?_assertEqual(<<":irc.serverbench 001 al :Welcome">>,
                   strip(sb_im_proto:numeric(1, <<"al">>, [<<"Welcome">>], L))),
     ?_assertEqual(<<":irc.serverbench 421 * FOO :Unknown command">>,
                   strip(sb_im_proto:numeric(421, <<"*">>, [<<"FOO">>, <<"Unknown command">>], L))),
     ?_assertEqual(<<":a!u@127.0.0.1 JOIN #c">>, strip(sb_im_proto:from_user(<<"a!u@127.0.0.1">>, <<"JOIN">>, [<<"#c">>], none)))].

strip(IoData) ->
    B = iolist_to_binary(IoData),
    <<Body:(byte_size(B) - 2)/binary, "\r\n">> = B,
    Body.

split_test_() ->
    Max = 512,
    Long = binary:copy(<<"x">>, 511),
    [?_assertEqual({[{line, <<"A">>}, {line, <<"B">>}], <<"C">>, false},
                   sb_im_proto:split_lines(<<"A\r\nB\nC">>, false, Max)),
     %% 510 bytes + CRLF = 512: fits; 511 + CRLF: too long
     ?_assertEqual({[{line, binary:copy(<<"x">>, 510)}], <<>>, false},
                   sb_im_proto:split_lines(<<(binary:copy(<<"x">>, 510))/binary, "\r\n">>, false, Max)),
     ?_assertEqual({[too_long], <<>>, false}, sb_im_proto:split_lines(<<Long/binary, "\r\n">>, false, Max)),
     %% a line still without its end but already too long is dropped as it comes, then answered once
     ?_assertEqual({[], <<>>, true}, sb_im_proto:split_lines(<<Long/binary, "x">>, false, Max)),
     ?_assertEqual({[too_long, {line, <<"NEXT">>}], <<>>, false},
                   sb_im_proto:split_lines(<<"tail\r\nNEXT\r\n">>, true, Max))].

%% Commands are upper-cased in ASCII only: a-z mapped, every other byte (UTF-8 too) kept.
upper_test_() ->
    [?_assertEqual(<<"PRIVMSG">>, sb_im_proto:upper(<<"PRIVMSG">>)),
     ?_assertEqual(<<"PRIVMSG">>, sb_im_proto:upper(<<"PrivMsg">>)),
     ?_assertEqual(<<"X[]{}1", 16#c3, 16#a9>>, sb_im_proto:upper(<<"x[]{}1", 16#c3, 16#a9>>)),
     ?_assertEqual({<<"JOIN">>, [<<"#c">>]}, sb_im_proto:parse(<<"join #c">>))].
