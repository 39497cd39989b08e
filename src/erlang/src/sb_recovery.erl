%% @doc recovery (docs/spec.md "recovery"): throughput's pairs under an OTP supervisor
%% (sb_recovery_sup, one_for_one), with crashes injected at the seeded schedule every
%% language draws (SplitMix64), and every restart timed.
-module(sb_recovery).
-behaviour(sb_benchmark).
-export([name/0, run/1, schedule/4, splitmix64/1]).

-define(MASK, 16#FFFFFFFFFFFFFFFF).
-define(AGG, sb_recovery_aggregator).

-spec name() -> binary().
name() -> <<"recovery">>.

%% SplitMix64: {Draw, NextState}.
-spec splitmix64(non_neg_integer()) -> {non_neg_integer(), non_neg_integer()}.
splitmix64(S0) ->
    S = (S0 + 16#9E3779B97F4A7C15) band ?MASK,
    Z1 = ((S bxor (S bsr 30)) * 16#BF58476D1CE4E5B9) band ?MASK,
    Z2 = ((Z1 bxor (Z1 bsr 27)) * 16#94D049BB133111EB) band ?MASK,
    {Z2 bxor (Z2 bsr 31), S}.

%% Crash k at (k + u_k) / Rate s while < T: [{Seconds, Pair (1-based)}].
-spec schedule(non_neg_integer(), number(), number(), pos_integer()) -> [{float(), pos_integer()}].
schedule(_Seed, Rate, _T, _P) when Rate =< 0 -> [];
schedule(Seed, Rate, T, P) -> schedule(Seed, Rate, T, P, 0).

schedule(S0, Rate, T, P, K) ->
    {X, S1} = splitmix64(S0),
    {Y, S2} = splitmix64(S1),
    At = (K + (X bsr 11) / 9007199254740992.0) / Rate,
    case At >= T of
        true -> [];
        false -> [{At, Y rem P + 1} | schedule(S2, Rate, T, P, K + 1)]
    end.

-spec run(map()) -> {ok, term(), boolean()} | {usage, string()}.
run(#{crashes_per_s := Rate, duration_s := T}) when Rate > 0, Rate * T < 1 ->
    {usage, lists:flatten(io_lib:format(
        "--crashes-per-s ~p with --duration-s ~p expects fewer than one crash "
        "(crashes-per-s x duration-s must be >= 1, or 0 for no faults)", [Rate, T]))};
run(#{pairs := P, message_bytes := B, duration_s := T, crashes_per_s := Rate, fault := Fault,
      seed := Seed, report_every := K} = Params) ->
    %% Crash and supervisor reports are not logged: at hundreds of crashes a second
    %% their formatting would be the cost measured (a server would rate-limit them).
    #{level := LogLevel} = logger:get_primary_config(),
    logger:set_primary_config(level, critical),
    OldPrio = process_flag(priority, high),  % the injector and timer, as throughput's main
    Reg = ets:new(sb_recovery_reg, [set, public, {write_concurrency, true}, {read_concurrency, true}]),
    Lat = ets:new(sb_recovery_lat, [duplicate_bag, public, {write_concurrency, true}]),
    Cnt = counters:new(6 * P + 3, [write_concurrency]),
    Pend = atomics:new(P, []),
    Stop = atomics:new(1, []),
    Ctx = #{pairs => P, bytes => B, k => K, reg => Reg, lat => Lat, cnt => Cnt, pend => Pend,
            stop => Stop, main => self(), name => ?AGG,
            ms => sb_payload:marker(throughput_server), mc => sb_payload:marker(throughput_client),
            break => os:getenv("SERVERBENCH_RECOVERY_BREAK") =:= "1"},
    %% Every module the timed region calls is loaded first: an escript loads a module
    %% through the code server, which would compete with 2P busy workers (measured:
    %% timer's first load ended a 0.3 s window 0.7 s late).
    [{module, _} = code:ensure_loaded(M) || M <- [timer, lists, sb_sys, sb_payload, sb_recovery_sup, supervisor]],
    process_flag(trap_exit, true),  % the supervisor's end must not end the record
    {ok, Sup} = sb_recovery_sup:start_link(Ctx),
    Servers = [receive {ready, S} -> S end || _ <- lists:seq(1, P)],
    T0 = sb_sys:now_ns(),
    [S ! start || S <- Servers],
    Sched = [{At, fun() -> atomics:add(Pend, I, 1) end} || {At, I} <- schedule(Seed, Rate, T, P)],
    AggCrash = case Fault of <<"aggregator">> -> [{T / 2, fun() -> catch ?AGG ! crash end}]; _ -> [] end,
    Injected = [inject(T0, At, F) || {At, F} <- lists:keysort(1, AggCrash ++ Sched)],
    sleep_until(T0, T),
    atomics:put(Stop, 1, 1),
    Held = receive {agg_done, H} -> H
           after 2000 ->  % a pair left dead never reports: ask for what arrived
                   ?AGG ! {held, self()},
                   receive {agg_done, H} -> H after 2000 -> 0 end
           end,
    TEnd = sb_sys:now_ns(),
    process_flag(priority, OldPrio),
    unlink(Sup),
    exit(Sup, kill),
    logger:set_primary_config(level, LogLevel),
    record(Params, Ctx, Held, Injected, length(AggCrash), T0, TEnd).

inject(T0, At, F) ->
    sleep_until(T0, At),
    F(),
    sb_sys:seconds(sb_sys:now_ns() - T0).

sleep_until(T0, S) ->
    Ms = (T0 + round(S * 1.0e9) - sb_sys:now_ns()) div 1000000,
    Ms > 0 andalso timer:sleep(Ms),
    %% the last fraction of a millisecond by yielding, so no crash is injected early
    wait_ns(T0 + round(S * 1.0e9)).

wait_ns(Until) ->
    case sb_sys:now_ns() >= Until of true -> ok; false -> erlang:yield(), wait_ns(Until) end.

record(#{pairs := P, message_bytes := B, duration_s := T, crashes_per_s := Rate, fault := Fault,
         seed := Seed, report_every := K, variant := Variant},
       #{cnt := Cnt, lat := Lat}, Held, CrashTimes, AggCrashes, T0, TEnd) ->
    Sum = fun(F) -> lists:sum([counters:get(Cnt, sb_recovery_sup:slot(F, I)) || I <- lists:seq(1, P)]) end,
    Per = [counters:get(Cnt, sb_recovery_sup:slot(counted, I)) || I <- lists:seq(1, P)],
    Sent = Sum(sent), Received = Sum(received), Lost = Sum(lost), Counted = Sum(counted),
    LostExch = Sum(lost_exch) + counters:get(Cnt, sb_recovery_sup:slot(agg_lost, P)),
    Restarts = counters:get(Cnt, sb_recovery_sup:slot(restarts, P)),
    Errors = counters:get(Cnt, sb_recovery_sup:slot(payload_errors, P)),
    Alive = Sum(finished),
    Lats = [sb_sys:seconds(Ns) || {lat, Ns} <- ets:lookup(Lat, lat)],
    Samples = [[sb_sys:seconds(Ts - T0), H] || {sample, Ts, H} <- lists:keysort(2, ets:lookup(Lat, sample))]
        ++ [[sb_sys:seconds(TEnd - T0), Held]],
    Elapsed = sb_sys:seconds(TEnd - T0),
    Injected = length(CrashTimes),
    MinPair = lists:min(Per),
    Ok = Restarts =:= Injected andalso length(Lats) =:= Restarts andalso Alive =:= 2 * P
        andalso Sent =:= Received + Lost andalso Counted =:= Held + LostExch
        andalso Errors =:= 0 andalso MinPair >= 1 andalso Held > 0,
    Record =
        {[{benchmark, <<"recovery">>}, {language, <<"erlang">>}, {variant, Variant},
          {params, {[{pairs, P}, {message_bytes, B}, {duration_s, T}, {crashes_per_s, Rate},
                     {fault, Fault}, {seed, Seed}, {report_every, K}]}},
          {metrics, {[{exchanges, Held}, {elapsed_s, Elapsed},
                      {exchanges_per_s, case Elapsed > 0 of true -> Held / Elapsed; false -> 0.0 end},
                      {samples, Samples}, {crashes_injected, Injected},
                      {aggregator_crashes, AggCrashes}, {restarts, Restarts},
                      {crash_times_s, CrashTimes}, {restart_latency_s, Lats},
                      {messages_sent, Sent}, {messages_received, Received}, {messages_lost, Lost},
                      {exchanges_counted, Counted}, {exchanges_lost, LostExch},
                      {supervision, <<"OTP supervisor, one_for_one">>}]}},
          {validation, {[{ok, Ok}, {crashes_injected, Injected}, {restarts, Restarts},
                         {restart_latency_samples, length(Lats)}, {workers_alive, Alive},
                         {workers_expected, 2 * P},
                         {messages_balance, Sent =:= Received + Lost},
                         {exchanges_balance, Counted =:= Held + LostExch},
                         {payload_errors, Errors}, {min_pair_exchanges, MinPair}]}},
          {runtime, sb_sys:runtime()}]},
    {ok, Record, Ok}.
