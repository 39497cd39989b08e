%% @doc The im server's registry process: the one place that creates chat sessions and
%% channels, so that two clients asking at once get the same one. Look-ups do not come
%% here: sessions and channels are found in ETS tables (sb_im's ctx) that only this
%% process creates entries in. It ends a client's sessions (for good, not restarted) when
%% it changes its nick (the nick pair keys them) or goes.
%%
%% It monitors every connection process (watch_conn/2, sent by each at its start), and
%% its 'DOWN' is where a connection that did not clean up after itself -- killed by chaos,
%% or crashed -- is cleaned up: its nick freed, the registered count lowered, its
%% sessions ended (its channels see their own monitors fire). A connection that closes
%% normally has done all that itself first (sb_im_conn), so its nick is free at once.
%%
%% Sessions table: {PairKey, SessionPid | undefined | restarting, PeerA, PeerB}; PairKey =
%% {LoNick, HiNick}, folded. Channels table: {ChannelKey, ChannelPid | undefined |
%% restarting}. The pid is undefined between the entry and the first start, restarting
%% between a chaos kill and the successor's start (sb_im_chaos), and is written by each
%% incarnation (sb_im_session:init, sb_im_channel:init). Conns table: {ConnPid, NickKey |
%% none, Registered, Socket}, written by the connection itself.
-module(sb_im_registry).
-behaviour(gen_server).
-export([start_link/1, session/4, channel/3, leave/2, drop_channel/3, watch_conn/2, await/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-spec start_link(map()) -> {ok, pid()}.
start_link(Ctx) -> gen_server:start_link(?MODULE, Ctx, []).

%% The session of the pair, started if there is none with these two peers; retry: it is
%% being restarted (ask the table again).
-spec session(pid(), {binary(), binary()}, pid(), pid()) -> {ok, pid()} | retry | {error, term()}.
session(Reg, Key, From, To) -> gen_server:call(Reg, {session, Key, From, To}, infinity).

%% The channel's process, started (with its shown name) if there is none; retry as above.
-spec channel(pid(), binary(), binary()) -> {ok, pid()} | retry.
channel(Reg, Key, Name) -> gen_server:call(Reg, {channel, Key, Name}, infinity).

%% A connection process to monitor (sent once, when it starts).
-spec watch_conn(pid(), pid()) -> ok.
watch_conn(Reg, Conn) -> gen_server:cast(Reg, {watch_conn, Conn}).

%% Calls F until it gives something else than retry: a chaos kill's successor writes its
%% pid within a few scheduling rounds (sb_im_sup), so the first tries only yield; then
%% 1 ms apart, Tries in all (about a second), then retry: lost with the victim.
-spec await(fun(() -> retry | T), non_neg_integer()) -> T | retry.
await(F, Tries) -> await(F, Tries, 0).

await(F, Tries, N) ->
    case F() of
        retry when N < Tries ->
            _ = if N < 20 -> erlang:yield(); true -> receive after 1 -> ok end end,
            await(F, Tries, N + 1);
        R -> R
    end.

%% End every session of Client (it left, or its nick changed).
-spec leave(pid(), pid()) -> ok.
leave(Reg, Client) -> gen_server:call(Reg, {leave, Client}, infinity).

%% A channel with no member is dropped from the table before it ends; a client that
%% found it just before gets its call refused and asks again, for a new channel.
-spec drop_channel(pid(), binary(), pid()) -> ok.
drop_channel(Reg, Key, Pid) -> gen_server:call(Reg, {drop_channel, Key, Pid}, infinity).

-spec init(map()) -> {ok, map()}.
init(Ctx) -> {ok, #{ctx => Ctx, by_client => #{}, conns => #{}}}.

-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()}.
handle_call({set_channel_sup, Sup}, _, #{ctx := Ctx} = S) ->
    %% the channel supervisor's children need this process, so it starts after it
    {reply, ok, S#{ctx := Ctx#{channel_sup => Sup}}};
handle_call({session, Key, From, To}, _, #{ctx := #{sessions := T} = Ctx} = S) ->
    case ets:lookup(T, Key) of
        [{Key, Pid, A, B}] when is_pid(Pid), {A, B} =:= {From, To} orelse {A, B} =:= {To, From} ->
            {reply, {ok, Pid}, S};
        [{Key, restarting, A, B}] when {A, B} =:= {From, To} orelse {A, B} =:= {To, From} ->
            {reply, retry, S};
        Found ->
            S1 = case Found of
                     [{Key, _, A, B}] -> end_session(Key, [A, B], S); % the nicks now belong to others
                     [] -> S
                 end,
            case is_process_alive(From) andalso is_process_alive(To) of
                false -> {reply, {error, gone}, S1};
                true ->
                    true = ets:insert(T, {Key, undefined, From, To}),
                    case supervisor:start_child(maps:get(session_sup, Ctx), [Key]) of
                        {ok, Pid} ->
                            atomics:add(maps:get(counters, Ctx), sb_im:slot(sessions_started), 1),
                            {reply, {ok, Pid}, watch([From, To], Key, S1)};
                        Other ->
                            ets:delete(T, Key),
                            {reply, {error, Other}, S1}
                    end
            end
    end;
handle_call({channel, Key, Name}, _, #{ctx := #{channels := T} = Ctx} = S) ->
    case ets:lookup(T, Key) of
        [{Key, Pid}] when is_pid(Pid) -> {reply, {ok, Pid}, S};
        [{Key, restarting}] -> {reply, retry, S};
        [] ->
            true = ets:insert(T, {Key, undefined}), % the channel writes its pid (init)
            {ok, Pid} = supervisor:start_child(maps:get(channel_sup, Ctx), [Key, Name]),
            {reply, {ok, Pid}, S}
    end;
handle_call({drop_channel, Key, Pid}, _, #{ctx := #{channels := T}} = S) ->
    _ = ets:delete_object(T, {Key, Pid}),
    {reply, ok, S};
handle_call({leave, Client}, _, S) ->
    {reply, ok, end_client(Client, S)}.

-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast({watch_conn, C}, S) -> {noreply, monitor_conn(C, S)};
handle_cast(_, S) -> {noreply, S}.

-spec handle_info(term(), map()) -> {noreply, map()}.
handle_info({'DOWN', _, process, Client, Why}, S) ->
    conn_down(Client, Why, S),
    #{by_client := By, conns := Cs} = S1 = end_client(Client, S),
    {noreply, S1#{by_client := maps:remove(Client, By), conns := maps:remove(Client, Cs)}};
handle_info(_, S) -> {noreply, S}.

monitor_conn(C, #{conns := Cs} = S) ->
    case Cs of
        #{C := _} -> S;
        #{} -> erlang:monitor(process, C), S#{conns := Cs#{C => true}}
    end.

%% A connection gone without its own clean-up (its row is still in the conns table): its
%% nick is freed (only if still its own), the registered count lowered, and the socket
%% server told it closed (sb_sockserver counts open connections for its idle timeout from
%% {closed, Pid}, which the dead handler could not send).
conn_down(C, Why, #{ctx := #{conns := CT, nicks := NT, counters := Ctr, main := Main}}) ->
    case ets:take(CT, C) of
        [{C, Key, Registered, Sock}] ->
            exit(Sock, kill), % a crashed owner's port could linger flushing (sb_im_chaos)
            _ = Key =/= none andalso ets:select_delete(NT, [{{Key, C, '_', '_'}, [], [true]}]),
            _ = Registered andalso atomics:sub(Ctr, sb_im:slot(registered_now), 1),
            _ = Why =/= normal andalso (Main ! {closed, C}),
            ok;
        [] -> ok
    end.

watch(Clients, Key, #{by_client := By} = S) ->
    S1 = lists:foldl(fun monitor_conn/2, S, Clients),
    By1 = lists:foldl(fun(C, Acc) ->
                              case Acc of
                                  #{C := Keys} -> Acc#{C => Keys#{Key => true}};
                                  #{} -> Acc#{C => #{Key => true}}
                              end
                      end, By, Clients),
    S1#{by_client := By1}.

end_client(Client, #{by_client := By} = S) ->
    case By of
        #{Client := Keys} ->
            lists:foldl(fun(K, Acc) ->
                                case ets:lookup(maps:get(sessions, maps:get(ctx, Acc)), K) of
                                    [{K, _, A, B}] when A =:= Client; B =:= Client ->
                                        end_session(K, [A, B], Acc);
                                    _ -> Acc
                                end
                        end, S, maps:keys(Keys));
        #{} -> S
    end.

%% Ends a session for good: out of the table first, so that its supervisor's restart of
%% a just-killed incarnation finds no entry and ends; then the live incarnation.
end_session(Key, Peers, #{ctx := #{sessions := T, session_sup := Sup}, by_client := By} = S) ->
    Pid = case ets:lookup(T, Key) of
              [{Key, P, _, _}] -> P;
              [] -> undefined
          end,
    ets:delete(T, Key),
    _ = is_pid(Pid) andalso supervisor:terminate_child(Sup, Pid),
    By1 = lists:foldl(fun(C, Acc) ->
                              case Acc of
                                  #{C := Keys} ->
                                      Keys1 = maps:remove(Key, Keys),
                                      case map_size(Keys1) of
                                          0 -> Acc#{C := #{}};
                                          _ -> Acc#{C := Keys1}
                                      end;
                                  #{} -> Acc
                              end
                      end, By, Peers),
    S#{by_client := By1}.
