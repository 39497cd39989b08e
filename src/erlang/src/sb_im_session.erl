%% @doc A chat session (docs/im.md, as RD-IM's chat-session process): one process per
%% conversation, i.e. per unordered pair of nicks, forwarding each one-to-one PRIVMSG to
%% its receiver's connection process. Started by sb_im_registry under the session
%% supervisor (sb_im_sup), which restarts an incarnation chaos killed (sb_im_chaos) as a
%% fresh process: what was in the killed one's mailbox is lost, as in RD-IM.
-module(sb_im_session).
-export([start_link/2, init/3]).

%% Started at high priority so that a restart is not queued behind the connections
%% (sb_im_sup); the loop runs at normal priority.
-spec start_link(map(), {binary(), binary()}) -> {ok, pid()} | ignore.
start_link(Ctx, Key) ->
    proc_lib:start_link(?MODULE, init, [self(), Ctx, Key], infinity, [{priority, high}]).

%% Each incarnation writes its pid into the session's entry; `restarting` there (chaos's
%% mark) means this is a restart. No entry: the session was ended meanwhile, so it does
%% not start.
-spec init(pid(), map(), {binary(), binary()}) -> ok.
init(_Parent, #{sessions := T, counters := C}, Key) ->
    case ets:lookup(T, Key) of
        [{Key, Prev, _, _}] ->
            true = ets:update_element(T, Key, {2, self()}),
            _ = Prev =:= restarting andalso atomics:add(C, sb_im:slot(sessions_restarted), 1),
            proc_lib:init_ack({ok, self()}),
            process_flag(priority, normal),
            loop(C);
        [] ->
            proc_lib:init_ack(ignore)
    end.

loop(C) ->
    receive
        {route, To, Line} ->
            %% counted before it is sent: a kill between the two must not leave a delivered
            %% message uncounted (what a client received was routed, docs/im.md)
            atomics:add(C, sb_im:slot(messages_routed), 1),
            To ! {send, Line},
            loop(C)
    end.
