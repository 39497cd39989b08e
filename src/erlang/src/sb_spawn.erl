%% @doc spawn (docs/spec.md 2): N dormant processes; spawn-loop time, time until all
%% have run and signalled readiness, and RSS per process.
-module(sb_spawn).
-behaviour(sb_benchmark).
-export([name/0]).
-export([run/1, dormant/3]).

-spec name() -> binary().
name() -> <<"spawn">>.

-spec run(map()) -> {ok, term(), boolean()} | {error, string()}.
run(#{processes := N} = P) ->
    Counter = atomics:new(1, []),
    Main = self(),
    Args = [Counter, N, Main],
    Before = sb_sys:rss_bytes(),
    T0ms = erlang:system_time(millisecond),
    T0 = sb_sys:now_ns(),
    %% The process table is full: fail cleanly (exit 1, one error line), never crash
    %% the VM, so no crash dump is written whatever ERL_CRASH_DUMP_BYTES says.
    try spawn_loop(N, Args) of
        ok ->
            T1 = sb_sys:now_ns(),
            T1ms = erlang:system_time(millisecond),
            receive all_ready -> ok end,
            T2 = sb_sys:now_ns(),
            After = sb_sys:rss_bytes(),
            Ready = atomics:get(Counter, 1),
            PerProc = case {Before, After} of
                          {B0, A0} when is_integer(B0), is_integer(A0) -> (A0 - B0) / N;
                          _ -> null
                      end,
            Ok = Ready =:= N,
            Record =
                {[{benchmark, <<"spawn">>},
                  {language, <<"erlang">>},
                  {variant, maps:get(variant, P)},
                  {params, {[{processes, N}] ++ sb_knobs:given([timer], P)}},
                  {metrics, {[{spawn_call_s, sb_sys:seconds(T1 - T0)},
                              {all_ready_s, sb_sys:seconds(T2 - T0)},
                              {rss_bytes_before, Before},
                              {rss_bytes_after, After},
                              {bytes_per_process, PerProc},
                              {runtime_memory_bytes, erlang:memory(processes)}]
                             ++ paper_metrics(P, (T1ms - T0ms) / 1000, sb_sys:seconds(T2 - T0))}},
                  {validation, {[{ok, Ok}, {ready, Ready}]}},
                  {runtime, sb_sys:runtime()}]
                 ++ knobs_record(P)},
            {ok, Record, Ok}
    catch
        error:system_limit ->
            {error, lists:flatten(
                      io_lib:format("system_limit: cannot spawn ~b processes (process limit ~b; raise +P)",
                                    [N, erlang:system_info(process_limit)]))}
    end.

%% paper and mixed records. timer spawn_call: what the original printed, wall-clock
%% ms around the spawn loop only (ProcessCreationLatency/erlang/maxBlocking.erl
%% lines 4-8; its io:format at line 18 inside the clock is left out: ~10 us).
paper_metrics(#{variant := <<"fair">>}, _, _) -> [];
paper_metrics(P, SpawnLoopMs, AllReady) ->
    Reported = case sb_knobs:get(timer, P) of
                   spawn_call -> SpawnLoopMs;
                   _ -> AllReady
               end,
    [{reported_elapsed_s, Reported}, {true_elapsed_s, AllReady}].

knobs_record(#{variant := <<"fair">>}) -> [];
knobs_record(P) -> [{knobs, {lists:sort(maps:to_list(maps:get(knobs, P)))}}].

spawn_loop(0, _Args) -> ok;
spawn_loop(I, Args) ->
    _ = spawn(?MODULE, dormant, Args),
    spawn_loop(I - 1, Args).

%% Signal readiness exactly once (the N-th wakes main), then wait for a message that
%% never comes.
-spec dormant(atomics:atomics_ref(), pos_integer(), pid()) -> no_return().
dormant(Counter, N, Main) ->
    case atomics:add_get(Counter, 1, 1) of
        N -> Main ! all_ready;
        _ -> ok
    end,
    receive after infinity -> ok end.
