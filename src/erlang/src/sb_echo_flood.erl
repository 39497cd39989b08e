%% @doc echo_flood server (docs/spec.md "Socket benchmarks"): gen_tcp in passive mode,
%% a process per connection, each receiving whatever arrived and sending it back. The
%% socket buffers are raised to 16 KiB (recbuf, sndbuf and the driver's user-level
%% buffer), as the original write-up did (its default was 1,500 bytes). Connections are
%% accepted by a pool of ?ACCEPTORS processes on the one listen socket (the ranch idiom):
%% with a single acceptor, every accept waited behind all runnable connection processes,
%% and under saturation only ~600 of 1,025 connections were ever accepted. Counts bytes
%% read and echoed. The load generator is the c language's client. Lifecycle as sb_tcp_pingpong
%% (bind 127.0.0.1 only, listening line, stop on stdin EOF / "stop" / SIGTERM / idle).
-module(sb_echo_flood).
-behaviour(sb_benchmark).
-behaviour(gen_event).
-export([name/0, run/1]).
%% gen_event callbacks: SIGTERM arrives through erl_signal_server.
-export([init/1, handle_event/2, handle_call/2, handle_info/2, terminate/2, code_change/3]).

-define(LOOPBACK, {127, 0, 0, 1}).
-define(BUFFER_BYTES, 16384).
-define(BACKLOG, 4096). % the kernel caps it at net.core.somaxconn
-define(ACCEPTORS, 100). % ranch's advice for many connections; each waits in accept
-define(TICK_MS, 100).
-define(STOP_GRACE_MS, 5000).
-define(C_READ, 1).
-define(C_WRITTEN, 2).
-define(C_ACCEPTED, 4).
-define(C_ERRORS, 5).

-spec name() -> binary().
name() -> <<"echo_flood">>.

-spec run(map()) -> {ok, term(), boolean()} | {error, string()}.
run(#{role := <<"server">>} = P) -> server(P).

variant(P) -> maps:get(variant, P, <<"fair">>).

%% ---------------------------------------------------------------------------
%% server

server(#{port := Port, idle_timeout_s := Idle} = P) ->
    K = 0,
    Opts = [binary, {active, false}, {packet, raw}, {ip, ?LOOPBACK}, {backlog, ?BACKLOG},
            {recbuf, ?BUFFER_BYTES}, {sndbuf, ?BUFFER_BYTES}, {buffer, ?BUFFER_BYTES}, {nodelay, true}],
    case gen_tcp:listen(Port, Opts) of
        {error, Why} ->
            {error, io_lib:format("cannot listen on 127.0.0.1 port ~b: ~p", [Port, Why])};
        {ok, L} ->
            {ok, Actual} = inet:port(L),
            T0 = sb_sys:now_ns(),
            io:put_chars(["{\"event\":\"listening\",\"benchmark\":\"echo_flood\",\"role\":\"server\","
                          "\"language\":\"erlang\",\"address\":\"127.0.0.1\",\"port\":",
                          integer_to_list(Actual), "}\n"]),
            Main = self(),
            C = counters:new(5, [write_concurrency]),
            watch_stdin(Main),
            watch_sigterm(Main),
            %% L stays owned by this process, which outlives the acceptors.
            Accs = [spawn_link(fun() -> accept_loop(L, Main, K, C) end) || _ <- lists:seq(1, ?ACCEPTORS)],
            {Reason, Open} = server_loop(#{}, erlang:monotonic_time(millisecond), round(Idle * 1000)),
            [begin unlink(A), exit(A, kill) end || A <- Accs],
            catch gen_tcp:close(L),
            Handlers = collect_handlers(maps:keys(Open)),
            [exit(H, shutdown) || H <- Handlers],
            wait_down(Handlers, erlang:monotonic_time(millisecond) + ?STOP_GRACE_MS),
            Ns = sb_sys:now_ns() - T0,
            V = {[{ok, true}, {reason, null}]},
            Record =
                {[{benchmark, <<"echo_flood">>}, {role, <<"server">>},
                  {language, <<"erlang">>}, {variant, variant(P)},
                  {params, {[{port, Port}, {idle_timeout_s, Idle}]}},
                  {metrics, {[{elapsed_s, sb_sys:seconds(Ns)}, {port, Actual},
                              {connections_accepted, counters:get(C, ?C_ACCEPTED)},
                              {bytes_read, counters:get(C, ?C_READ)},
                              {bytes_written, counters:get(C, ?C_WRITTEN)},
                              {connection_errors, counters:get(C, ?C_ERRORS)},
                              {stop_reason, Reason}]}},
                  {validation, V},
                  {runtime, sb_sys:runtime()}]},
            {ok, Record, true}
    end.

%% Open connections by handler pid; LastIdle: when the count last became 0.
server_loop(Open, LastIdle, IdleMs) ->
    receive
        {stop, Reason} -> {Reason, Open};
        {opened, H} -> server_loop(Open#{H => true}, LastIdle, IdleMs);
        {closed, H} ->
            Open1 = maps:remove(H, Open),
            Last = case map_size(Open1) of
                       0 -> erlang:monotonic_time(millisecond);
                       _ -> LastIdle
                   end,
            server_loop(Open1, Last, IdleMs)
    after ?TICK_MS ->
            Now = erlang:monotonic_time(millisecond),
            case map_size(Open) =:= 0 andalso Now - LastIdle >= IdleMs of
                true -> {<<"idle_timeout">>, Open};
                false -> server_loop(Open, LastIdle, IdleMs)
            end
    end.

%% The handlers still alive: the open ones plus any whose {opened, _} is unread.
collect_handlers(Acc) ->
    receive
        {opened, H} -> collect_handlers([H | Acc]);
        {closed, H} -> collect_handlers(lists:delete(H, Acc))
    after 0 -> Acc
    end.

wait_down([], _) -> ok;
wait_down([H | T], Deadline) ->
    Ref = monitor(process, H),
    Left = max(0, Deadline - erlang:monotonic_time(millisecond)),
    receive {'DOWN', Ref, process, H, _} -> wait_down(T, Deadline)
    after Left -> ok
    end.

accept_loop(L, Main, K, C) ->
    case gen_tcp:accept(L) of
        {ok, S} ->
            counters:add(C, ?C_ACCEPTED, 1),
            H = spawn(fun() -> receive go -> ok end, handle(S, Main, K, C) end),
            Main ! {opened, H},
            ok = gen_tcp:controlling_process(S, H),
            H ! go,
            accept_loop(L, Main, K, C);
        {error, _} ->
            ok
    end.

handle(S, Main, K, C) ->
    serve(S, K, C),
    catch gen_tcp:close(S),
    Main ! {closed, self()}.

serve(S, K, C) ->
    case gen_tcp:recv(S, K) of
        {ok, Data} ->
            counters:add(C, ?C_READ, byte_size(Data)),
            case gen_tcp:send(S, Data) of
                ok ->
                    counters:add(C, ?C_WRITTEN, byte_size(Data)),
                    serve(S, K, C);
                {error, _} ->
                    counters:add(C, ?C_ERRORS, 1)
            end;
        {error, closed} -> ok;
        {error, _} -> counters:add(C, ?C_ERRORS, 1)
    end.

watch_stdin(Main) ->
    spawn_link(fun() -> stdin_loop(Main) end).

stdin_loop(Main) ->
    case io:get_line("") of
        eof -> Main ! {stop, <<"stdin_eof">>};
        {error, _} -> Main ! {stop, <<"stdin_eof">>};
        Line ->
            case string:trim(Line) of
                "stop" -> Main ! {stop, <<"stop_line">>};
                _ -> stdin_loop(Main)
            end
    end.

watch_sigterm(Main) ->
    _ = os:set_signal(sigterm, handle),
    ok = gen_event:swap_handler(erl_signal_server, {erl_signal_handler, []}, {?MODULE, Main}).

%% gen_event: SIGTERM -> stop the server (the default handler would halt the VM
%% before the record is printed).
init({Main, _}) -> {ok, Main};
init(Main) when is_pid(Main) -> {ok, Main}.
handle_event(sigterm, Main) -> Main ! {stop, <<"signal">>}, {ok, Main};
handle_event(_, Main) -> {ok, Main}.
handle_call(_, Main) -> {ok, ok, Main}.
handle_info(_, Main) -> {ok, Main}.
terminate(_, _) -> ok.
code_change(_, Main, _) -> {ok, Main}.

