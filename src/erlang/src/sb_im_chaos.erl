%% @doc The im server's chaos monkey (docs/im.md, as RD-IM's rhesus): every
%% --chaos-interval-ms it kills one live process of --chaos-target (session, channel,
%% connection, or any of them uniformly), drawn with --seed's stream; --chaos-pick queued
%% draws only among those whose mailbox is not empty (all of them when none is) and holds
%% the victim until the next tick: suspended but still registered, so that what is sent to
%% it meanwhile waits in its mailbox, which the kill then discards. Without the hold a
%% server that keeps up has no queue to lose at a kill, and the positive control that
%% must lose messages could not (docs/im.md, Chaos).
%%
%% The kill is the act every server shares: the victim leaves the registry at once (a
%% session's or channel's entry is marked `restarting`, so new messages wait for its
%% successor; a connection's nick is freed), then exit(Victim, kill): it handles nothing
%% after what it is doing, and its mailbox goes with it. What was queued -- its mailbox
%% length just before the kill, plus a connection's unsent lines -- is counted in
%% chaos_dropped_messages. The supervisors restart a session or channel as a fresh
%% process (sb_im_sup); the registry's monitor cleans up after a connection
%% (sb_im_registry), whose socket, owned by the dead process, closes.
-module(sb_im_chaos).
-export([start/2, sendq_key/0]).

-type opts() :: #{interval_ms := pos_integer(), seed := non_neg_integer(),
                  target := session | channel | connection | any, pick := random | queued}.

%% The process-dictionary key under which a connection keeps its count of unsent lines
%% (sb_im_conn), read here from outside: the victim cannot be asked once it is chosen.
-spec sendq_key() -> atom().
sendq_key() -> '$sb_im_sendq'.

%% Linked to the caller (sb_im's main process). High priority: a tick must not wait
%% behind a loaded server's connection processes, or the kill rate would drift.
-spec start(map(), opts()) -> pid().
start(Ctx, #{seed := Seed} = Opts) ->
    spawn_opt(fun() -> loop(Ctx, Opts, rand:seed_s(exsss, Seed), none) end, [link, {priority, high}]).

%% Held: the victim picked (and suspended) at the last tick under pick queued, or none.
loop(Ctx, #{interval_ms := Ms, target := Target, pick := Pick} = Opts, Rand, Held) ->
    receive after Ms -> ok end,
    case Pick of
        random ->
            case draw(candidates(Target, Ctx), Rand) of
                {none, Rand1} -> loop(Ctx, Opts, Rand1, none);
                {Victim, Rand1} -> kill(Victim, Ctx), loop(Ctx, Opts, Rand1, none)
            end;
        queued ->
            _ = Held =/= none andalso release(Held, kill(Held, Ctx)),
            Live = candidates(Target, Ctx),
            Pool = case [V || {_, P, _} = V <- Live, queue_len(P) > 0] of
                       [] -> Live;
                       Busy -> Busy
                   end,
            {Next, Rand1} = draw(Pool, Rand),
            _ = Next =/= none andalso hold(Next),
            loop(Ctx, Opts, Rand1, Next)
    end.

draw([], Rand) -> {none, Rand};
draw(Pool, Rand) ->
    {I, R} = rand:uniform_s(length(Pool), Rand),
    {lists:nth(I, Pool), R}.

%% A held victim stops taking messages, and what is sent to it waits in its mailbox.
hold({_, P, _}) -> catch erlang:suspend_process(P).

%% A held victim that was not killed (it ended, or its entry was replaced, before the
%% tick) runs again; one that was killed is gone with its suspension.
release({_, P, _}, killed) -> P;
release({_, P, _}, _) -> catch erlang:resume_process(P).

%% {Kind, Pid, Key} of every live process of the target, in pid order (the tables' own
%% order depends on their history, the pids' on creation).
candidates(any, Ctx) ->
    lists:sort(fun by_pid/2, lists:append([candidates(K, Ctx) || K <- [session, channel, connection]]));
candidates(session, #{sessions := T}) ->
    lists:sort(fun by_pid/2, [{session, P, K} || [K, P] <- ets:match(T, {'$1', '$2', '_', '_'}), is_pid(P)]);
candidates(channel, #{channels := T}) ->
    lists:sort(fun by_pid/2, [{channel, P, K} || [K, P] <- ets:match(T, {'$1', '$2'}), is_pid(P)]);
candidates(connection, #{conns := T}) ->
    lists:sort(fun by_pid/2, [{connection, P, {K, Sock}} || [P, K, Sock] <- ets:match(T, {'$1', '$2', '_', '$3'}),
                                                             is_process_alive(P)]).

by_pid({_, A, _}, {_, B, _}) -> A =< B.

queue_len(P) ->
    case erlang:process_info(P, message_queue_len) of
        {message_queue_len, N} -> N;
        undefined -> 0
    end.

kill({session, P, Key}, #{sessions := T, counters := C}) ->
    %% only if the entry still names P (the registry may have ended the session)
    case ets:select_replace(T, [{{Key, P, '$1', '$2'}, [], [{{{const, Key}, restarting, '$1', '$2'}}]}]) of
        1 -> act(P, fun() -> 0 end, C, sessions_killed);
        0 -> missed
    end;
kill({channel, P, Key}, #{channels := T, counters := C}) ->
    case ets:select_replace(T, [{{Key, P}, [], [{{{const, Key}, restarting}}]}]) of
        1 -> act(P, fun() -> 0 end, C, channels_killed);
        0 -> missed
    end;
kill({connection, P, {Key, Sock}}, #{nicks := NT, counters := C}) ->
    case is_process_alive(P) of
        true -> kill_connection(P, Key, Sock, NT, C);
        false -> missed % it ended while held
    end.

kill_connection(P, Key, Sock, NT, C) ->
    _ = Key =/= none andalso ets:select_delete(NT, [{{Key, P, '_', '_'}, [], [true]}]),
    act(P, fun() ->
                   case erlang:process_info(P, dictionary) of
                       {dictionary, D} -> proplists:get_value(sendq_key(), D, 0);
                       undefined -> 0
                   end
           end, C, connections_killed),
    %% The port dies with its owner, but a port still holding output for a client that
    %% does not read would linger (flushing) for ever: killed, its output is dropped and
    %% the client sees the connection end at once.
    exit(Sock, kill),
    killed.

%% Suspended first (the call returns once it is), so that what is counted is what dies
%% with it: with several schedulers the victim would otherwise go on handling its mailbox
%% between the count and the kill's arrival.
act(P, Extra, C, Counter) ->
    _ = (catch erlang:suspend_process(P)),
    Queued = queue_len(P) + Extra(),
    exit(P, kill),
    atomics:add(C, sb_im:slot(Counter), 1),
    atomics:add(C, sb_im:slot(chaos_dropped_messages), Queued),
    killed.
