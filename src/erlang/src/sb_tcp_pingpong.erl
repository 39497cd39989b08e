%% @doc tcp_pingpong (docs/sockets.md): C concurrent loopback
%% connections, R round trips each; the client sends the 4 bytes "Ping", the server
%% answers "Pong". gen_tcp in passive mode, a process per connection on both sides.
%% read_buffer_bytes K (1..4): bytes each side reads (gen_tcp:recv(S, K)) before it
%% answers (server) or counts a round trip (client); K = 1 reproduces the original
%% Scala program's 1-byte buffer. Both sides count every byte they move.
%%
%% Server lifecycle (sb_sockserver): bind 127.0.0.1 only, print the listening line, stop
%% on stdin EOF or the line "stop", on SIGTERM, or after idle_timeout_s with no open
%% connection; then close everything and return the record (sb_cli prints it, exit 0).
-module(sb_tcp_pingpong).
-behaviour(sb_benchmark).
-export([name/0, run/1]).

-define(MSG_BYTES, 4).
-define(BACKLOG, 1024).
%% One acceptor, as when the numbers in docs/sockets.md were measured: a pool (as
%% sb_echo_flood needs under saturation) would change what this benchmark times, so it
%% is a change to measure on its own, not part of sharing the lifecycle.
-define(ACCEPTORS, 1).
-define(C_READ, 1).
-define(C_WRITTEN, 2).
-define(C_REPLIES, 3).
-define(C_ERRORS, 4).

-spec name() -> binary().
name() -> <<"tcp_pingpong">>.

-spec run(map()) -> {ok, term(), boolean()} | {error, string()}.
run(#{role := <<"server">>} = P) -> server(P);
run(#{role := <<"client">>} = P) -> client(P).

variant(P) -> maps:get(variant, P, <<"fair">>).

%% ---------------------------------------------------------------------------
%% server

server(#{port := Port, read_buffer_bytes := K, idle_timeout_s := Idle} = P) ->
    C = counters:new(4, [write_concurrency]),
    case sb_sockserver:run(#{benchmark => <<"tcp_pingpong">>, port => Port, idle_timeout_s => Idle,
                             listen_opts => [{backlog, ?BACKLOG}], acceptors => ?ACCEPTORS,
                             handler => fun(S) -> serve(S, K, C) end}) of
        {error, _} = E -> E;
        {ok, #{port := Actual, accepted := Accepted, stop_reason := Reason, elapsed_ns := Ns}} ->
            V = case K < ?MSG_BYTES andalso variant(P) =/= <<"paper">> of
                    true -> {[{ok, false},
                              {reason, iolist_to_binary(io_lib:format(
                                  "read buffer of ~b byte(s) < the 4-byte message: the server "
                                  "answered every read, not every message", [K]))}]};
                    false -> {[{ok, true}, {reason, null}]}
                end,
            Record =
                {[{benchmark, <<"tcp_pingpong">>}, {role, <<"server">>},
                  {language, <<"erlang">>}, {variant, variant(P)},
                  {params, {[{port, Port}, {read_buffer_bytes, K}, {idle_timeout_s, Idle}]}},
                  {metrics, {[{elapsed_s, sb_sys:seconds(Ns)}, {port, Actual},
                              {connections_accepted, Accepted},
                              {bytes_read, counters:get(C, ?C_READ)},
                              {bytes_written, counters:get(C, ?C_WRITTEN)},
                              {replies, counters:get(C, ?C_REPLIES)},
                              {connection_errors, counters:get(C, ?C_ERRORS)},
                              {stop_reason, Reason}]}},
                  {validation, V},
                  {runtime, sb_sys:runtime()}]},
            {ok, Record, true}
    end.

serve(S, K, C) ->
    case gen_tcp:recv(S, K) of
        {ok, Data} ->
            counters:add(C, ?C_READ, byte_size(Data)),
            case gen_tcp:send(S, <<"Pong">>) of
                ok ->
                    counters:add(C, ?C_WRITTEN, ?MSG_BYTES),
                    counters:add(C, ?C_REPLIES, 1),
                    serve(S, K, C);
                {error, _} ->
                    counters:add(C, ?C_ERRORS, 1)
            end;
        {error, closed} -> ok;
        {error, _} -> counters:add(C, ?C_ERRORS, 1)
    end.

%% ---------------------------------------------------------------------------
%% client

client(#{host := Host, port := Port, connections := Conns, round_trips := R,
         read_buffer_bytes := K, client_timeout_s := TimeoutS} = P) ->
    {ok, Addr} = inet:parse_address(binary_to_list(Host)),
    T0 = sb_sys:now_ns(),
    Deadline = erlang:monotonic_time(millisecond) + round(TimeoutS * 1000),
    Main = self(),
    Pids = [spawn_monitor(fun() -> Main ! {result, self(), conn(Addr, Port, R, K, Deadline)} end)
            || _ <- lists:seq(1, Conns)],
    Results = [collect(Pid, Ref, Deadline) || {Pid, Ref} <- Pids],
    Ns = sb_sys:now_ns() - T0,
    DialFail = [E || {dial_error, E} <- Results],
    case DialFail of
        [First | _] ->
            {error, io_lib:format("cannot connect to ~s:~b (~b of ~b connections failed): ~p",
                                  [Host, Port, length(DialFail), Conns, First])};
        [] ->
            client_record(P, Results, Ns, Conns, R, K)
    end.

collect(Pid, Ref, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)) + 1000,
    receive
        {result, Pid, Res} -> erlang:demonitor(Ref, [flush]), Res;
        {'DOWN', Ref, process, Pid, Why} -> {0, 0, 0, 0, {died, Why}}
    after Left ->
            exit(Pid, kill),
            {0, 0, 0, 0, timeout}
    end.

conn(Addr, Port, R, K, Deadline) ->
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    case gen_tcp:connect(Addr, Port, [binary, {active, false}, {packet, raw}], Left) of
        {error, Why} -> {dial_error, Why};
        {ok, S} ->
            Res = rounds(S, R, K, Deadline, 0, 0, 0),
            catch gen_tcp:close(S),
            Res
    end.

%% {Written, Read, Counted, Completed, Error | none}
rounds(_S, 0, _K, _D, W, Rd, N) -> {W, Rd, N, Rd div ?MSG_BYTES, none};
rounds(S, Left, K, Deadline, W, Rd, N) ->
    case gen_tcp:send(S, <<"Ping">>) of
        {error, E} -> {W, Rd, N, Rd div ?MSG_BYTES, E};
        ok ->
            Wait = max(0, Deadline - erlang:monotonic_time(millisecond)),
            case gen_tcp:recv(S, K, Wait) of
                {ok, D} -> rounds(S, Left - 1, K, Deadline, W + ?MSG_BYTES, Rd + byte_size(D), N + 1);
                {error, E} -> {W + ?MSG_BYTES, Rd, N, Rd div ?MSG_BYTES, E}
            end
    end.

client_record(P, Results, Ns, Conns, R, K) ->
    Sum = fun(I) -> lists:sum([element(I, X) || X <- Results]) end,
    {W, Rd, Counted, Completed} = {Sum(1), Sum(2), Sum(3), Sum(4)},
    Errors = [E || X <- Results, (E = element(5, X)) =/= none],
    Want = ?MSG_BYTES * Conns * R,
    Us = Ns / 1000,
    TrueUs = case Completed of 0 -> null; _ -> Us / Completed end,
    Variant = variant(P),
    {Ok, Reason} =
        if Errors =/= [] ->
                {false, fmt("~b connection(s) failed: ~p", [length(Errors), hd(Errors)])};
           Variant =:= <<"paper">> andalso K < ?MSG_BYTES ->
                case W =:= Want andalso Rd =:= K * Conns * R of
                    true -> {true, null};
                    false -> {false, fmt("paper variant: expected ~b bytes written and ~b read, got ~b and ~b",
                                         [Want, K * Conns * R, W, Rd])}
                end;
           W =/= Want orelse Rd =/= Want ->
                {false, fmt("moved ~b bytes out and ~b in, expected ~b each way (4 x ~b connections x ~b "
                            "round trips); read buffer ~b byte(s): a round trip was counted per read",
                            [W, Rd, Want, Conns, R, K])};
           true -> {true, null}
        end,
    Record =
        {[{benchmark, <<"tcp_pingpong">>}, {role, <<"client">>},
          {language, <<"erlang">>}, {variant, Variant},
          {params, {[{host, maps:get(host, P)}, {connections, Conns}, {round_trips, R},
                     {read_buffer_bytes, K}, {client_timeout_s, maps:get(client_timeout_s, P)}]}},
          {metrics, {[{elapsed_s, sb_sys:seconds(Ns)}, {port, maps:get(port, P)},
                      {connections_opened, Conns},
                      {bytes_written, W}, {bytes_read, Rd},
                      {round_trips_counted, Counted}, {round_trips_completed, Completed},
                      {reported_us_per_round_trip, Us / (Conns * R)},
                      {true_us_per_round_trip, TrueUs},
                      {expected_bytes_each_way, Want},
                      {connection_errors, length(Errors)}]}},
          {validation, {[{ok, Ok}, {reason, Reason}]}},
          {runtime, sb_sys:runtime()}]},
    {ok, Record, Ok}.

fmt(F, A) -> iolist_to_binary(io_lib:format(F, A)).
