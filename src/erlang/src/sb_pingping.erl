%% @doc pingping (docs/spec.md 2): A and B each send R messages of B bytes to each
%% other and receive R; the clock runs from the start signals until both are done.
-module(sb_pingping).
-behaviour(sb_benchmark).
-export([name/0]).
-export([run/1]).

-spec name() -> binary().
name() -> <<"pingping">>.

-spec run(map()) -> {ok, term(), boolean()}.
run(#{message_bytes := B, repetitions := R, payload := PayloadBin} = P) ->
    Mode = binary_to_atom(PayloadBin, utf8),
    MA = sb_payload:marker(pingping_a),
    MB = sb_payload:marker(pingping_b),
    %% Buffers are built before the clock (under copy only the first message uses it).
    BufA = sb_payload:build(MA, B),
    BufB = sb_payload:build(MB, B),
    Main = self(),
    {A, RefA} = spawn_monitor(fun() -> init(Main, MA, MB, B, R, Mode, BufA) end),
    {Bp, RefB} = spawn_monitor(fun() -> init(Main, MB, MA, B, R, Mode, BufB) end),
    A ! {peer, Bp},
    Bp ! {peer, A},
    %% Both are running and know their peer before the clock starts.
    [receive {ready, Pid} -> ok end || Pid <- [A, Bp]],
    T0 = sb_sys:now_ns(),
    A ! start,
    Bp ! start,
    {RecvA, ErrA} = wait_done(A, RefA),
    {RecvB, ErrB} = wait_done(Bp, RefB),
    T1 = sb_sys:now_ns(),
    Ns = T1 - T0,
    Errors = ErrA + ErrB,
    Ok = RecvA =:= R andalso RecvB =:= R andalso Errors =:= 0,
    Record =
        {[{benchmark, <<"pingping">>},
          {language, <<"erlang">>},
          {variant, maps:get(variant, P)},
          {params, {[{message_bytes, B}, {repetitions, R}, {payload, PayloadBin}]}},
          {metrics, {[{elapsed_s, sb_sys:seconds(Ns)},
                      {messages, 2 * R},
                      {ns_per_message, Ns / (2 * R)}]}},
          {validation, {[{ok, Ok}, {received_a, RecvA}, {received_b, RecvB},
                         {payload_errors, Errors}]}},
          {runtime, sb_sys:runtime()}]},
    {ok, Record, Ok}.

wait_done(Pid, Ref) ->
    receive
        {done, Pid, Received, Errors} ->
            erlang:demonitor(Ref, [flush]),
            {Received, Errors};
        {'DOWN', Ref, process, Pid, Reason} ->
            error({pingping_process_died, Reason})
    end.

init(Main, My, PeerM, B, R, Mode, Own) ->
    Peer = receive {peer, P} -> P end,
    Main ! {ready, self()},
    receive start -> ok end,
    Peer ! Own,
    loop(Peer, Main, My, PeerM, B, R, Mode, Own, 1, 0, 0).

%% Sent counts our sends; we stop after receiving R (by then we have sent R).
loop(Peer, Main, My, PeerM, B, R, Mode, Own, Sent, Recv, Errs) ->
    receive
        Bin when is_binary(Bin) ->
            Errs1 = case sb_payload:check(Bin, B, PeerM) of
                        true -> Errs;
                        false -> Errs + 1
                    end,
            Recv1 = Recv + 1,
            Sent1 = if Sent < R ->
                            Peer ! out(Mode, Bin, My, Own),
                            Sent + 1;
                       true -> Sent
                    end,
            if Recv1 =:= R -> Main ! {done, self(), Recv1, Errs1};
               true -> loop(Peer, Main, My, PeerM, B, R, Mode, Own, Sent1, Recv1, Errs1)
            end
    end.

out(copy, Bin, My, _Own) -> sb_payload:copy(Bin, My);
out(share, _Bin, _My, Own) -> Own.
