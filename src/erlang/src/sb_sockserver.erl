%% @doc The lifecycle every socket benchmark server shares (docs/sockets.md "The
%% lifecycle"), so that sb_tcp_pingpong and sb_echo_flood keep only their connection
%% handler, counters and record: bind 127.0.0.1 only, print the listening line, accept
%% with a pool of acceptor processes, a process per connection; stop on stdin EOF or the
%% line "stop", on SIGTERM, or after idle_timeout_s with no open connection; then stop
%% the acceptors, close the listen socket, shut the connection processes down and wait
%% for them, bounded. The caller builds its record from what run/1 returns.
-module(sb_sockserver).
-behaviour(gen_event).
-export([run/1]).
%% gen_event callbacks: SIGTERM arrives through erl_signal_server.
-export([init/1, handle_event/2, handle_call/2, handle_info/2, terminate/2, code_change/3]).

-define(LOOPBACK, {127, 0, 0, 1}).
-define(TICK_MS, 100).
-define(STOP_GRACE_MS, 5000).

%% Serves one connection in its own process, which owns the socket; the socket is
%% closed after it returns.
-type handler() :: fun((gen_tcp:socket()) -> term()).
%% listen_opts: added to binary, passive, raw, 127.0.0.1 (backlog, buffers, ...).
-type config() :: #{benchmark := binary(), port := inet:port_number(),
                    idle_timeout_s := number(), listen_opts := [gen_tcp:listen_option()],
                    acceptors := pos_integer(), handler := handler()}.
-type result() :: #{port := inet:port_number(), accepted := non_neg_integer(),
                    stop_reason := binary(), elapsed_ns := integer()}.
-export_type([handler/0, config/0, result/0]).

%% Runs the server until it is told to stop. {error, Msg}: it could not listen.
-spec run(config()) -> {ok, result()} | {error, string()}.
run(#{benchmark := Bench, port := Port, idle_timeout_s := Idle, listen_opts := Extra,
      acceptors := N, handler := Handler}) ->
    Opts = [binary, {active, false}, {packet, raw}, {ip, ?LOOPBACK} | Extra],
    case gen_tcp:listen(Port, Opts) of
        {error, Why} ->
            {error, io_lib:format("cannot listen on 127.0.0.1 port ~b: ~p", [Port, Why])};
        {ok, L} ->
            {ok, Actual} = inet:port(L),
            T0 = sb_sys:now_ns(),
            io:put_chars(["{\"event\":\"listening\",\"benchmark\":\"", Bench, "\",\"role\":\"server\","
                          "\"language\":\"erlang\",\"address\":\"127.0.0.1\",\"port\":",
                          integer_to_list(Actual), "}\n"]),
            Main = self(),
            Accepted = counters:new(1, [write_concurrency]),
            watch_stdin(Main),
            watch_sigterm(Main),
            %% L stays owned by this process, which outlives the acceptors.
            Accs = [spawn_link(fun() -> accept_loop(L, Main, Accepted, Handler) end)
                    || _ <- lists:seq(1, N)],
            {Reason, Open} = server_loop(#{}, erlang:monotonic_time(millisecond), round(Idle * 1000)),
            [begin unlink(A), exit(A, kill) end || A <- Accs],
            catch gen_tcp:close(L),
            Handlers = collect_handlers(maps:keys(Open)),
            [exit(H, shutdown) || H <- Handlers],
            wait_down(Handlers, erlang:monotonic_time(millisecond) + ?STOP_GRACE_MS),
            {ok, #{port => Actual, accepted => counters:get(Accepted, 1), stop_reason => Reason,
                   elapsed_ns => sb_sys:now_ns() - T0}}
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

accept_loop(L, Main, Accepted, Handler) ->
    case gen_tcp:accept(L) of
        {ok, S} ->
            counters:add(Accepted, 1, 1),
            H = spawn(fun() -> receive go -> ok end, handle(S, Main, Handler) end),
            Main ! {opened, H},
            ok = gen_tcp:controlling_process(S, H),
            H ! go,
            accept_loop(L, Main, Accepted, Handler);
        {error, _} ->
            ok
    end.

handle(S, Main, Handler) ->
    _ = Handler(S),
    catch gen_tcp:close(S),
    Main ! {closed, self()}.

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
-spec init({pid(), term()} | pid()) -> {ok, pid()}.
init({Main, _}) -> {ok, Main};
init(Main) when is_pid(Main) -> {ok, Main}.
-spec handle_event(term(), pid()) -> {ok, pid()}.
handle_event(sigterm, Main) -> Main ! {stop, <<"signal">>}, {ok, Main};
handle_event(_, Main) -> {ok, Main}.
-spec handle_call(term(), pid()) -> {ok, ok, pid()}.
handle_call(_, Main) -> {ok, ok, Main}.
-spec handle_info(term(), pid()) -> {ok, pid()}.
handle_info(_, Main) -> {ok, Main}.
-spec terminate(term(), pid()) -> ok.
terminate(_, _) -> ok.
-spec code_change(term(), pid(), term()) -> {ok, pid()}.
code_change(_, Main, _) -> {ok, Main}.
