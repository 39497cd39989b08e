%% @doc One im client connection (docs/im.md): the process sb_sockserver spawns for it
%% owns the socket, reads it ({active, once}), splits lines (at most line_max_bytes with
%% CRLF; a longer one is answered 417 and dropped), runs each command of the IRC subset,
%% and receives {send, Line} from sessions, channels and peers. What it sends goes
%% through a bounded queue (--sendq-lines, counted until written) to a writer process
%% that owns the blocking gen_tcp:send; a client whose queue fills is disconnected
%% ("ERROR :SendQ exceeded", counted): the stated policy, as ircds do.
%%
%% This process never waits on the socket itself: the port of a client that does not
%% read is busy, and a plain send to it suspends the sender until the client reads (for
%% ever, if it never does). So the ERROR line is forced into the port, and every way out
%% closes the socket within ?GRACE_MS (close_socket/2): a plain close of a port that still holds
%% output would wait for the client too, keeping the descriptor.
%%
%% Not split further: the commands share the connection's state map, and each is a few
%% lines; the wire format is sb_im_proto's, the shared processes sb_im_registry's,
%% sb_im_session's and sb_im_channel's.
-module(sb_im_conn).
-export([serve/2]).

-define(GRACE_MS, 1000). % how long the last line (ERROR ...) may take to leave
-define(POLL_MS, 10). % how often a closing socket's port is asked whether it is empty

-spec serve(gen_tcp:socket(), map()) -> ok.
serve(Sock, Ctx) ->
    Self = self(),
    Writer = spawn_link(fun() -> writer(Sock, Self) end),
    process_flag(trap_exit, true),
    ok = inet:setopts(Sock, [{active, once}]),
    S = #{sock => Sock, ctx => Ctx, buf => <<>>, discarding => false, nick => none,
          key => none, user => none, registered => false, channels => #{},
          queue => [], queued => 0, writer => Writer, writing => false},
    loop(S).

loop(#{sock := Sock} = S) ->
    receive
        {tcp, Sock, Data} ->
            case lines(Data, S) of
                {quit, Reason, S1} -> finish(Reason, flush(S1));
                {continue, S1} ->
                    ok = inet:setopts(Sock, [{active, once}]),
                    loop(flush(S1))
            end;
        {tcp_closed, Sock} -> finish(<<"Connection closed">>, S);
        {tcp_error, Sock, _} ->
            count(S, connection_errors),
            finish(<<"Connection closed">>, S);
        {send, Line} ->
            case enqueue(Line, S) of
                {over, S1} -> overflow(S1);
                S1 -> loop(flush(S1))
            end;
        {written, N} ->
            loop(flush(S#{queued := maps:get(queued, S) - N, writing := false}));
        {'EXIT', W, _} when W =:= map_get(writer, S) ->
            count(S, connection_errors),
            finish(<<"Connection closed">>, S);
        {'EXIT', _, shutdown} -> % the server stops: what is queued may leave, within the grace
            Deadline = deadline(),
            #{writer := W} = drain(S, Deadline),
            stop_writer(W),
            close_socket(Sock, Deadline);
        {'EXIT', _, _} -> loop(S)
    end.

%% --- the bounded send queue ---------------------------------------------------------
enqueue(_, #{queued := Q, ctx := #{sendq_lines := Max}} = S) when Q >= Max -> {over, S};
enqueue(Line, #{queue := Queue, queued := Q} = S) -> S#{queue := [Line | Queue], queued := Q + 1}.

%% Hands what is queued to the writer when it is idle (one write for all of it).
flush(#{writing := false, queue := [_ | _] = Queue, writer := W} = S) ->
    W ! {write, lists:reverse(Queue), length(Queue)},
    S#{queue := [], writing := true};
flush(S) -> S.

writer(Sock, Conn) ->
    receive
        {write, Lines, N} ->
            case gen_tcp:send(Sock, Lines) of
                ok -> Conn ! {written, N}, writer(Sock, Conn);
                {error, closed} -> ok;
                {error, Why} -> exit(Why)
            end
    end.

%% The queue is full: the client is counted, gone from its nick, sessions and channels at
%% once, and its socket closed within the grace. The ERROR line is forced in behind what
%% the port holds (a plain send would wait on the busy port); a client that reads again
%% within the grace gets it.
overflow(#{sock := Sock, writer := W} = S) ->
    count(S, sendq_disconnects),
    stop_writer(W), % it is blocked on the client that does not read
    _ = catch erlang:port_command(Sock, <<"ERROR :SendQ exceeded\r\n">>, [force]),
    leave(<<"SendQ exceeded">>, S),
    close_socket(Sock, deadline()).

%% After QUIT or the peer's close: what is queued is written (within the grace), the
%% client leaves its sessions, channels and nick, and the socket is closed.
finish(Reason, #{sock := Sock, writer := W} = S) ->
    Deadline = deadline(),
    S1 = drain(S, Deadline),
    stop_writer(W),
    leave(Reason, S1),
    close_socket(Sock, Deadline).

deadline() -> erlang:monotonic_time(millisecond) + ?GRACE_MS.

drain(#{writing := false, queue := []} = S, _) -> S;
drain(#{writer := W} = S, Deadline) ->
    receive
        {written, N} -> drain(flush(S#{queued := maps:get(queued, S) - N, writing := false}), Deadline);
        {'EXIT', W, _} -> S
    after max(0, Deadline - erlang:monotonic_time(millisecond)) -> S
    end.

stop_writer(W) ->
    unlink(W),
    exit(W, kill).

%% Closes the socket by Deadline whatever the client does: once the port has handed all
%% it holds to the kernel, a plain close (the kernel delivers the rest, as for any closed
%% socket); a port still holding output at the deadline (its client does not read) is
%% killed, which drops that output and frees the descriptor at once.
close_socket(Sock, Deadline) ->
    case erlang:port_info(Sock, queue_size) of
        undefined -> ok; % closed already
        {queue_size, 0} -> _ = gen_tcp:close(Sock), ok;
        {queue_size, _} ->
            case erlang:monotonic_time(millisecond) >= Deadline of
                true ->
                    unlink(Sock),
                    exit(Sock, kill),
                    ok;
                false ->
                    receive after ?POLL_MS -> ok end,
                    close_socket(Sock, Deadline)
            end
    end.

leave(Reason, #{ctx := #{registry := Reg, nicks := Nicks} = Ctx, key := Key} = S) ->
    case maps:get(registered, S) of
        true ->
            sb_im_registry:leave(Reg, self()),
            Line = sb_im_proto:from_user(prefix(S), <<"QUIT">>, [], Reason),
            Peers = lists:usort(lists:append([call_channel(fun() -> sb_im_channel:leave(Ch, self()) end, [])
                                              || {Ch, _} <- maps:values(maps:get(channels, S))])),
            [P ! {send, Line} || P <- Peers, P =/= self()],
            atomics:sub(maps:get(counters, Ctx), sb_im:slot(registered_now), 1);
        false -> ok
    end,
    _ = Key =/= none andalso ets:delete_object(Nicks, {Key, self(), maps:get(nick, S), maps:get(registered, S)}),
    ok.

%% --- reading lines ------------------------------------------------------------------
lines(Data, #{buf := Buf, discarding := D, ctx := #{limits := #{line_max_bytes := Max}}} = S) ->
    {Items, Rest, D1} = sb_im_proto:split_lines(<<Buf/binary, Data/binary>>, D, Max),
    run(Items, S#{buf := Rest, discarding := D1}).

run([], S) -> {continue, S};
run([too_long | Rest], S) ->
    count(S, bad_lines),
    run(Rest, numeric(417, [<<"Input line was too long">>], S));
run([{line, Line} | Rest], S) ->
    case sb_im_proto:parse(Line) of
        error ->
            count(S, bad_lines),
            run(Rest, S);
        {Cmd, Params} ->
            case command(Cmd, Params, S) of
                {quit, Reason, S1} -> {quit, Reason, S1};
                {Answer, S1} ->
                    _ = Answer =:= error andalso count(S1, bad_lines),
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
command(Cmd, P, S) when Cmd =:= <<"PING">>; Cmd =:= <<"PRIVMSG">>; Cmd =:= <<"JOIN">>; Cmd =:= <<"PART">> ->
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
registered(<<"PART">>, P, S) -> part(P, S).

nick([], S) -> {error, numeric(431, [<<"No nickname given">>], S)};
nick([<<>> | _], S) -> {error, numeric(431, [<<"No nickname given">>], S)};
nick([Nick | _], #{ctx := #{limits := L, nicks := T, registry := Reg}, key := Old} = S) ->
    case sb_im_proto:valid_nick(Nick, L) of
        false -> {error, numeric(432, [Nick, <<"Erroneous nickname">>], S)};
        true ->
            Key = sb_im_proto:fold(Nick),
            Reg0 = maps:get(registered, S),
            Claimed = case Key =:= Old of
                          true -> ets:insert(T, {Key, self(), Nick, Reg0}), true;
                          false -> ets:insert_new(T, {Key, self(), Nick, Reg0})
                      end,
            case Claimed of
                false -> {error, numeric(433, [Nick, <<"Nickname is already in use">>], S)};
                true ->
                    _ = Old =/= none andalso Old =/= Key andalso
                        ets:delete_object(T, {Old, self(), maps:get(nick, S), Reg0}),
                    case Reg0 of
                        false -> {ok, try_register(S#{nick := Nick, key := Key})};
                        true ->
                            _ = Old =/= Key andalso sb_im_registry:leave(Reg, self()),
                            Line = sb_im_proto:from_user(prefix(S), <<"NICK">>, [], Nick),
                            S1 = S#{nick := Nick, key := Key},
                            Peers = lists:usort(lists:append(
                                                  [call_channel(fun() -> sb_im_channel:peers(Ch, self(), Nick) end, [])
                                                   || {Ch, _} <- maps:values(maps:get(channels, S1))])),
                            [Peer ! {send, Line} || Peer <- Peers],
                            {ok, send(Line, S1)}
                    end
            end
    end.

user(_, #{registered := true} = S) -> {error, numeric(462, [<<"You may not reregister">>], S)};
user(P, S) when length(P) < 4 -> {error, numeric(461, [<<"USER">>, <<"Not enough parameters">>], S)};
user([User | _], S) -> {ok, try_register(S#{user := User})}.

try_register(#{nick := none} = S) -> S;
try_register(#{user := none} = S) -> S;
try_register(#{ctx := #{nicks := T, counters := C}, key := Key} = S) ->
    true = ets:update_element(T, Key, {4, true}),
    Now = atomics:add_get(C, sb_im:slot(registered_now), 1),
    raise_max(C, Now),
    S1 = S#{registered := true},
    numeric(1, [<<"Welcome to the serverbench IRC network ", (prefix(S1))/binary>>], S1).

raise_max(C, Now) ->
    Slot = sb_im:slot(clients_registered_max),
    Max = atomics:get(C, Slot),
    case Now > Max andalso atomics:compare_exchange(C, Slot, Max, Now) =/= ok of
        true -> raise_max(C, Now);
        false -> ok
    end.

privmsg([], S) -> {error, numeric(411, [<<"No recipient given (PRIVMSG)">>], S)};
privmsg([<<>> | _], S) -> {error, numeric(411, [<<"No recipient given (PRIVMSG)">>], S)};
privmsg([_], S) -> {error, numeric(412, [<<"No text to send">>], S)};
privmsg([_, <<>> | _], S) -> {error, numeric(412, [<<"No text to send">>], S)};
privmsg([Targets, Text | _], S) ->
    lists:foldl(fun(T, {Ans, Acc}) ->
                        {A, Acc1} = privmsg_one(T, Text, Acc),
                        {worst(Ans, A), Acc1}
                end, {ok, S}, binary:split(Targets, <<",">>, [global])).

worst(error, _) -> error;
worst(_, A) -> A.

privmsg_one(<<$#, _/binary>> = Name, Text, #{ctx := #{channels := CT}} = S) ->
    Key = sb_im_proto:fold(Name),
    case maps:get(channels, S) of
        #{Key := {Ch, Shown}} ->
            sb_im_channel:msg(Ch, self(), sb_im_proto:from_user(prefix(S), <<"PRIVMSG">>, [Shown], Text)),
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
            Line = sb_im_proto:from_user(prefix(S), <<"PRIVMSG">>, [ToNick], Text),
            Pair = if From =< To -> {From, To}; true -> {To, From} end,
            Self = self(),
            Session = case ets:lookup(ST, Pair) of
                          [{Pair, P, A, B}] when is_pid(P), {A, B} =:= {Self, ToPid} orelse {A, B} =:= {ToPid, Self} ->
                              {ok, P};
                          _ -> sb_im_registry:session(Reg, Pair, Self, ToPid)
                      end,
            case Session of
                {ok, SPid} -> SPid ! {route, ToPid, Line}, {ok, S};
                {error, _} -> {error, numeric(401, [Target, <<"No such nick/channel">>], S)}
            end;
        _ -> {error, numeric(401, [Target, <<"No such nick/channel">>], S)}
    end.

join([], S) -> {error, numeric(461, [<<"JOIN">>, <<"Not enough parameters">>], S)};
join([<<>> | _], S) -> {error, numeric(461, [<<"JOIN">>, <<"Not enough parameters">>], S)};
join([Names | _], S) ->
    lists:foldl(fun(Name, {Ans, Acc}) -> {A, Acc1} = join_one(Name, Acc), {worst(Ans, A), Acc1} end,
                {ok, S}, binary:split(Names, <<",">>, [global])).

join_one(Name, #{ctx := #{limits := L}} = S) ->
    Key = sb_im_proto:fold(Name),
    case {sb_im_proto:valid_channel(Name, L), maps:get(channels, S)} of
        {false, _} -> {error, numeric(403, [Name, <<"No such channel">>], S)};
        {true, #{Key := _}} -> {ok, S};
        {true, Chans} ->
            {Ch, Lines} = join_channel(Key, Name, S),
            {ok, sends(Lines, S#{channels := Chans#{Key => {Ch, Name}}})}
    end.

%% The channel's process (the registry's, started if none) and the joiner's lines; a
%% channel that ended between the look-up and the call is asked for again.
join_channel(Key, Name, #{ctx := #{channels := CT, registry := Reg}, nick := Nick} = S) ->
    Ch = case ets:lookup(CT, Key) of
             [{Key, P}] -> P;
             [] -> {ok, P} = sb_im_registry:channel(Reg, Key, Name), P
         end,
    JoinLine = sb_im_proto:from_user(prefix(S), <<"JOIN">>, [Name], none),
    case call_channel(fun() -> sb_im_channel:join(Ch, self(), Nick, JoinLine) end, gone) of
        gone -> join_channel(Key, Name, S);
        Lines -> {Ch, Lines}
    end.

part([], S) -> {error, numeric(461, [<<"PART">>, <<"Not enough parameters">>], S)};
part([<<>> | _], S) -> {error, numeric(461, [<<"PART">>, <<"Not enough parameters">>], S)};
part([Names | Rest], S) ->
    Reason = case Rest of [R | _] -> R; [] -> none end,
    lists:foldl(fun(Name, {Ans, Acc}) -> {A, Acc1} = part_one(Name, Reason, Acc), {worst(Ans, A), Acc1} end,
                {ok, S}, binary:split(Names, <<",">>, [global])).

part_one(Name, Reason, #{ctx := #{channels := CT}} = S) ->
    Key = sb_im_proto:fold(Name),
    case maps:get(channels, S) of
        #{Key := {Ch, Shown}} = Chans ->
            Line = sb_im_proto:from_user(prefix(S), <<"PART">>, [Shown], Reason),
            Lines = call_channel(fun() -> sb_im_channel:part(Ch, self(), Line) end, []),
            {ok, sends(Lines, S#{channels := maps:remove(Key, Chans)})};
        #{} ->
            case ets:member(CT, Key) of
                true -> {error, numeric(442, [Name, <<"You're not on that channel">>], S)};
                false -> {error, numeric(403, [Name, <<"No such channel">>], S)}
            end
    end.

%% A call to a channel that ends meanwhile (its last member left) gives Default.
call_channel(F, Default) ->
    try F()
    catch exit:{Why, _} when Why =:= noproc; Why =:= normal; Why =:= shutdown -> Default
    end.

%% --- replies ------------------------------------------------------------------------
prefix(#{nick := N, user := U}) -> <<N/binary, $!, U/binary, "@127.0.0.1">>.

numeric(Code, Params, #{ctx := #{limits := L}, nick := Nick} = S) ->
    Target = case Nick of none -> <<"*">>; _ -> Nick end,
    send(sb_im_proto:numeric(Code, Target, Params, L), S).

%% Own replies go through the same bounded queue as lines from others.
send(Line, S) ->
    case enqueue(Line, S) of
        {over, S1} -> self() ! {send, Line}, S1; % the loop's next {send, _} disconnects it
        S1 -> S1
    end.

sends(Lines, S) -> lists:foldl(fun send/2, S, Lines).

count(#{ctx := #{counters := C}}, Name) -> atomics:add(C, sb_im:slot(Name), 1).
