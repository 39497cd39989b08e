%% @doc The im server's registry process: the one place that creates chat sessions and
%% channels, so that two clients asking at once get the same one. Look-ups do not come
%% here: sessions and channels are found in ETS tables (sb_im's ctx) that only this
%% process writes. It monitors every client that takes part in a session, and ends that
%% client's sessions (for good, not restarted) when it leaves or changes its nick, the
%% nick pair keying them.
%%
%% Sessions table: {PairKey, SessionPid | undefined, PeerA, PeerB}; PairKey = {LoNick,
%% HiNick}, folded. The pid is undefined between the entry and the session's first start,
%% and is written by each incarnation (sb_im_session:init), so a restart is seen there.
%% Channels table: {ChannelKey, ChannelPid}.
-module(sb_im_registry).
-behaviour(gen_server).
-export([start_link/1, session/4, channel/3, leave/2, drop_channel/3]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-spec start_link(map()) -> {ok, pid()}.
start_link(Ctx) -> gen_server:start_link(?MODULE, Ctx, []).

%% The session of the pair, started if there is none with these two peers.
-spec session(pid(), {binary(), binary()}, pid(), pid()) -> {ok, pid()} | {error, term()}.
session(Reg, Key, From, To) -> gen_server:call(Reg, {session, Key, From, To}, infinity).

%% The channel's process, started (with its shown name) if there is none.
-spec channel(pid(), binary(), binary()) -> {ok, pid()}.
channel(Reg, Key, Name) -> gen_server:call(Reg, {channel, Key, Name}, infinity).

%% End every session of Client (it left, or its nick changed).
-spec leave(pid(), pid()) -> ok.
leave(Reg, Client) -> gen_server:call(Reg, {leave, Client}, infinity).

%% A channel with no member is dropped from the table before it ends; a client that
%% found it just before gets its call refused and asks again, for a new channel.
-spec drop_channel(pid(), binary(), pid()) -> ok.
drop_channel(Reg, Key, Pid) -> gen_server:call(Reg, {drop_channel, Key, Pid}, infinity).

-spec init(map()) -> {ok, map()}.
init(Ctx) -> {ok, #{ctx => Ctx, by_client => #{}}}.

-spec handle_call(term(), gen_server:from(), map()) -> {reply, term(), map()}.
handle_call({set_channel_sup, Sup}, _, #{ctx := Ctx} = S) ->
    %% the channel supervisor's children need this process, so it starts after it
    {reply, ok, S#{ctx := Ctx#{channel_sup => Sup}}};
handle_call({session, Key, From, To}, _, #{ctx := #{sessions := T} = Ctx} = S) ->
    case ets:lookup(T, Key) of
        [{Key, Pid, A, B}] when is_pid(Pid), {A, B} =:= {From, To} orelse {A, B} =:= {To, From} ->
            {reply, {ok, Pid}, S};
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
        [{Key, Pid}] -> {reply, {ok, Pid}, S};
        [] ->
            {ok, Pid} = supervisor:start_child(maps:get(channel_sup, Ctx), [Key, Name]),
            true = ets:insert(T, {Key, Pid}),
            {reply, {ok, Pid}, S}
    end;
handle_call({drop_channel, Key, Pid}, _, #{ctx := #{channels := T}} = S) ->
    _ = ets:delete_object(T, {Key, Pid}),
    {reply, ok, S};
handle_call({leave, Client}, _, S) ->
    {reply, ok, end_client(Client, S)}.

-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast(_, S) -> {noreply, S}.

-spec handle_info(term(), map()) -> {noreply, map()}.
handle_info({'DOWN', _, process, Client, _}, S) ->
    #{by_client := By} = S1 = end_client(Client, S),
    {noreply, S1#{by_client := maps:remove(Client, By)}};
handle_info(_, S) -> {noreply, S}.

watch(Clients, Key, #{by_client := By} = S) ->
    By1 = lists:foldl(fun(C, Acc) ->
                              case Acc of
                                  #{C := Keys} -> Acc#{C => Keys#{Key => true}};
                                  #{} -> erlang:monitor(process, C), Acc#{C => #{Key => true}}
                              end
                      end, By, Clients),
    S#{by_client := By1}.

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
