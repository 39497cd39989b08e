%% @doc throughput (docs/spec.md 2): P server/client pairs exchange messages for T
%% seconds; one aggregator sums the servers' reports.
-module(sb_throughput).
-behaviour(sb_benchmark).
-export([name/0]).
-export([run/1]).

%% spec/cli.json throughput_sample_min_interval_s (checked by a test).
-define(SAMPLE_MIN_INTERVAL_NS, 100000000).

-spec name() -> binary().
name() -> <<"throughput">>.

-spec run(map()) -> {ok, term(), boolean()}.
run(#{pairs := NP, message_bytes := B, duration_s := T, report_every := K,
      payload := PayloadBin} = P) ->
    Mode = binary_to_atom(PayloadBin, utf8),
    MS = sb_payload:marker(throughput_server),
    MC = sb_payload:marker(throughput_client),
    BufS = sb_payload:build(MS, B),
    BufC = sb_payload:build(MC, B),
    Main = self(),
    %% One atomic is the stop flag: each server reads it once per exchange. (Not
    %% persistent_term: changing one makes every process be scanned.)
    Flag = atomics:new(1, []),
    %% Clients add their (normally zero) failed checks here, before they answer, so
    %% the count is complete once every server's final report is in.
    ClientErrs = atomics:new(1, []),
    %% Main (start signals, timer, stop flag) and the aggregator (sample times) run
    %% at high priority: they do little work, but at normal priority they would
    %% wait behind all 2P busy workers for every step (measured: with 30,000 pairs
    %% the start loop and the 1 s timer ended seconds late).
    OldPrio = process_flag(priority, high),
    Agg = spawn_opt(fun() -> agg_init(Main, NP) end, [link, {priority, high}]),
    Servers = [spawn_link(fun() -> server_init(Main, Agg, Flag, ClientErrs, B, K, Mode,
                                               MS, MC, BufS, BufC)
                          end)
               || _ <- lists:seq(1, NP)],
    %% Every pair exists and knows its peer before the clock starts. (Count readies
    %% in arrival order: a selective receive per pid would be quadratic in P.)
    ok = wait_ready(NP),
    T0 = sb_sys:now_ns(),
    Agg ! {start, T0},
    [S ! start || S <- Servers],
    Deadline = erlang:convert_time_unit(T0 + round(T * 1.0e9), nanosecond, millisecond) + 1,
    erlang:start_timer(Deadline, self(), stop, [{abs, true}]),
    receive {timeout, _, stop} -> ok end,
    atomics:put(Flag, 1, 1),
    {Reported, Counted, ServerErrors, MinPair, TEnd, Samples} =
        receive {agg_done, Agg, Result} -> Result end,
    Errors = ServerErrors + atomics:get(ClientErrs, 1),
    process_flag(priority, OldPrio),
    Ns = TEnd - T0,
    Elapsed = sb_sys:seconds(Ns),
    PerS = case Ns of 0 -> 0.0; _ -> Reported / Elapsed end,
    Ok = Reported =:= Counted andalso Errors =:= 0 andalso MinPair >= 1,
    Record =
        {[{benchmark, <<"throughput">>},
          {language, <<"erlang">>},
          {variant, maps:get(variant, P)},
          {params, {[{pairs, NP}, {message_bytes, B}, {duration_s, T},
                     {report_every, K}, {payload, PayloadBin}]}},
          {metrics, {[{exchanges, Reported},
                      {elapsed_s, Elapsed},
                      {exchanges_per_s, PerS},
                      {paper_msgs_per_min, PerS * 60},
                      {samples, Samples}]}},
          {validation, {[{ok, Ok}, {reported_exchanges, Reported},
                         {counted_exchanges, Counted}, {payload_errors, Errors},
                         {min_pair_exchanges, MinPair}]}},
          {runtime, sb_sys:runtime()}]},
    {ok, Record, Ok}.

wait_ready(0) -> ok;
wait_ready(N) -> receive {ready, _} -> wait_ready(N - 1) end.

%% ---------------------------------------------------------------------------
%% server: send, get the answer back and check it = one exchange.

server_init(Main, Agg, Flag, ClientErrs, B, K, Mode, My, PeerM, Own, ClientOwn) ->
    Server = self(),
    C = spawn_link(fun() -> client_loop(Server, ClientErrs, B, Mode, PeerM, My, ClientOwn) end),
    Main ! {ready, Server},
    receive start -> ok end,
    C ! Own,
    server_loop(C, Agg, Flag, B, K, Mode, My, PeerM, Own, 0, 0).

server_loop(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs) ->
    receive
        Bin when is_binary(Bin) ->
            Errs1 = case sb_payload:check(Bin, B, PeerM) of
                        true -> Errs;
                        false -> Errs + 1
                    end,
            Count1 = Count + 1,
            case Count1 rem K of
                0 -> Agg ! {report, K};
                _ -> ok
            end,
            case atomics:get(Flag, 1) of
                0 ->
                    C ! out(Mode, Bin, My, Own),
                    server_loop(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count1, Errs1);
                _ ->
                    Agg ! {final, Count1 rem K, Count1, Errs1},
                    %% Nothing is in flight, so the client is idle: end it without a
                    %% round trip (unlinked first, so no exit signal reaches us).
                    unlink(C),
                    exit(C, kill)
            end
    end.

%% client: check, answer (a fresh copy under copy).
client_loop(S, ClientErrs, B, Mode, My, PeerM, Own) ->
    receive
        Bin when is_binary(Bin) ->
            case sb_payload:check(Bin, B, PeerM) of
                true -> ok;
                false -> atomics:add(ClientErrs, 1, 1)
            end,
            S ! out(Mode, Bin, My, Own),
            client_loop(S, ClientErrs, B, Mode, My, PeerM, Own)
    end.

out(copy, Bin, My, _Own) -> sb_payload:copy(Bin, My);
out(share, _Bin, _My, Own) -> Own.

%% ---------------------------------------------------------------------------
%% aggregator: sums reports; samples [t_s, cumulative] at most every 0.1 s.

agg_init(Main, NP) ->
    T0 = receive {start, T} -> T end,
    agg_loop(#{main => Main, n => NP, t0 => T0, last => T0, sum => 0, finals => 0,
               counted => 0, errors => 0, min => undefined, samples => []}).

agg_loop(#{sum := Sum, last := Last, t0 := T0, samples := Samples} = St) ->
    receive
        {report, K} ->
            Sum1 = Sum + K,
            Now = sb_sys:now_ns(),
            if Now - Last >= ?SAMPLE_MIN_INTERVAL_NS ->
                    agg_loop(St#{sum := Sum1, last := Now,
                                 samples := [[sb_sys:seconds(Now - T0), Sum1] | Samples]});
               true ->
                    agg_loop(St#{sum := Sum1})
            end;
        {final, Rem, Total, Errs} ->
            #{finals := F, counted := C, errors := E, min := Min, n := NP} = St,
            St1 = St#{sum := Sum + Rem, finals := F + 1, counted := C + Total,
                      errors := E + Errs, min := min_pair(Min, Total)},
            case F + 1 of
                NP -> agg_finish(St1);
                _ -> agg_loop(St1)
            end
    end.

agg_finish(#{main := Main, t0 := T0, sum := Sum, counted := C, errors := E, min := Min,
             samples := Samples}) ->
    TEnd = sb_sys:now_ns(),
    Final = [sb_sys:seconds(TEnd - T0), Sum],
    Main ! {agg_done, self(), {Sum, C, E, Min, TEnd, lists:reverse([Final | Samples])}}.

min_pair(undefined, X) -> X;
min_pair(M, X) -> min(M, X).
