%% @doc The commands of the IRC subset (docs/im.md "The protocol"), run inside a
%% connection's process (sb_im_conn) on its state map. Replies are queued in order on the
%% connection's send queue (sb_im_conn:send/2); the wire format is sb_im_proto's, the
%% shared processes sb_im_registry's, sb_im_session's and sb_im_channel's.
%%
%% Sessions and channels are looked up in their tables for every message, not cached in
%% the connection: an incarnation chaos killed has a successor with another pid. An entry
%% marked `restarting` is waited for (sb_im_registry:await/2).
-module(sb_im_cmd).
-export([lines/2, prefix/1, chan_call/4]).

-define(AWAIT_TRIES, 1000). % 1 ms each: a restart takes far less
-define(PROBE_MS, 500). % how long a NICK waits to learn whether its holder has gone

%% --- reading lines ------------------------------------------------------------------
-spec lines(binary(), map()) -> {continue, map()} | {quit, binary(), map()}.
lines(Data, #{buf := Buf, discarding := D, ctx := #{limits := #{line_max_bytes := Max}}} = S) ->
    {Items, Rest, D1} = sb_im_proto:split_lines(<<Buf/binary, Data/binary>>, D, Max),
    run(Items, S#{buf := Rest, discarding := D1}).

run([], S) -> {continue, S};
run([too_long | Rest], S) ->
    sb_im_conn:count(S, bad_lines),
    run(Rest, numeric(417, [<<"Input line was too long">>], S));
run([{line, Line} | Rest], S) ->
    case sb_im_proto:parse(Line) of
        error ->
            sb_im_conn:count(S, bad_lines),
            run(Rest, S);
        {Cmd, Params} ->
            case command(Cmd, Params, S) of
                {quit, Reason, S1} -> {quit, Reason, S1};
                {Answer, S1} ->
                    _ = Answer =:= error andalso sb_im_conn:count(S1, bad_lines),
                    run(Rest, S1)
            end
    end.

%% Each command returns {ok | error, State} (error: answered with an error numeric) or
%% {quit, Reason, State}.
command(<<>>, _, S) -> {ok, S};
command(<<"PONG">>, _, S) -> {ok, S};
command(<<"NICK">>, P, S) -> nick(P, S);
command(<<"USER">>, P, S) -> user(P, S);
command(<<"QUIT">>, P, S) ->
    Reason = case P of [R | _] when R =/= <<>> -> R; _ -> <<"Client Quit">> end,
    {quit, Reason, send(<<"ERROR :Closing Link\r\n">>, S)};
command(Cmd, P, S) when Cmd =:= <<"PING">>; Cmd =:= <<"PRIVMSG">>; Cmd =:= <<"JOIN">>;
                        Cmd =:= <<"PART">>; Cmd =:= <<"MEMORY">> ->
    case maps:get(registered, S) of
        false -> {error, numeric(451, [<<"You have not registered">>], S)};
        true -> registered(Cmd, P, S)
    end;
command(_, _, #{registered := false} = S) -> {error, numeric(451, [<<"You have not registered">>], S)};
command(Cmd, _, S) -> {error, numeric(421, [Cmd, <<"Unknown command">>], S)}.

registered(<<"PING">>, [], S) -> {error, numeric(409, [<<"No origin specified">>], S)};
registered(<<"PING">>, [Token | _], #{ctx := #{limits := #{server_name := N}}} = S) ->
    {ok, send(sb_im_proto:from_user(N, <<"PONG">>, [N], Token), S)};
registered(<<"PRIVMSG">>, P, S) -> privmsg(P, S);
registered(<<"JOIN">>, P, S) -> join(P, S);
registered(<<"PART">>, P, S) -> part(P, S);
registered(<<"MEMORY">>, _, S) -> {ok, memory(S)}.

%% MEMORY (outside RFC 2812, for measurement; docs/im.md): live memory after a full
%% collection of every process, answered and kept for the record's live_bytes.
memory(#{ctx := #{counters := C, limits := #{server_name := Server}}, nick := Nick} = S) ->
    _ = [erlang:garbage_collect(P) || P <- erlang:processes()],
    Bytes = erlang:memory(total),
    atomics:put(C, sb_im:slot(live_bytes), Bytes),
    send([$:, Server, <<" NOTICE ">>, Nick, <<" :live_bytes ">>, integer_to_binary(Bytes), <<"\r\n">>], S).

%% --- registration -------------------------------------------------------------------
nick([], S) -> {error, numeric(431, [<<"No nickname given">>], S)};
nick([<<>> | _], S) -> {error, numeric(431, [<<"No nickname given">>], S)};
nick([Nick | _], #{ctx := #{limits := L, nicks := T, conns := CT, registry := Reg}, key := Old} = S) ->
    case sb_im_proto:valid_nick(Nick, L) of
        false -> {error, numeric(432, [Nick, <<"Erroneous nickname">>], S)};
        true ->
            Key = sb_im_proto:fold(Nick),
            Reg0 = maps:get(registered, S),
            Claimed = case Key =:= Old of
                          true -> ets:insert(T, {Key, self(), Nick, Reg0});
                          false -> claim(T, {Key, self(), Nick, Reg0})
                      end,
            case Claimed of
                false -> {error, numeric(433, [Nick, <<"Nickname is already in use">>], S)};
                true ->
                    _ = Old =/= none andalso Old =/= Key andalso
                        ets:select_delete(T, [{{Old, self(), '_', '_'}, [], [true]}]),
                    true = ets:update_element(CT, self(), {2, Key}),
                    case Reg0 of
                        false -> {ok, try_register(S#{nick := Nick, key := Key})};
                        true ->
                            _ = Old =/= Key andalso sb_im_registry:leave(Reg, self()),
                            Line = sb_im_proto:from_user(prefix(S), <<"NICK">>, [], Nick),
                            S1 = with_prefix(S#{nick := Nick, key := Key}),
                            Peers = lists:usort(lists:append(
                                                  [chan_call(K, fun(Ch) -> sb_im_channel:peers(Ch, self(), Nick) end, [], S1)
                                                   || K <- maps:keys(maps:get(channels, S1))])),
                            [Peer ! {send, Line} || Peer <- Peers],
                            {ok, send(Line, S1)}
                    end
            end
    end.

%% Takes the nick if it is free. If it is held, the holder is asked whether it is still
%% here: a client that dropped its connection and reconnects at once finds its old
%% connection holding the nick until that process has read the EOF that is already in its
%% mailbox, ahead of this question; it frees the nick before it could answer, so the
%% nick is granted (docs/im.md: nick free on close). A holder that answers keeps it.
claim(T, {Key, _, _, _} = Entry) ->
    case ets:insert_new(T, Entry) of
        true -> true;
        false ->
            case ets:lookup(T, Key) of
                [{Key, Holder, _, _}] ->
                    Ref = erlang:monitor(process, Holder),
                    Holder ! {nick_probe, self(), Ref},
                    R = probe_wait(T, Entry, Ref, erlang:monotonic_time(millisecond) + ?PROBE_MS),
                    erlang:demonitor(Ref, [flush]),
                    R;
                [] -> ets:insert_new(T, Entry)
            end
    end.

probe_wait(T, Entry, Ref, Deadline) ->
    receive
        {nick_held, Ref} -> ets:insert_new(T, Entry);
        {nick_probe, From, R} -> % answered while waiting: two probing each other never wait
            From ! {nick_held, R},
            probe_wait(T, Entry, Ref, Deadline);
        {'DOWN', Ref, process, _, _} -> ets:insert_new(T, Entry) orelse free_dead(T, Entry)
    after 2 ->
            ets:insert_new(T, Entry) orelse
                (erlang:monotonic_time(millisecond) < Deadline andalso probe_wait(T, Entry, Ref, Deadline))
    end.

%% The holder died without freeing the nick (killed): free it here, as the registry's
%% monitor is about to.
free_dead(T, {Key, _, _, _} = Entry) ->
    case ets:lookup(T, Key) of
        [{Key, Holder, _, _}] when Holder =/= self() ->
            _ = is_process_alive(Holder) orelse ets:select_delete(T, [{{Key, Holder, '_', '_'}, [], [true]}]),
            ets:insert_new(T, Entry);
        _ -> ets:insert_new(T, Entry)
    end.

user(_, #{registered := true} = S) -> {error, numeric(462, [<<"You may not reregister">>], S)};
user(P, S) when length(P) < 4 -> {error, numeric(461, [<<"USER">>, <<"Not enough parameters">>], S)};
user([User | _], S) -> {ok, try_register(S#{user := User})}.

try_register(#{nick := none} = S) -> S;
try_register(#{user := none} = S) -> S;
try_register(#{ctx := #{nicks := T, conns := CT, counters := C}, key := Key} = S) ->
    true = ets:update_element(T, Key, {4, true}),
    true = ets:update_element(CT, self(), {3, true}),
    Now = atomics:add_get(C, sb_im:slot(registered_now), 1),
    raise_max(C, Now),
    S1 = with_prefix(S#{registered := true}),
    numeric(1, [<<"Welcome to the serverbench IRC network ", (prefix(S1))/binary>>], S1).

raise_max(C, Now) ->
    Slot = sb_im:slot(clients_registered_max),
    Max = atomics:get(C, Slot),
    case Now > Max andalso atomics:compare_exchange(C, Slot, Max, Now) =/= ok of
        true -> raise_max(C, Now);
        false -> ok
    end.

%% --- messages -----------------------------------------------------------------------
privmsg([], S) -> {error, numeric(411, [<<"No recipient given (PRIVMSG)">>], S)};
privmsg([<<>> | _], S) -> {error, numeric(411, [<<"No recipient given (PRIVMSG)">>], S)};
privmsg([_], S) -> {error, numeric(412, [<<"No text to send">>], S)};
privmsg([_, <<>> | _], S) -> {error, numeric(412, [<<"No text to send">>], S)};
privmsg([Targets, Text | _], S) ->
    each(fun(T, Acc) -> privmsg_one(T, Text, Acc) end, S, Targets).

%% Runs F on each comma-separated target, in order; error if any answered with one.
each(F, S, Targets) ->
    lists:foldl(fun(T, {Ans, Acc}) ->
                        {A, Acc1} = F(T, Acc),
                        {case Ans of error -> error; _ -> A end, Acc1}
                end, {ok, S}, binary:split(Targets, <<",">>, [global])).

privmsg_one(<<$#, _/binary>> = Name, Text, #{ctx := #{channels := CT}} = S) ->
    Key = sb_im_proto:fold(Name),
    case maps:get(channels, S) of
        #{Key := Shown} ->
            Line = line(<<"PRIVMSG">>, Shown, Text, S),
            chan_call(Key, fun(Ch) -> sb_im_channel:msg(Ch, self(), Line) end, ok, S),
            {ok, S};
        #{} ->
            case ets:member(CT, Key) of
                true -> {error, numeric(404, [Name, <<"Cannot send to channel">>], S)};
                false -> {error, numeric(403, [Name, <<"No such channel">>], S)}
            end
    end;
privmsg_one(Target, Text, #{ctx := #{nicks := NT, sessions := ST, registry := Reg}, key := From} = S) ->
    To = sb_im_proto:fold(Target),
    case ets:lookup(NT, To) of
        [{To, ToPid, ToNick, true}] ->
            Line = line(<<"PRIVMSG">>, ToNick, Text, S),
            Pair = if From =< To -> {From, To}; true -> {To, From} end,
            Self = self(),
            Find = fun() ->
                           case ets:lookup(ST, Pair) of
                               [{Pair, P, A, B}] when {A, B} =:= {Self, ToPid}; {A, B} =:= {ToPid, Self} ->
                                   if is_pid(P) -> {ok, P}; P =:= restarting -> retry;
                                      true -> sb_im_registry:session(Reg, Pair, Self, ToPid)
                                   end;
                               _ -> sb_im_registry:session(Reg, Pair, Self, ToPid)
                           end
                   end,
            case sb_im_registry:await(Find, ?AWAIT_TRIES) of
                {ok, SPid} -> SPid ! {route, ToPid, Line}, {ok, S};
                retry -> {ok, S}; % never restarted: lost with the killed session
                {error, _} -> {error, numeric(401, [Target, <<"No such nick/channel">>], S)}
            end;
        _ -> {error, numeric(401, [Target, <<"No such nick/channel">>], S)}
    end.

%% --- channels -----------------------------------------------------------------------
join([], S) -> {error, numeric(461, [<<"JOIN">>, <<"Not enough parameters">>], S)};
join([<<>> | _], S) -> {error, numeric(461, [<<"JOIN">>, <<"Not enough parameters">>], S)};
join([Names | _], S) -> each(fun join_one/2, S, Names).

%% The channel's lines for the joiner (echo, 353, 366) are queued before the next
%% channel of the same JOIN is asked, so one command's replies keep their order.
join_one(Name, #{ctx := #{limits := L}, nick := Nick} = S) ->
    Key = sb_im_proto:fold(Name),
    case {sb_im_proto:valid_channel(Name, L), maps:get(channels, S)} of
        {false, _} -> {error, numeric(403, [Name, <<"No such channel">>], S)};
        {true, #{Key := _}} -> {ok, S};
        {true, Chans} ->
            JoinLine = sb_im_proto:from_user(prefix(S), <<"JOIN">>, [Name], none),
            Join = fun(Ch) -> sb_im_channel:join(Ch, self(), Nick, JoinLine) end,
            Lines = join_lines(Key, Name, Join, S, 3),
            case Lines of
                gone -> {ok, S};
                _ -> {ok, sb_im_conn:sends(Lines, S#{channels := Chans#{Key => Name}})}
            end
    end.

%% gone: no such channel, or it ended (its last member left) just now: the registry
%% starts one (its pid is in the table when the call returns), and it is asked again.
join_lines(Key, Name, Join, #{ctx := #{registry := Reg}} = S, Tries) ->
    case chan_call(Key, Join, gone, S) of
        gone when Tries > 0 ->
            _ = sb_im_registry:channel(Reg, Key, Name),
            join_lines(Key, Name, Join, S, Tries - 1);
        Lines -> Lines
    end.

part([], S) -> {error, numeric(461, [<<"PART">>, <<"Not enough parameters">>], S)};
part([<<>> | _], S) -> {error, numeric(461, [<<"PART">>, <<"Not enough parameters">>], S)};
part([Names | Rest], S) ->
    Reason = case Rest of [R | _] -> R; [] -> none end,
    each(fun(Name, Acc) -> part_one(Name, Reason, Acc) end, S, Names).

part_one(Name, Reason, #{ctx := #{channels := CT}} = S) ->
    Key = sb_im_proto:fold(Name),
    case maps:get(channels, S) of
        #{Key := Shown} = Chans ->
            Line = sb_im_proto:from_user(prefix(S), <<"PART">>, [Shown], Reason),
            Lines = chan_call(Key, fun(Ch) -> sb_im_channel:part(Ch, self(), Line) end, [], S),
            {ok, sb_im_conn:sends(Lines, S#{channels := maps:remove(Key, Chans)})};
        #{} ->
            case ets:member(CT, Key) of
                true -> {error, numeric(442, [Name, <<"You're not on that channel">>], S)};
                false -> {error, numeric(403, [Name, <<"No such channel">>], S)}
            end
    end.

%% F(ChannelPid) on the channel's live incarnation: one being restarted is waited for, a
%% call that dies with its callee (chaos killed it) is made again to the successor;
%% Default if the channel does not exist (or ended: its last member left).
-spec chan_call(binary(), fun((pid()) -> T), T, map()) -> T.
chan_call(Key, F, Default, #{ctx := #{channels := CT}}) ->
    R = sb_im_registry:await(
          fun() ->
                  case ets:lookup(CT, Key) of
                      [{Key, P}] when is_pid(P) ->
                          try F(P)
                          catch exit:{Why, _} when Why =:= noproc; Why =:= normal; Why =:= shutdown;
                                                   Why =:= killed -> retry
                          end;
                      [{Key, _}] -> retry; % restarting, or being started
                      [] -> {default}
                  end
          end, ?AWAIT_TRIES),
    case R of
        {default} -> Default;
        retry -> Default;
        _ -> R
    end.

%% --- replies ------------------------------------------------------------------------
%% nick!user@127.0.0.1, made when it changes (registration, NICK), not per line.
-spec prefix(map()) -> binary().
prefix(#{prefix := P}) -> P.

with_prefix(#{nick := N, user := U} = S) -> S#{prefix => <<N/binary, $!, U/binary, "@127.0.0.1">>}.

%% A relayed line as one binary: a message (to a session and on to the receiver, or to a
%% channel and each member) then carries one reference-counted binary (> 64 bytes) instead
%% of an iolist of cells and sub-binaries copied at every hop, and does not keep the whole
%% packet it was read from alive.
line(Cmd, Target, Text, S) ->
    iolist_to_binary(sb_im_proto:from_user(prefix(S), Cmd, [Target], Text)).

numeric(Code, Params, #{ctx := #{limits := L}, nick := Nick} = S) ->
    Target = case Nick of none -> <<"*">>; _ -> Nick end,
    send(sb_im_proto:numeric(Code, Target, Params, L), S).

send(Line, S) -> sb_im_conn:send(Line, S).
