%% @doc recovery's processes (docs/spec.md "recovery"): an OTP supervisor, one_for_one,
%% whose children are the aggregator, P clients and P servers. A server raises
%% error(injected_crash) in its own code when the injector marked its pair; the
%% supervisor restarts it, and the new incarnation looks its client up and resumes the
%% pair by sending a fresh message. What must outlive a crash (counts, crash times) is
%% written by the crash hook just before it raises, into counters/ETS outside it.
-module(sb_recovery_sup).
-behaviour(supervisor).
-export([start_link/1, init/1, agg_start/1, client_start/2, server_start/2, slot/2]).

%% counters slots: per pair I (1-based) the block (I-1)*6 + 1..6; after the pairs:
-define(SENT, 1).
-define(RECEIVED, 2).
-define(LOST, 3).
-define(COUNTED, 4).
-define(LOST_EXCH, 5).
-define(FINISHED, 6).
%% global slots (after the P blocks): restarts, exchanges lost by the aggregator
-spec slot(atom(), pos_integer()) -> pos_integer().
slot(restarts, P) -> 6 * P + 1;
slot(agg_lost, P) -> 6 * P + 2;
slot(payload_errors, P) -> 6 * P + 3;
slot(Field, I) -> (I - 1) * 6 + field(Field).

field(sent) -> ?SENT;
field(received) -> ?RECEIVED;
field(lost) -> ?LOST;
field(counted) -> ?COUNTED;
field(lost_exch) -> ?LOST_EXCH;
field(finished) -> ?FINISHED.

-spec start_link(map()) -> {ok, pid()}.
start_link(Ctx) -> supervisor:start_link(?MODULE, Ctx).

-spec init(map()) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init(#{pairs := P, break := Break} = Ctx) ->
    %% Intensity 10^6 per second: the supervisor must not give up at the rates measured.
    Flags = #{strategy => one_for_one, intensity => 1000000, period => 1},
    %% transient: a server that ends at the stop is not restarted; temporary (the
    %% broken-restart test hook): a crashed server stays dead.
    ServerRestart = case Break of true -> temporary; false -> transient end,
    Agg = #{id => agg, start => {?MODULE, agg_start, [Ctx]}, restart => transient},
    Clients = [#{id => {client, I}, start => {?MODULE, client_start, [Ctx, I]}, restart => transient}
               || I <- lists:seq(1, P)],
    Servers = [#{id => {server, I}, start => {?MODULE, server_start, [Ctx, I]}, restart => ServerRestart}
               || I <- lists:seq(1, P)],
    {ok, {Flags, [Agg | Clients] ++ Servers}}.

%% ---------------------------------------------------------------------------
%% aggregator: registered, so a server finds the current incarnation by name.

-spec agg_start(map()) -> {ok, pid()}.
agg_start(Ctx) ->
    Pid = spawn_link(fun() -> agg_init(Ctx) end),
    {ok, Pid}.

agg_init(#{reg := Reg, cnt := Cnt, pairs := P, name := Name} = Ctx) ->
    register(Name, self()),
    Restarted = ets:update_counter(Reg, agg_gen, 1, {agg_gen, 0}) > 1,
    Restarted andalso counters:add(Cnt, slot(restarts, P), 1),
    agg_loop(Ctx, 0, 0, sb_sys:now_ns() - 100000000).

agg_loop(#{reg := Reg, cnt := Cnt, pairs := P, lat := Lat, main := Main} = Ctx, Held, Finals, Last) ->
    receive
        crash ->
            %% The state dies with it; so do reports already in its mailbox: unregister
            %% first (a later report finds no aggregator and its sender counts it), then
            %% count what is queued.
            unregister(maps:get(name, Ctx)),
            counters:add(Cnt, slot(agg_lost, P), Held + drain(0)),
            ets:insert(Reg, {agg_await, [sb_sys:now_ns() | await(Reg, agg_await)]}),
            error(injected_crash);
        {report, N, Final} ->
            Now = sb_sys:now_ns(),
            case await(Reg, agg_await) of
                [] -> ok;
                Ts -> [ets:insert(Lat, {lat, Now - T}) || T <- Ts], ets:insert(Reg, {agg_await, []})
            end,
            Held1 = Held + N,
            Last1 = case Now - Last >= 100000000 of
                        true -> ets:insert(Lat, {sample, Now, Held1}), Now;
                        false -> Last
                    end,
            Finals1 = case Final of true -> Finals + 1; false -> Finals end,
            case Finals1 =:= P of
                true -> Main ! {agg_done, Held1}, agg_idle(Held1);
                false -> agg_loop(Ctx, Held1, Finals1, Last1)
            end;
        {held, From} ->
            From ! {agg_done, Held},
            agg_loop(Ctx, Held, Finals, Last)
    end.

drain(N) ->
    receive {report, M, _} -> drain(N + M) after 0 -> N end.

agg_idle(Held) -> receive {held, From} -> From ! {agg_done, Held}, agg_idle(Held) end.

await(Reg, Key) ->
    case ets:lookup(Reg, Key) of [{_, Ts}] -> Ts; [] -> [] end.

%% ---------------------------------------------------------------------------
%% client: never a victim; answers the server that sent the message.

-spec client_start(map(), pos_integer()) -> {ok, pid()}.
client_start(Ctx, I) ->
    Pid = spawn_link(fun() -> client_init(Ctx, I) end),
    {ok, Pid}.

client_init(#{reg := Reg, bytes := B, mc := MC} = Ctx, I) ->
    ets:insert(Reg, {{client, I}, self()}),
    client_loop(Ctx, I, B, MC, sb_payload:marker(throughput_server), 0, 0).

client_loop(#{cnt := Cnt} = Ctx, I, B, My, Peer, Sent, Received) ->
    receive
        {S, Bin} when is_binary(Bin) ->
            _ = sb_payload:check(Bin, B, Peer),  % a bad message is counted by the server's check
            S ! sb_payload:copy(Bin, My),
            client_loop(Ctx, I, B, My, Peer, Sent + 1, Received + 1);
        {stop, S} ->
            counters:add(Cnt, slot(sent, I), Sent),
            counters:add(Cnt, slot(received, I), Received),
            counters:add(Cnt, slot(finished, I), 1),
            S ! {stopped, self()}
    end.

%% ---------------------------------------------------------------------------
%% server: the pair's initiator and the fault's victim.

-spec server_start(map(), pos_integer()) -> {ok, pid()}.
server_start(Ctx, I) ->
    Pid = spawn_link(fun() -> server_init(Ctx, I) end),
    {ok, Pid}.

server_init(#{reg := Reg, cnt := Cnt, pairs := P, main := Main, bytes := B, ms := MS} = Ctx, I) ->
    case ets:update_counter(Reg, {gen, I}, 1, {{gen, I}, 0}) of
        1 -> Main ! {ready, self()}, receive start -> ok end;  % the first incarnation waits for the clock
        _ -> counters:add(Cnt, slot(restarts, P), 1)
    end,
    [{_, C}] = ets:lookup(Reg, {client, I}),
    Own = sb_payload:build(MS, B),
    C ! {self(), Own},
    server_loop(Ctx, I, C, await(Reg, {await, I}), 1, 0, 0, 0).

server_loop(#{pend := Pend, cnt := Cnt, bytes := B, k := K, stop := Stop, mc := MC, ms := MS, reg := Reg} = Ctx,
            I, C, Await, Sent, Received, Count, Unrep) ->
    receive
        Bin when is_binary(Bin) ->
            case atomics:get(Pend, I) > 0 of
                true ->  % the fault, raised in the server's own code; the reply dies with it
                    atomics:sub(Pend, I, 1),
                    counters:add(Cnt, slot(sent, I), Sent),
                    counters:add(Cnt, slot(received, I), Received),
                    counters:add(Cnt, slot(lost, I), 1),
                    counters:add(Cnt, slot(counted, I), Count),
                    counters:add(Cnt, slot(lost_exch, I), Unrep),
                    ets:insert(Reg, {{await, I}, [sb_sys:now_ns() | Await]}),
                    error(injected_crash);
                false -> ok
            end,
            sb_payload:check(Bin, B, MC) orelse counters:add(Cnt, slot(payload_errors, maps:get(pairs, Ctx)), 1),
            Await1 = case Await of
                         [] -> [];
                         Ts -> first_exchange(Ctx, I, Ts)
                     end,
            Unrep1 = case Unrep + 1 of
                         K -> report(Ctx, I, K, false), 0;
                         U -> U
                     end,
            case atomics:get(Stop, 1) =/= 0 andalso atomics:get(Pend, I) =:= 0 of
                true ->
                    counters:add(Cnt, slot(sent, I), Sent),
                    counters:add(Cnt, slot(received, I), Received + 1),
                    counters:add(Cnt, slot(counted, I), Count + 1),
                    C ! {stop, self()},
                    receive {stopped, C} -> ok end,
                    counters:add(Cnt, slot(finished, I), 1),
                    report(Ctx, I, Unrep1, true);  % last: main reads the counters after it
                false ->
                    C ! {self(), sb_payload:copy(Bin, MS)},
                    server_loop(Ctx, I, C, Await1, Sent + 1, Received + 1, Count + 1, Unrep1)
            end
    end.

first_exchange(#{lat := Lat, reg := Reg}, I, Ts) ->
    Now = sb_sys:now_ns(),
    [ets:insert(Lat, {lat, Now - T}) || T <- Ts],
    ets:insert(Reg, {{await, I}, []}),
    [].

%% A report that finds no aggregator (it is restarting) is lost and counted; a final
%% one waits for the new aggregator, so that the run can end.
report(#{name := Name, cnt := Cnt} = Ctx, I, N, Final) ->
    try Name ! {report, N, Final}, ok
    catch error:badarg when Final ->
            receive after 1 -> ok end,
            report(Ctx, I, N, Final);
          error:badarg ->
            counters:add(Cnt, slot(lost_exch, I), N)
    end.
