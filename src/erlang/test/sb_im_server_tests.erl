%% The im server's shared behaviours (docs/im.md), on the built escript over TCP: MEMORY,
%% chaos against connections and channels (the kill, the clean-up from the registry's
%% monitor, the channel's membership recovered), the nick free at once after a close,
%% one command's replies in order, and an unbounded session mailbox.
-module(sb_im_server_tests).
-include_lib("eunit/include/eunit.hrl").

-define(NAME, "irc.serverbench").
-define(assertInfo(E, Info), ?assertEqual({true, Info}, {E, Info})).

%% --- the server as an OS process, told to stop on its stdin --------------------------
start(Args) ->
    Cmd = lists:flatten(["exec env ERL_FLAGS='+S 1:1' ERL_CRASH_DUMP_BYTES=0 '", sb_test_util:escript(),
                         "' im server --port 0 --idle-timeout-s 60", [[" ", A] || A <- Args], " 2>/dev/null"]),
    P = open_port({spawn_executable, "/bin/sh"}, [{args, ["-c", Cmd]}, binary, {line, 1 bsl 20},
                                                   exit_status, use_stdio]),
    Line = port_line(P),
    {P, maps:get(<<"port">>, sb_json_decode:decode(Line))}.

stop({P, _}) ->
    true = port_command(P, <<"stop\n">>),
    R = sb_json_decode:decode(port_line(P)),
    receive {P, {exit_status, Code}} -> ?assertEqual(0, Code) after 10000 -> error(no_exit) end,
    maps:get(<<"metrics">>, R).

port_line(P) ->
    receive {P, {data, {eol, L}}} -> L
    after 10000 -> error(no_line)
    end.

%% --- a client ----------------------------------------------------------------------
connect({_, Port}) ->
    {ok, S} = gen_tcp:connect({127, 0, 0, 1}, Port, [binary, {packet, line}, {active, false}, {nodelay, true}]),
    S.

login(Srv, Nick) ->
    S = connect(Srv),
    ok = say(S, ["NICK ", Nick, "\r\nUSER u 0 * :x"]),
    expect(S, [":", ?NAME, " 001 ", Nick, " "]),
    S.

say(S, Line) -> gen_tcp:send(S, [Line, "\r\n"]).

%% A login while chaos kills connections: a connection killed before its 001 (under load
%% a login can outlast the interval) is tried again; a 433 fails, since a killed
%% connection's nick must be free by the time its client sees the close.
login_despite_chaos(Srv, Nick) -> login_despite_chaos(Srv, Nick, 20).

login_despite_chaos(_, Nick, 0) -> error({never_welcomed, Nick});
login_despite_chaos(Srv, Nick, Tries) ->
    S = connect(Srv),
    _ = say(S, ["NICK ", Nick, "\r\nUSER u 0 * :x"]),
    case welcomed(S, iolist_to_binary([":", ?NAME, " 001 ", Nick, " "])) of
        true -> S;
        false -> gen_tcp:close(S), login_despite_chaos(Srv, Nick, Tries - 1)
    end.

welcomed(S, Welcome) ->
    case gen_tcp:recv(S, 0, 5000) of
        {ok, <<Welcome:(byte_size(Welcome))/binary, _/binary>>} -> true;
        {ok, <<":", ?NAME, " 433 ", _/binary>> = L} -> error({nick_in_use, L});
        {ok, _} -> welcomed(S, Welcome);
        {error, closed} -> false;
        {error, econnreset} -> false;
        {error, Why} -> error({Why, waiting_for, Welcome})
    end.

%% The next line that starts with Prefix (others skipped); fails after 5 s.
expect(S, Prefix) ->
    P = iolist_to_binary(Prefix),
    case gen_tcp:recv(S, 0, 5000) of
        {ok, <<P:(byte_size(P))/binary, _/binary>> = L} -> L;
        {ok, _} -> expect(S, Prefix);
        {error, Why} -> error({Why, waiting_for, P})
    end.

next(S) ->
    {ok, L} = gen_tcp:recv(S, 0, 5000),
    L.

closed(S) ->
    case gen_tcp:recv(S, 0, 5000) of
        {error, closed} -> true;
        {error, econnreset} -> true;
        {ok, _} -> closed(S);
        {error, timeout} -> false
    end.

%% --- tests -------------------------------------------------------------------------
memory_test_() ->
    {timeout, 60, fun() ->
        Srv = start([]),
        A = login(Srv, "mem"),
        ok = say(A, "MEMORY"),
        L = expect(A, [":", ?NAME, " NOTICE mem :live_bytes "]),
        [_, N] = binary:split(string:trim(L), <<"live_bytes ">>),
        ?assert(binary_to_integer(N) > 1000000),
        M = stop(Srv),
        ?assertEqual(binary_to_integer(N), maps:get(<<"live_bytes">>, M))
    end}.

no_memory_no_live_bytes_test_() ->
    {timeout, 60, fun() ->
        Srv = start([]),
        M = stop(Srv),
        ?assertEqual(null, maps:get(<<"live_bytes">>, M)),
        [?assertEqual(0, maps:get(K, M)) || K <- [<<"channels_killed">>, <<"channels_restarted">>,
                                                 <<"connections_killed">>, <<"chaos_dropped_messages">>]]
    end}.

%% Chaos kills connections: each victim's socket closes (EOF) and its nick is free at
%% once for a new client (never 433); the registry's monitor did the clean-up (the victim
%% could not).
chaos_connection_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--chaos-interval-ms", "20", "--chaos-target", "connection"]),
        Victims = [login_despite_chaos(Srv, "v" ++ integer_to_list(I)) || I <- lists:seq(1, 3)],
        [?assert(closed(V)) || V <- Victims],
        Again = [login_despite_chaos(Srv, "v" ++ integer_to_list(I)) || I <- lists:seq(1, 3)],
        M = stop(Srv),
        ?assert(maps:get(<<"connections_killed">>, M) >= 3),
        ?assertEqual(0, maps:get(<<"sessions_killed">>, M)),
        [gen_tcp:close(S) || S <- Again]
    end}.

%% Chaos kills the channel again and again; its successors get the membership back from
%% the members table, so a member's PRIVMSG still reaches the other.
chaos_channel_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--chaos-interval-ms", "10", "--chaos-target", "channel"]),
        A = login(Srv, "ca"),
        B = login(Srv, "cb"),
        ok = say(A, "JOIN #c"),
        expect(A, [":", ?NAME, " 366 ca #c "]),
        ok = say(B, "JOIN #c"),
        expect(B, [":", ?NAME, " 366 cb #c "]),
        expect(A, ":cb!u@127.0.0.1 JOIN #c"),
        timer:sleep(200), % about 20 kills
        ok = say(A, "PRIVMSG #c :after the kills"),
        ?assertEqual(<<":ca!u@127.0.0.1 PRIVMSG #c :after the kills\r\n">>, next(B)),
        M = stop(Srv),
        ?assert(maps:get(<<"channels_killed">>, M) >= 5),
        ?assertEqual(maps:get(<<"channels_killed">>, M), maps:get(<<"channels_restarted">>, M))
    end}.

%% --chaos-pick queued against sessions: the record counts kills and restarts (a
%% session forwards faster than its senders fill it, so its mailbox is mostly empty).
chaos_queued_sessions_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--chaos-interval-ms", "5", "--chaos-pick", "queued"]),
        A = login(Srv, "qa"),
        B = login(Srv, "qb"),
        N = 20000,
        ok = gen_tcp:send(A, [["PRIVMSG qb :", integer_to_list(I), "\r\n"] || I <- lists:seq(1, N)]),
        Got = count_until_quiet(B, 0),
        M = stop(Srv),
        Killed = maps:get(<<"sessions_killed">>, M),
        ?assert(Killed >= 1),
        ?assertEqual(Killed, maps:get(<<"sessions_restarted">>, M)),
        ?assert(Got + maps:get(<<"chaos_dropped_messages">>, M) =< N)
    end}.

%% A connection killed with lines queued for its client (which does not read) counts
%% them in chaos_dropped_messages: 8 MB sent to it is more than the socket buffers take.
%% The first kill comes after a second, when the burst has been routed (the PONG).
chaos_connection_unsent_lines_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--chaos-interval-ms", "1000", "--chaos-target", "connection",
                     "--sendq-lines", "1000000"]),
        A = login(Srv, "ua"),
        C = login(Srv, "uc"),
        Text = binary:copy(<<"x">>, 400),
        ok = gen_tcp:send(A, [[["PRIVMSG uc :", Text, "\r\n"] || _ <- lists:seq(1, 20000)], "PING :done\r\n"]),
        expect(A, [":", ?NAME, " PONG ", ?NAME, " :done"]),
        ?assert(closed(A)),
        timer:sleep(1100), % both killed by now (one a second, 2 connections)
        M = stop(Srv),
        ?assertEqual(2, maps:get(<<"connections_killed">>, M)),
        ?assertInfo(maps:get(<<"chaos_dropped_messages">>, M) > 0, M),
        gen_tcp:close(C)
    end}.

count_until_quiet(S, N) ->
    case gen_tcp:recv(S, 0, 1000) of
        {ok, _} -> count_until_quiet(S, N + 1);
        {error, timeout} -> N
    end.

%% A client that drops its connection and reconnects at once with the same nick gets
%% 001, 20 times out of 20.
reconnect_same_nick_test_() ->
    {timeout, 60, fun() ->
        Srv = start([]),
        lists:foreach(fun(_) -> S = login(Srv, "same"), ok = gen_tcp:close(S) end, lists:seq(1, 20)),
        stop(Srv)
    end}.

%% A killed member leaves its channel (the channel's monitor): a client joining after
%% the kill finds a channel without it (kills come every 200 ms: the joiner has time).
killed_member_leaves_channel_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--chaos-interval-ms", "200", "--chaos-target", "connection"]),
        A = login(Srv, "ka"),
        ok = say(A, "JOIN #k"),
        expect(A, [":", ?NAME, " 366 ka #k "]),
        ?assert(closed(A)),
        B = login(Srv, "kb"),
        ok = say(B, "JOIN #k"),
        ?assertEqual(<<":kb!u@127.0.0.1 JOIN #k\r\n">>, next(B)),
        ?assertEqual(<<":", ?NAME, " 353 kb = #k :kb\r\n">>, next(B)),
        stop(Srv)
    end}.

%% JOIN #a,#b answers #a's JOIN, 353 and 366 before #b's.
join_replies_in_order_test_() ->
    {timeout, 60, fun() ->
        Srv = start([]),
        A = login(Srv, "oa"),
        ok = say(A, "JOIN #a,#b"),
        Lines = [next(A) || _ <- lists:seq(1, 6)],
        ?assertEqual([<<":oa!u@127.0.0.1 JOIN #a\r\n">>, <<":", ?NAME, " 353 oa = #a :oa\r\n">>,
                      <<":", ?NAME, " 366 oa #a :End of NAMES list\r\n">>,
                      <<":oa!u@127.0.0.1 JOIN #b\r\n">>, <<":", ?NAME, " 353 oa = #b :oa\r\n">>,
                      <<":", ?NAME, " 366 oa #b :End of NAMES list\r\n">>], Lines),
        stop(Srv)
    end}.

%% Mailboxes are unbounded: a burst of 20,000 one-to-one messages (far over any old
%% bound) to one session arrives whole and in order at a reading client.
burst_through_one_session_test_() ->
    {timeout, 60, fun() ->
        Srv = start(["--sendq-lines", "1000000"]),
        A = login(Srv, "ba"),
        B = login(Srv, "bb"),
        N = 20000,
        ok = gen_tcp:send(A, [["PRIVMSG bb :", integer_to_list(I), "\r\n"] || I <- lists:seq(1, N)]),
        lists:foreach(fun(I) ->
                              ?assertEqual(iolist_to_binary([":ba!u@127.0.0.1 PRIVMSG bb :", integer_to_list(I), "\r\n"]),
                                           next(B))
                      end, lists:seq(1, N)),
        M = stop(Srv),
        ?assertEqual(N, maps:get(<<"messages_routed">>, M))
    end}.
