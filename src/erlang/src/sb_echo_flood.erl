%% @doc echo_flood server (docs/sockets.md): gen_tcp in passive mode,
%% a process per connection, each receiving whatever arrived and sending it back. The
%% socket buffers are raised to 16 KiB (recbuf, sndbuf and the driver's user-level
%% buffer), as the original write-up did (its default was 1,500 bytes). Connections are
%% accepted by a pool of ?ACCEPTORS processes on the one listen socket (the ranch idiom):
%% with a single acceptor, every accept waited behind all runnable connection processes,
%% and under saturation only ~600 of 1,025 connections were ever accepted. Counts bytes
%% read and echoed. The load generator is the c language's client. The lifecycle (bind
%% 127.0.0.1 only, listening line, stop on stdin EOF / "stop" / SIGTERM / idle) is sb_sockserver's.
-module(sb_echo_flood).
-behaviour(sb_benchmark).
-export([name/0, run/1]).

-define(BUFFER_BYTES, 16384).
-define(BACKLOG, 4096). % the kernel caps it at net.core.somaxconn
-define(ACCEPTORS, 100). % ranch's advice for many connections; each waits in accept
-define(C_READ, 1).
-define(C_WRITTEN, 2).
-define(C_ERRORS, 3).

-spec name() -> binary().
name() -> <<"echo_flood">>.

-spec run(map()) -> {ok, term(), boolean()} | {error, string()}.
run(#{role := <<"server">>} = P) -> server(P).

variant(P) -> maps:get(variant, P, <<"fair">>).

%% ---------------------------------------------------------------------------
%% server

server(#{port := Port, idle_timeout_s := Idle} = P) ->
    C = counters:new(3, [write_concurrency]),
    Opts = [{backlog, ?BACKLOG}, {recbuf, ?BUFFER_BYTES}, {sndbuf, ?BUFFER_BYTES},
            {buffer, ?BUFFER_BYTES}, {nodelay, true}],
    case sb_sockserver:run(#{benchmark => <<"echo_flood">>, port => Port, idle_timeout_s => Idle,
                             listen_opts => Opts, acceptors => ?ACCEPTORS,
                             handler => fun(S) -> serve(S, C) end}) of
        {error, _} = E -> E;
        {ok, #{port := Actual, accepted := Accepted, stop_reason := Reason, elapsed_ns := Ns}} ->
            Record =
                {[{benchmark, <<"echo_flood">>}, {role, <<"server">>},
                  {language, <<"erlang">>}, {variant, variant(P)},
                  {params, {[{port, Port}, {idle_timeout_s, Idle}]}},
                  {metrics, {[{elapsed_s, sb_sys:seconds(Ns)}, {port, Actual},
                              {connections_accepted, Accepted},
                              {bytes_read, counters:get(C, ?C_READ)},
                              {bytes_written, counters:get(C, ?C_WRITTEN)},
                              {connection_errors, counters:get(C, ?C_ERRORS)},
                              {stop_reason, Reason}]}},
                  {validation, {[{ok, true}, {reason, null}]}},
                  {runtime, sb_sys:runtime()}]},
            {ok, Record, true}
    end.

%% recv(S, 0): whatever has arrived, echoed as it came.
serve(S, C) ->
    case gen_tcp:recv(S, 0) of
        {ok, Data} ->
            counters:add(C, ?C_READ, byte_size(Data)),
            case gen_tcp:send(S, Data) of
                ok ->
                    counters:add(C, ?C_WRITTEN, byte_size(Data)),
                    serve(S, C);
                {error, _} ->
                    counters:add(C, ?C_ERRORS, 1)
            end;
        {error, closed} -> ok;
        {error, _} -> counters:add(C, ?C_ERRORS, 1)
    end.
