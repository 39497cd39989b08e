%% @doc A chat session (docs/im.md, as RD-IM's chat-session process): one process per
%% conversation, i.e. per unordered pair of nicks, forwarding each one-to-one PRIVMSG to
%% its receiver's connection process. Started by sb_im_registry under the session
%% supervisor (sb_im_sup), which restarts an incarnation the chaos monkey killed; what
%% was in the killed one's mailbox is lost, as in RD-IM.
-module(sb_im_session).
-export([start_link/2, init/3]).

-spec start_link(map(), {binary(), binary()}) -> {ok, pid()} | ignore.
start_link(Ctx, Key) -> proc_lib:start_link(?MODULE, init, [self(), Ctx, Key]).

%% Each incarnation writes its pid into the session's entry; an earlier pid there means
%% this is a restart. No entry: the session was ended meanwhile, so it does not start.
-spec init(pid(), map(), {binary(), binary()}) -> ok.
init(_Parent, #{sessions := T, counters := C} = Ctx, Key) ->
    case ets:lookup(T, Key) of
        [{Key, Prev, _, _}] ->
            true = ets:update_element(T, Key, {2, self()}),
            _ = is_pid(Prev) andalso atomics:add(C, sb_im:slot(sessions_restarted), 1),
            proc_lib:init_ack({ok, self()}),
            loop(maps:get(counters, Ctx));
        [] ->
            proc_lib:init_ack(ignore)
    end.

loop(C) ->
    receive
        {route, To, Line} ->
            To ! {send, Line},
            atomics:add(C, sb_im:slot(messages_routed), 1),
            loop(C)
    end.
