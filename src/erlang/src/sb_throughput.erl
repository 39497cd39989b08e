%% @doc throughput (docs/spec.md 2): P server/client pairs exchange messages for T
%% seconds; one aggregator sums the servers' reports.
-module(sb_throughput).
-behaviour(sb_benchmark).
-export([name/0]).
-export([run/1]).

%% spec/cli.json throughput_sample_min_interval_s (checked by a test).
-define(SAMPLE_MIN_INTERVAL_NS, 100000000).
%% counting batched: the original's servers report every 100 exchanges
%% (maxSpeakers.erl lines 34-36) and never the rest.
-define(ORIGINAL_BATCH, 100).

-spec name() -> binary().
name() -> <<"throughput">>.

-spec run(map()) -> {ok, term(), boolean()}.
run(#{pairs := NP, message_bytes := B, duration_s := T, report_every := K0,
      payload := PayloadBin0} = P) ->
    %% Knobs (sb_knobs; fair: send payload, match check, counting exact, window
    %% drain, priority high). The original: ConcurrentProcessesThroughput/erlang/
    %% maxSpeakers.erl.
    {Mode, _Effective} = case sb_knobs:get(send, P) of
                             share -> {echo, <<"share">>};  % line 53: the client echoes Data
                             S when S =:= copy; S =:= clone -> {copy, <<"copy">>};
                             _ -> {binary_to_atom(PayloadBin0, utf8), PayloadBin0}
                         end,
    Match = sb_knobs:get(match, P),
    Batched = sb_knobs:get(counting, P) =:= batched,
    K = case Batched of true -> ?ORIGINAL_BATCH; false -> K0 end,
    Prio = case sb_knobs:get(priority, P) of max -> max; _ -> high end,
    MS = sb_payload:marker(throughput_server),
    %% A bound match (line 43) needs the answer equal to the server's own payload.
    %% An echo (send share) comes back with the server's own marker too.
    MC = case {Match, Mode} of
             {bound, _} -> MS;
             {_, echo} -> MS;
             _ -> sb_payload:marker(throughput_client)
         end,
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
    OldPrio = process_flag(priority, Prio),
    %% window original: the original's aggregator times from its own spawn, before
    %% the pairs exist (line 7).
    AggStartMs = erlang:system_time(millisecond),
    Agg = spawn_opt(fun() -> agg_init(Main, NP) end, [link, {priority, Prio}]),
    Servers = [spawn_link(fun() -> server_init(Main, Agg, Flag, ClientErrs, B, K, {Mode, Match},
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
    %% What the original printed (line 17, 63): the aggregator's sum when "Show"
    %% reaches it, behind every report already queued.
    Shown = case maps:get(variant, P) of
                <<"fair">> -> none;
                _ -> Agg ! {show, self()}, receive {shown, Agg, S0, Ms} -> {S0, Ms} end
            end,
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
                     {report_every, K0}, {payload, PayloadBin0}]
                    ++ sb_knobs:given([send, match, counting, window, priority], P)}},
          {metrics, {[{exchanges, Reported},
                      {elapsed_s, Elapsed},
                      {exchanges_per_s, PerS},
                      {paper_msgs_per_min, PerS * 60},
                      {samples, Samples}]
                     ++ paper_metrics(P, Shown, AggStartMs, Batched, K, Reported, Elapsed)}},
          {validation, {[{ok, Ok}, {reported_exchanges, Reported},
                         {counted_exchanges, Counted}, {payload_errors, Errors},
                         {min_pair_exchanges, MinPair}]}},
          {runtime, sb_sys:runtime()}]
         ++ knobs_record(P)},
    {ok, Record, Ok}.

paper_metrics(_, none, _, _, _, _, _) -> [];
paper_metrics(P, {BatchSum, ShowMs}, AggStartMs, Batched, K, True, Elapsed) ->
    N = case Batched of true -> BatchSum; false -> True end,
    S = case sb_knobs:get(window, P) of
            original -> (ShowMs - AggStartMs) / 1000;
            _ -> Elapsed
        end,
    PerMin = fun(_, 0.0) -> 0.0; (X, Y) -> X / Y * 60 end,
    [{reported_printed, true}, {reported_exchanges, N}, {reported_elapsed_s, S},
     {reported_msgs_per_min, PerMin(N, S)}, {true_exchanges, True}, {true_elapsed_s, Elapsed},
     {true_msgs_per_min, PerMin(True, Elapsed)}, {batch_size, K}].

knobs_record(#{variant := <<"fair">>}) -> [];
knobs_record(P) -> [{knobs, {lists:sort(maps:to_list(maps:get(knobs, P)))}}].

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

server_loop(C, Agg, Flag, B, K, {_, bound} = Mode, My, PeerM, Own, Count, Errs) ->
    %% The original's receive pattern {"Done", Pid, Data} holds the server's payload
    %% bound (line 43): every answer is compared with it in full.
    receive
        Own -> exchange(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs, Own);
        Bin when is_binary(Bin) -> exchange(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs + 1, Bin)
    end;
server_loop(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs) ->
    receive
        Bin when is_binary(Bin) ->
            Errs1 = case sb_payload:check(Bin, B, PeerM) of
                        true -> Errs;
                        false -> Errs + 1
                    end,
            exchange(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs1, Bin)
    end.

exchange(C, Agg, Flag, B, K, Mode, My, PeerM, Own, Count, Errs1, Bin) ->
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

out({Mode, _}, Bin, My, Own) -> out(Mode, Bin, My, Own);
out(copy, Bin, My, _Own) -> sb_payload:copy(Bin, My);
out(share, _Bin, _My, Own) -> Own;
out(echo, Bin, _My, _Own) -> Bin.

%% ---------------------------------------------------------------------------
%% aggregator: sums reports; samples [t_s, cumulative] at most every 0.1 s.

agg_init(Main, NP) ->
    T0 = receive {start, T} -> T end,
    agg_loop(#{main => Main, n => NP, t0 => T0, last => T0, sum => 0, finals => 0,
               counted => 0, errors => 0, min => undefined, samples => []}).

agg_loop(#{sum := Sum, last := Last, t0 := T0, samples := Samples} = St) ->
    receive
        {show, From} ->
            From ! {shown, self(), Sum, erlang:system_time(millisecond)},
            agg_loop(St);
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
