%% @doc An im channel (docs/im.md): one process per channel, holding its members in
%% joining order and doing the fan-out of a channel PRIVMSG to every member but the
%% sender. Created by sb_im_registry; when its last member leaves it takes itself out of
%% the channels table and ends (a client that found it just before asks the registry
%% again). Replies that the asking client must see before its next lines (a JOIN's echo
%% and names, a PART's echo) are returned to it rather than sent, so that its connection
%% process queues them in order.
%%
%% The membership is also kept outside this process, in the members table
%% ({{ChannelKey, ConnPid}, JoinSeq, Nick}, ordered so one channel's rows are a range),
%% which this process writes: an incarnation chaos killed is restarted by its supervisor
%% (sb_im_sup) as a fresh process that reads its members back from it, because they are
%% still connected. Each member is monitored, so a member that dies leaves the channel.
-module(sb_im_channel).
-behaviour(gen_server).
-export([start_link/3, join/4, part/3, msg/3, peers/3, leave/2]).
-export([init/1, handle_call/3, handle_cast/2, handle_info/2]).

-spec start_link(map(), binary(), binary()) -> {ok, pid()}.
start_link(Ctx, Key, Name) ->
    %% high priority only for the start: see sb_im_sup
    gen_server:start_link(?MODULE, {Ctx, Key, Name}, [{spawn_opt, [{priority, high}]}]).

%% Lines for the joiner (its JOIN echo, 353 names, 366); the others get the JOIN.
-spec join(pid(), pid(), binary(), iodata()) -> [iodata()].
join(Ch, Client, Nick, JoinLine) -> gen_server:call(Ch, {join, Client, Nick, JoinLine}, infinity).

%% Lines for the parting member (its PART echo); the others get it too.
-spec part(pid(), pid(), iodata()) -> [iodata()].
part(Ch, Client, PartLine) -> gen_server:call(Ch, {part, Client, PartLine}, infinity).

%% A member's PRIVMSG to every other member.
-spec msg(pid(), pid(), iodata()) -> ok.
msg(Ch, Client, Line) -> gen_server:cast(Ch, {msg, Client, Line}).

%% The other members, after recording Client's new nick (a NICK change relayed to them).
-spec peers(pid(), pid(), binary()) -> [pid()].
peers(Ch, Client, Nick) -> gen_server:call(Ch, {peers, Client, Nick}, infinity).

%% Client leaves (it quit); the other members, to relay its QUIT to, each once.
-spec leave(pid(), pid()) -> [pid()].
leave(Ch, Client) -> gen_server:call(Ch, {leave, Client}, infinity).

%% Each incarnation writes its pid into the channel's entry; `restarting` there (chaos's
%% mark) means a restart, whose members are read back from the members table. No entry:
%% the channel was dropped meanwhile, so it does not start.
-spec init({map(), binary(), binary()}) -> {ok, map()} | ignore.
init({#{channels := T, members := MT, counters := C} = Ctx, Key, Name}) ->
    case ets:lookup(T, Key) of
        [{Key, Prev}] ->
            true = ets:update_element(T, Key, {2, self()}),
            Rows = lists:sort(ets:select(MT, [{{{Key, '$1'}, '$2', '$3'}, [], [{{'$2', '$1', '$3'}}]}])),
            _ = Prev =:= restarting andalso atomics:add(C, sb_im:slot(channels_restarted), 1),
            [erlang:monitor(process, M) || {_, M, _} <- Rows],
            process_flag(priority, normal),
            {ok, #{ctx => Ctx, key => Key, name => Name,
                   nicks => maps:from_list([{M, N} || {_, M, N} <- Rows]),
                   order => [M || {_, M, _} <- Rows]}};
        [] -> ignore
    end.

-spec handle_call(term(), gen_server:from(), map()) ->
          {reply, term(), map()} | {stop, normal, term(), map()}.
handle_call({join, C, Nick, Line}, _, #{nicks := N, order := O, key := K, ctx := #{members := MT}} = S) ->
    case N of
        %% a member asking again: its JOIN reached this incarnation's predecessor, which
        %% chaos killed before it answered; the answer is given now
        #{C := _} -> {reply, [Line | names(Nick, S)], S};
        #{} ->
            true = ets:insert(MT, {{K, C}, erlang:unique_integer([monotonic]), Nick}),
            erlang:monitor(process, C),
            S1 = S#{nicks := N#{C => Nick}, order := O ++ [C]},
            [M ! {send, Line} || M <- O],
            {reply, [Line | names(Nick, S1)], S1}
    end;
handle_call({part, C, Line}, _, #{nicks := N} = S) ->
    case N of
        #{C := _} ->
            S1 = remove(C, S),
            [M ! {send, Line} || M <- maps:get(order, S1)],
            maybe_end([Line], S1);
        #{} -> {reply, [], S}
    end;
handle_call({peers, C, Nick}, _, #{nicks := N, order := O, key := K, ctx := #{members := MT}} = S) ->
    S1 = case N of
             #{C := _} ->
                 true = ets:update_element(MT, {K, C}, {3, Nick}),
                 S#{nicks := N#{C := Nick}};
             #{} -> S
         end,
    {reply, [M || M <- O, M =/= C], S1};
handle_call({leave, C}, _, S) ->
    S1 = remove(C, S),
    maybe_end(maps:get(order, S1), S1).

-spec handle_cast(term(), map()) -> {noreply, map()}.
handle_cast({msg, C, Line}, #{nicks := N, order := O, ctx := #{counters := Ctr}} = S) ->
    case N of
        #{C := _} ->
            Others = [M || M <- O, M =/= C],
            %% counted first, as a session does: a kill mid-fan-out never leaves a delivered
            %% copy uncounted
            atomics:add(Ctr, sb_im:slot(channel_deliveries), length(Others)),
            [M ! {send, Line} || M <- Others];
        #{} -> ok
    end,
    {noreply, S}.

-spec handle_info(term(), map()) -> {noreply, map()} | {stop, normal, map()}.
handle_info({'DOWN', _, process, C, _}, S) ->
    S1 = remove(C, S),
    case maybe_end(ok, S1) of
        {reply, ok, S2} -> {noreply, S2};
        {stop, normal, ok, S2} -> {stop, normal, S2}
    end;
handle_info(_, S) -> {noreply, S}.

remove(C, #{nicks := N, order := O, key := K, ctx := #{members := MT}} = S) ->
    true = ets:delete(MT, {K, C}),
    S#{nicks := maps:remove(C, N), order := lists:delete(C, O)}.

maybe_end(Reply, #{order := [], key := Key, ctx := #{registry := Reg}} = S) ->
    ok = sb_im_registry:drop_channel(Reg, Key, self()),
    {stop, normal, Reply, S};
maybe_end(Reply, S) -> {reply, Reply, S}.

%% 353 lines (split to fit a line) and 366, addressed to the joiner.
names(Nick, #{nicks := N, order := O, name := Name, ctx := #{limits := L}}) ->
    #{server_name := Server, line_max_bytes := Max} = L,
    Head = byte_size(Server) + byte_size(Nick) + byte_size(Name) + 16,
    Groups = group([maps:get(M, N) || M <- O], Max - Head, -1, [], []),
    [sb_im_proto:numeric(353, Nick, [<<"=">>, Name, iolist_to_binary(lists:join(<<" ">>, G))], L)
     || G <- Groups]
        ++ [sb_im_proto:numeric(366, Nick, [Name, <<"End of NAMES list">>], L)].

%% Nicks in groups whose joined length (with spaces) stays within Room.
group([], _, _, [], Acc) -> lists:reverse(Acc);
group([], _, _, Cur, Acc) -> lists:reverse([lists:reverse(Cur) | Acc]);
group([N | Rest], Room, Used, Cur, Acc) ->
    case Cur =/= [] andalso Used + 1 + byte_size(N) > Room of
        true -> group(Rest, Room, byte_size(N), [N], [lists:reverse(Cur) | Acc]);
        false -> group(Rest, Room, Used + 1 + byte_size(N), [N | Cur], Acc)
    end.
