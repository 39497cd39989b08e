%% @doc The im benchmark's server (docs/im.md): an IRC-subset instant-messaging server,
%% the case study the paper names as future work (RD-IM, its ref. [4]). A process per
%% connection (sb_im_conn), a chat-session process per conversation (sb_im_session) and
%% a process per channel (sb_im_channel), both under supervisors (sb_im_sup) and created
%% by one registry process (sb_im_registry); nicks, sessions and channels are found in
%% ETS tables. --chaos-interval-ms T kills one process of --chaos-target every T ms, as
%% RD-IM's rhesus does (sb_im_chaos). The lifecycle (127.0.0.1 only, the listening line, stop on stdin EOF /
%% "stop" / SIGTERM / idle) is sb_sockserver's; the load generator is im_loadgen.
-module(sb_im).
-behaviour(sb_benchmark).
-export([name/0, run/1, slot/1, quiet_chaos/2]).

-define(BACKLOG, 4096). % the kernel caps it at net.core.somaxconn
-define(ACCEPTORS, 100). % as echo_flood: a login storm must not wait behind one acceptor

-spec name() -> binary().
name() -> <<"im">>.

%% The server's counters (one atomics array, shared by every process of the server).
-spec slot(atom()) -> pos_integer().
slot(messages_routed) -> 1;
slot(channel_deliveries) -> 2;
slot(sessions_started) -> 3;
slot(sessions_killed) -> 4;
slot(sessions_restarted) -> 5;
slot(sendq_disconnects) -> 6;
slot(bad_lines) -> 7;
slot(connection_errors) -> 8;
slot(registered_now) -> 9;
slot(clients_registered_max) -> 10;
slot(channels_killed) -> 11;
slot(channels_restarted) -> 12;
slot(connections_killed) -> 13;
slot(chaos_dropped_messages) -> 14;
slot(live_bytes) -> 15. % -1 until the first MEMORY command

-define(SLOTS, 15).

%% Drops the session supervisor's report of a child killed (by the chaos monkey); every
%% other report passes.
-spec quiet_chaos(logger:log_event(), term()) -> logger:filter_return().
quiet_chaos(#{msg := {report, #{label := {supervisor, child_terminated}, report := R}}} = E, _) ->
    case proplists:get_value(reason, R) of
        killed -> stop;
        _ -> E
    end;
quiet_chaos(E, _) -> E.

-spec run(map()) -> {ok, term(), boolean()} | {error, string()}.
run(#{role := <<"server">>} = P) -> server(P).

%% The wire format's limits, from spec/cli.json's benchmarks.im.
limits() ->
    #{<<"benchmarks">> := #{<<"im">> := Im}} = sb_cli:spec(),
    #{server_name => maps:get(<<"server_name">>, Im),
      line_max_bytes => maps:get(<<"line_max_bytes">>, Im),
      nick_max_chars => maps:get(<<"nick_max_chars">>, Im),
      channel_max_chars => maps:get(<<"channel_max_chars">>, Im)}.

server(#{port := Port, idle_timeout_s := Idle, sendq_lines := SendQ, chaos_interval_ms := Chaos,
         seed := Seed} = P) ->
    Target = maps:get(chaos_target, P, <<"session">>),
    Pick = maps:get(chaos_pick, P, <<"random">>),
    process_flag(trap_exit, true), % the supervisors and the registry are linked to us
    %% a report on stderr for every session chaos kills would cost the server more than the kill
    ok = logger:add_primary_filter(sb_im_chaos, {fun ?MODULE:quiet_chaos/2, []}),
    C = atomics:new(?SLOTS, [{signed, true}]),
    atomics:put(C, slot(live_bytes), -1),
    %% The tables are this process's, which outlives every other process of the server:
    %% a killed channel's successor finds its members in `members`, and the registry finds
    %% a dead connection's nick in `conns` (sb_im_registry).
    Ctx0 = #{limits => limits(), sendq_lines => SendQ, counters => C, main => self(),
             nicks => ets:new(im_nicks, [set, public, {read_concurrency, true}, {write_concurrency, true}]),
             sessions => ets:new(im_sessions, [set, public, {read_concurrency, true}]),
             channels => ets:new(im_channels, [set, public, {read_concurrency, true}]),
             conns => ets:new(im_conns, [set, public, {write_concurrency, true}]),
             members => ets:new(im_members, [ordered_set, public])},
    {ok, SessionSup} = sb_im_sup:start_link(sessions, Ctx0),
    Ctx1 = Ctx0#{session_sup => SessionSup},
    {ok, Reg} = sb_im_registry:start_link(Ctx1#{channel_sup => undefined}),
    {ok, ChannelSup} = sb_im_sup:start_link(channels, Ctx1#{registry => Reg}),
    Ctx = Ctx1#{registry => Reg, channel_sup => ChannelSup},
    ok = gen_server:call(Reg, {set_channel_sup, ChannelSup}),
    _ = Chaos > 0 andalso sb_im_chaos:start(Ctx, #{interval_ms => Chaos, seed => Seed,
                                                    target => binary_to_atom(Target),
                                                    pick => binary_to_atom(Pick)}),
    Opts = [{backlog, ?BACKLOG}, {nodelay, true}],
    case sb_sockserver:run(#{benchmark => <<"im">>, port => Port, idle_timeout_s => Idle,
                             listen_opts => Opts, acceptors => ?ACCEPTORS,
                             handler => fun(S) -> sb_im_conn:serve(S, Ctx) end}) of
        {error, _} = E -> E;
        {ok, #{port := Actual, accepted := Accepted, stop_reason := Reason, elapsed_ns := Ns}} ->
            Get = fun(Name) -> atomics:get(C, slot(Name)) end,
            Record =
                {[{benchmark, <<"im">>}, {role, <<"server">>},
                  {language, <<"erlang">>}, {variant, maps:get(variant, P, <<"fair">>)},
                  {params, {[{port, Port}, {idle_timeout_s, Idle}, {sendq_lines, SendQ},
                             {chaos_interval_ms, Chaos}, {chaos_target, Target},
                             {chaos_pick, Pick}, {seed, Seed}]}},
                  {metrics, {[{elapsed_s, sb_sys:seconds(Ns)}, {port, Actual},
                              {connections_accepted, Accepted},
                              {clients_registered_max, Get(clients_registered_max)},
                              {messages_routed, Get(messages_routed)},
                              {channel_deliveries, Get(channel_deliveries)},
                              {sessions_started, Get(sessions_started)},
                              {sessions_killed, Get(sessions_killed)},
                              {sessions_restarted, Get(sessions_restarted)},
                              {channels_killed, Get(channels_killed)},
                              {channels_restarted, Get(channels_restarted)},
                              {connections_killed, Get(connections_killed)},
                              {chaos_dropped_messages, Get(chaos_dropped_messages)},
                              {live_bytes, case Get(live_bytes) of -1 -> null; B -> B end},
                              {sendq_disconnects, Get(sendq_disconnects)},
                              {bad_lines, Get(bad_lines)},
                              {connection_errors, Get(connection_errors)},
                              {stop_reason, Reason}]}},
                  {validation, {[{ok, true}, {reason, null}]}},
                  {runtime, sb_sys:runtime()}]},
            {ok, Record, true}
    end.
