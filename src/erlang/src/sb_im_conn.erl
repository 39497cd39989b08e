%% @doc One im client connection (docs/im.md): ONE process, the one sb_sockserver spawns
%% for it, owns the socket, reads it, runs the commands (sb_im_cmd) and writes its own
%% replies and the lines others send it ({send, Line}).
%%
%% Reading: {active, ?ACTIVE_N}. The driver sends up to N packets before it stops and says
%% {tcp_passive, _}, so the process re-arms once per N packets instead of once per packet
%% ({active, once}: an inet:setopts, i.e. a port_control, per packet). N = 32 bounds what
%% a client can push into the mailbox ahead of the process to 32 reads (at most 32 x the
%% receive buffer; in practice a line or a few each), the same bound order as a queue.
%%
%% Writing never blocks: erlang:port_command(Sock, Lines, [nosuspend]) hands a batch to
%% the port and the driver answers {inet_reply, Sock, ok} asynchronously (gen_tcp:send
%% would wait for that answer with a selective receive, which scans the whole mailbox of
%% a loaded process). A port whose client does not read is busy (its driver queue is over
%% the high watermark): the batch stays queued and is retried every ?BUSY_MS; nothing is
%% lost and the process goes on reading. The process takes every message already in its
%% mailbox (up to ?BATCH) before it writes, so a burst leaves in one write.
%%
%% The send queue (--sendq-lines, docs/im.md): a line counts from when it is queued here
%% until the write that contains it has returned (its inet_reply); queued lines not yet
%% handed to the port count too. A line that would make the count exceed sendq_lines
%% disconnects the client with "ERROR :SendQ exceeded" (counted). The count is also kept
%% in the process dictionary, where chaos reads a killed connection's unsent lines.
%%
%% Every way out frees the nick first (so a client reconnecting at once gets it back),
%% then closes the socket within ?GRACE_MS (close_socket/2): a plain close of a port that
%% still holds output would wait for the client, keeping the descriptor. A connection
%% that dies without this (chaos's kill, a crash) is cleaned up by the registry's monitor.
-module(sb_im_conn).
-export([serve/2, send/2, sends/2, count/2, leave/2]).

-define(ACTIVE_N, 32).
-define(BATCH, 64). % messages taken from the mailbox before a write (bounds a line's wait)
-define(BUSY_MS, 2). % how often a busy port is offered the queued lines again
-define(GRACE_MS, 1000). % how long the last lines (ERROR ...) may take to leave
-define(POLL_MS, 10). % how often a closing socket's port is asked whether it is empty

-spec serve(gen_tcp:socket(), map()) -> ok.
serve(Sock, #{conns := CT, registry := Reg} = Ctx) ->
    process_flag(trap_exit, true), % the server's stop (shutdown) lets queued lines leave
    true = ets:insert(CT, {self(), none, false, Sock}),
    sb_im_registry:watch_conn(Reg, self()),
    put(sb_im_chaos:sendq_key(), 0),
    S = #{sock => Sock, ctx => Ctx, buf => <<>>, discarding => false, nick => none,
          key => none, user => none, registered => false, channels => #{},
          queue => [], pending => 0, inflight => queue:new(), unacked => 0, busy => false,
          over => false},
    case inet:setopts(Sock, [{active, ?ACTIVE_N}]) of
        ok -> loop(S);
        {error, _} -> finish(<<"Connection closed">>, S) % its port is gone already
    end.

loop(S) ->
    receive M -> step(M, S, ?BATCH) end.

step(M, S, N) ->
    case handle(M, S) of
        {stop, Fun} -> Fun();
        #{over := true} = S1 -> overflow(S1);
        S1 when N > 0 ->
            receive M1 -> step(M1, S1, N - 1)
            after 0 -> loop(flush(S1))
            end;
        S1 -> loop(flush(S1))
    end.

handle({tcp, _, Data}, S) ->
    case sb_im_cmd:lines(Data, S) of
        {quit, Reason, S1} -> {stop, fun() -> finish(Reason, S1) end};
        {continue, S1} -> S1
    end;
handle({send, Line}, S) -> enqueue(Line, S);
handle({inet_reply, _, ok}, #{inflight := Q, unacked := U} = S) ->
    case queue:out(Q) of % the port answers its commands in order
        {{value, N}, Q1} -> note(S#{inflight := Q1, unacked := U - N});
        {empty, _} -> S
    end;
handle({inet_reply, _, {error, Why}}, S) ->
    _ = Why =/= closed andalso count(S, connection_errors),
    {stop, fun() -> finish(<<"Connection closed">>, S) end};
handle({tcp_passive, Sock}, S) ->
    _ = inet:setopts(Sock, [{active, ?ACTIVE_N}]), % a closed port: tcp_closed follows
    S;
handle(retry_write, S) -> S#{busy := false}; % flushed at the end of the batch
handle({nick_probe, From, Ref}, S) -> % sb_im_cmd: is this nick's holder still here?
    case read_ahead(S) of
        {open, S1} -> From ! {nick_held, Ref}, S1;
        {quit, Reason, S1} -> {stop, fun() -> finish(Reason, S1) end} % From sees the nick freed
    end;
handle({tcp_closed, _}, S) -> {stop, fun() -> finish(<<"Connection closed">>, S) end};
handle({tcp_error, _, _}, S) ->
    count(S, connection_errors),
    {stop, fun() -> finish(<<"Connection closed">>, S) end};
handle({'EXIT', _, shutdown}, #{sock := Sock} = S) -> % the server stops
    {stop, fun() -> Deadline = deadline(), drain_out(S, Deadline), close_socket(Sock, Deadline) end};
handle(_, S) -> S. % the port's 'EXIT', a late nick_held or retry_write

%% Asked for its nick, the connection makes sure its client is still there: an EOF may
%% be in the socket but not yet in the mailbox (a socket in {active, N} is polled by the
%% schedulers when they have nothing else to do, so under load its EOF can come several
%% milliseconds after a new connection's NICK). So the socket is read at once, passively:
%% the data already delivered first, in order, then what the kernel holds, until it has
%% nothing more (open) or says closed.
read_ahead(#{sock := Sock} = S) ->
    _ = inet:setopts(Sock, [{active, false}]),
    read_ahead(Sock, S).

read_ahead(Sock, S) ->
    receive
        {tcp, Sock, Data} -> read_more(Sock, sb_im_cmd:lines(Data, S));
        {tcp_closed, Sock} -> {quit, <<"Connection closed">>, S};
        {tcp_error, Sock, _} -> count(S, connection_errors), {quit, <<"Connection closed">>, S}
    after 0 ->
            case gen_tcp:recv(Sock, 0, 0) of
                {ok, Data} -> read_more(Sock, sb_im_cmd:lines(Data, S));
                {error, timeout} ->
                    _ = inet:setopts(Sock, [{active, ?ACTIVE_N}]),
                    {open, S};
                {error, _} -> {quit, <<"Connection closed">>, S}
            end
    end.

read_more(Sock, {continue, S}) -> read_ahead(Sock, S);
read_more(_, Quit) -> Quit.

%% --- the send queue -----------------------------------------------------------------
enqueue(_, #{over := true} = S) -> S;
enqueue(Line, #{queue := Q, pending := P, unacked := U, ctx := #{sendq_lines := Max}} = S) ->
    case P + U + 1 > Max of
        true -> S#{over := true};
        false -> note(S#{queue := [Line | Q], pending := P + 1})
    end.

note(#{pending := P, unacked := U} = S) ->
    put(sb_im_chaos:sendq_key(), P + U),
    S.

%% Queued replies and relayed lines alike (commands' replies keep their order).
-spec send(iodata(), map()) -> map().
send(Line, S) -> enqueue(Line, S).

-spec sends([iodata()], map()) -> map().
sends(Lines, S) -> lists:foldl(fun send/2, S, Lines).

%% Hands what is queued to the port in one write, unless the port is busy.
flush(#{pending := 0} = S) -> S;
flush(#{busy := true} = S) -> S;
flush(#{sock := Sock, queue := Q, pending := P, inflight := In, unacked := U} = S) ->
    try erlang:port_command(Sock, lists:reverse(Q), [nosuspend]) of
        true -> S#{queue := [], pending := 0, inflight := queue:in(P, In), unacked := U + P};
        false ->
            erlang:send_after(?BUSY_MS, self(), retry_write),
            S#{busy := true}
    catch error:_ -> S % the port is closed: tcp_closed is on its way
    end.

%% The queue is full: the client is counted, gone from its nick, sessions and channels at
%% once, and its socket closed within the grace. The ERROR line is forced in behind what
%% the port holds (port_command would refuse or wait on the busy port); a client that reads
%% again within the grace gets it.
overflow(#{sock := Sock} = S) ->
    count(S, sendq_disconnects),
    _ = catch erlang:port_command(Sock, <<"ERROR :SendQ exceeded\r\n">>, [force]),
    leave(<<"SendQ exceeded">>, S),
    close_socket(Sock, deadline()).

%% After QUIT or the peer's close: the nick is freed and the client leaves its sessions
%% and channels first, then what is queued is written (within the grace) and the socket
%% closed.
finish(Reason, #{sock := Sock} = S) ->
    Deadline = deadline(),
    leave(Reason, S),
    drain_out(S, Deadline),
    close_socket(Sock, Deadline).

deadline() -> erlang:monotonic_time(millisecond) + ?GRACE_MS.

drain_out(S, Deadline) ->
    case flush(S#{busy := false}) of
        #{pending := 0} -> ok;
        S1 ->
            case erlang:monotonic_time(millisecond) < Deadline of
                true -> receive after ?BUSY_MS -> ok end, drain_out(S1, Deadline);
                false -> ok
            end
    end.

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

%% The client goes: its nick is freed first, then its QUIT relayed to its channels'
%% members (each once) as it leaves them. Its sessions are ended by the registry, which
%% sees it go (monitor); the conns row is removed last, so the registry's clean-up knows
%% there is nothing left to free.
-spec leave(binary(), map()) -> ok.
leave(Reason, #{ctx := #{nicks := Nicks, conns := CT, counters := C}, key := Key} = S) ->
    _ = Key =/= none andalso ets:select_delete(Nicks, [{{Key, self(), '_', '_'}, [], [true]}]),
    case maps:get(registered, S) of
        true ->
            Line = sb_im_proto:from_user(sb_im_cmd:prefix(S), <<"QUIT">>, [], Reason),
            Peers = lists:usort(lists:append([sb_im_cmd:chan_call(K, fun(Ch) -> sb_im_channel:leave(Ch, self()) end, [], S)
                                              || K <- maps:keys(maps:get(channels, S))])),
            [P ! {send, Line} || P <- Peers, P =/= self()],
            atomics:sub(C, sb_im:slot(registered_now), 1);
        false -> ok
    end,
    true = ets:delete(CT, self()),
    ok.

-spec count(map(), atom()) -> ok.
count(#{ctx := #{counters := C}}, Name) -> atomics:add(C, sb_im:slot(Name), 1).
