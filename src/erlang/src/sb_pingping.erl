%% @doc pingping (docs/spec.md 2): A and B each send R messages of B bytes to each
%% other and receive R; the clock runs from the start signals until both are done.
-module(sb_pingping).
-behaviour(sb_benchmark).
-export([name/0]).
-export([run/1]).

-spec name() -> binary().
name() -> <<"pingping">>.

-spec run(map()) -> {ok, term(), boolean()}.
run(#{message_bytes := B, repetitions := R, payload := PayloadBin0} = P) ->
    %% Knobs (sb_knobs; fair: send payload, match check, payload_build before_clock).
    {Mode, _Effective} = case sb_knobs:get(send, P) of
                             share -> {share, <<"share">>};
                             S when S =:= copy; S =:= clone -> {copy, <<"copy">>};
                             _ -> {binary_to_atom(PayloadBin0, utf8), PayloadBin0}
                         end,
    Match = sb_knobs:get(match, P),
    Build = sb_knobs:get(payload_build, P),
    Shape = sb_knobs:get(message_shape, P),
    MA = sb_payload:marker(pingping_a),
    %% A bound match needs both sides' payloads equal (the original's were all ones).
    MB = case Match of bound -> MA; _ -> sb_payload:marker(pingping_b) end,
    %% Buffers are built before the clock (under copy only the first message uses it),
    %% unless payload_build is in_clock: then each process builds its own after start,
    %% as ProcessCommunicationLatency/erlang/pingping.erl lines 5-6 do.
    BufA = {MA, B},
    BufB = {MB, B},
    Pre = fun({M, Bytes}) -> case Build of in_clock -> {M, Bytes}; _ -> sb_payload:build(M, Bytes) end end,
    Main = self(),
    PA = Pre(BufA),
    PB = Pre(BufB),
    Knobs = {Mode, Match, Shape},
    {A, RefA} = spawn_monitor(fun() -> init(Main, MA, MB, B, R, Knobs, PA) end),
    {Bp, RefB} = spawn_monitor(fun() -> init(Main, MB, MA, B, R, Knobs, PB) end),
    A ! {peer, Bp},
    Bp ! {peer, A},
    %% Both are running and know their peer before the clock starts.
    [receive {ready, Pid} -> ok end || Pid <- [A, Bp]],
    T0ms = erlang:system_time(millisecond),
    T0 = sb_sys:now_ns(),
    start(Shape, A, Bp, Main, R),
    start(Shape, Bp, A, Main, R),
    {RecvA, ErrA} = wait_done(A, RefA),
    {RecvB, ErrB} = wait_done(Bp, RefB),
    T1 = sb_sys:now_ns(),
    T1ms = erlang:system_time(millisecond),
    Ns = T1 - T0,
    Errors = ErrA + ErrB,
    Ok = RecvA =:= R andalso RecvB =:= R andalso Errors =:= 0,
    Record =
        {[{benchmark, <<"pingping">>},
          {language, <<"erlang">>},
          {variant, maps:get(variant, P)},
          {params, {[{message_bytes, B}, {repetitions, R}, {payload, PayloadBin0}]
                    ++ sb_knobs:given([send, match, payload_build, message_shape], P)}},
          {metrics, {[{elapsed_s, sb_sys:seconds(Ns)},
                      {messages, 2 * R},
                      {ns_per_message, Ns / (2 * R)}]
                     ++ paper_metrics(P, (T1ms - T0ms) / 1000, sb_sys:seconds(Ns))}},
          {validation, {[{ok, Ok}, {received_a, RecvA}, {received_b, RecvB},
                         {payload_errors, Errors}]}},
          {runtime, sb_sys:runtime()}]
         ++ sb_knobs_record(P)},
    {ok, Record, Ok}.

%% paper and mixed records: what the original printed (wall-clock ms, line 7-13)
%% beside the true time, and the resolved knobs.
paper_metrics(#{variant := <<"fair">>}, _, _) -> [];
paper_metrics(_, Reported, True) -> [{reported_elapsed_s, Reported}, {true_elapsed_s, True}].

sb_knobs_record(#{variant := <<"fair">>}) -> [];
sb_knobs_record(P) -> [{knobs, {lists:sort(maps:to_list(maps:get(knobs, P)))}}].

%% The start signal: `start', or under message_shape original the original's
%% {init, Parent, Dest, R} (ProcessCommunicationLatency/erlang/pingping.erl lines 8-9).
start(original, Pid, Peer, Main, R) -> Pid ! {init, Main, Peer, R};
start(_, Pid, _Peer, _Main, _R) -> Pid ! start.

wait_done(Pid, Ref) ->
    receive
        {done, Pid, Received, Errors} ->
            erlang:demonitor(Ref, [flush]),
            {Received, Errors};
        {'DOWN', Ref, process, Pid, Reason} ->
            error({pingping_process_died, Reason})
    end.

init(Main, My, PeerM, B, R, {_, _, original} = Mode, Own0) ->
    receive {peer, _} -> ok end, % the peer comes again in init, as in the original
    Main ! {ready, self()},
    %% Only init is taken here: a message the peer sent before our init waits in the
    %% mailbox for orig_loop.
    receive
        {init, Parent, Dest, R} ->
            Own = own(Own0),
            Dest ! {self(), R - 1, Own, Parent},
            orig_loop(Main, My, PeerM, B, R, Mode, Own, 0, 0)
    end;
init(Main, My, PeerM, B, R, Mode, Own0) ->
    Peer = receive {peer, P} -> P end,
    Main ! {ready, self()},
    receive start -> ok end,
    Own = own(Own0),
    Peer ! Own,
    loop(Peer, Main, My, PeerM, B, R, Mode, Own, 1, 0, 0).

%% payload_build in_clock: built here, after the start signal, as the original built it
%% (ProcessCommunicationLatency/erlang/pingping.erl lines 27-33): a B-element list, one
%% cons per byte, then list_to_binary. The bytes are ours (marker, i mod 256).
own({M, Bytes}) -> list_to_binary([M | byte_list(Bytes - 1, [])]);
own(Own) -> Own.

byte_list(0, L) -> L;
byte_list(I, L) -> byte_list(I - 1, [I band 255 | L]).

%% Sent counts our sends; we stop after receiving R (by then we have sent R).
loop(Peer, Main, My, PeerM, B, R, {_, bound, _} = Mode, Own, Sent, Recv, Errs) ->
    %% The original's receive pattern holds the process's own payload as a bound
    %% variable (ProcessCommunicationLatency/erlang/pingping.erl lines 15-24): every
    %% receive compares the whole message with it.
    receive
        Own -> step(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs, Own);
        Bin when is_binary(Bin) -> step(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs + 1, Bin)
    end;
loop(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs) ->
    receive
        Bin when is_binary(Bin) ->
            Errs1 = case sb_payload:check(Bin, B, PeerM) of
                        true -> Errs;
                        false -> Errs + 1
                    end,
            step(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs1, Bin)
    end.

step(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs1, Bin) ->
    Recv1 = Recv + 1,
    Sent1 = if Sent < R ->
                    Peer ! out(Mode, Bin, My, Own),
                    Sent + 1;
               true -> Sent
            end,
    if Recv1 =:= R -> Main ! {done, self(), Recv1, Errs1};
       true -> loop(Peer, Main, My, PeerM, B, R, Mode, Own, Sent1, Recv1, Errs1)
    end.

out({copy, _, _}, Bin, My, _Own) -> sb_payload:copy(Bin, My);
out({share, _, _}, _Bin, _My, Own) -> Own.

%% message_shape original (ProcessCommunicationLatency/erlang/pingping.erl lines 15-25):
%% every message is the 4-tuple {From, Counter, Payload, Parent}; the receiver replies
%% {self(), Counter - 1, ..., Parent} to From unless Counter is 0. The receive has the
%% original's three clauses in its order: init (only ever taken in init/7; kept so every
%% receive tests it, as the original's does), a clause guarded Counter =:= 0, and the
%% general one. Under match bound both clauses hold the process's own payload as a bound
%% variable, as the original's Data (OTP 25 compiles one full compare shared by both
%% clauses, then the Counter test: the same instructions as for the original).
%% The original's process stops at its Counter-0 message; ours stops after receiving R
%% (the same message when the two chains stay in step; never a lost message otherwise).
orig_loop(Main, My, PeerM, B, R, {_, bound, _} = Mode, Own, Recv, Errs) ->
    receive
        {init, _Parent, _Dest, _R} ->
            orig_loop(Main, My, PeerM, B, R, Mode, Own, Recv, Errs);
        {_From, C, Own, _Parent} when C =:= 0 ->
            orig_next(Main, My, PeerM, B, R, Mode, Own, Recv + 1, Errs);
        {From, C, Own, Parent} ->
            From ! {self(), C - 1, out(Mode, Own, My, Own), Parent},
            orig_next(Main, My, PeerM, B, R, Mode, Own, Recv + 1, Errs);
        {From, C, Bin, Parent} when is_binary(Bin) -> % not our payload: an error, not a hang
            C =:= 0 orelse From ! {self(), C - 1, out(Mode, Bin, My, Own), Parent},
            orig_next(Main, My, PeerM, B, R, Mode, Own, Recv + 1, Errs + 1)
    end;
orig_loop(Main, My, PeerM, B, R, Mode, Own, Recv, Errs) ->
    receive
        {init, _Parent, _Dest, _R} ->
            orig_loop(Main, My, PeerM, B, R, Mode, Own, Recv, Errs);
        {_From, C, Bin, _Parent} when C =:= 0 ->
            orig_next(Main, My, PeerM, B, R, Mode, Own, Recv + 1, Errs + errors(Bin, B, PeerM));
        {From, C, Bin, Parent} ->
            Errs1 = Errs + errors(Bin, B, PeerM),
            From ! {self(), C - 1, out(Mode, Bin, My, Own), Parent},
            orig_next(Main, My, PeerM, B, R, Mode, Own, Recv + 1, Errs1)
    end.

orig_next(Main, _My, _PeerM, _B, R, _Mode, _Own, R, Errs) -> Main ! {done, self(), R, Errs};
orig_next(Main, My, PeerM, B, R, Mode, Own, Recv, Errs) ->
    orig_loop(Main, My, PeerM, B, R, Mode, Own, Recv, Errs).

errors(Bin, B, PeerM) when is_binary(Bin) ->
    case sb_payload:check(Bin, B, PeerM) of
        true -> 0;
        false -> 1
    end;
errors(_, _, _) -> 1.
