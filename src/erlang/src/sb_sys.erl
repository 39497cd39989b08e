%% @doc What the process knows about itself: RSS from /proc, runtime description.
-module(sb_sys).
-export([rss_bytes/0, runtime/0, now_ns/0, seconds/1]).

%% VmRSS of this OS process in bytes, or null where /proc is unavailable (the record
%% says null, never -1).
-spec rss_bytes() -> non_neg_integer() | null.
rss_bytes() ->
    case file:read_file("/proc/self/status") of
        {ok, Status} ->
            case re:run(Status, <<"VmRSS:\\s*([0-9]+)\\s*kB">>, [{capture, all_but_first, binary}]) of
                {match, [KB]} -> binary_to_integer(KB) * 1024;
                nomatch -> null
            end;
        {error, _} -> null
    end.

%% The record's `runtime' object: what the VM actually uses, so the harness can check
%% that ERL_FLAGS took effect.
-spec runtime() -> {[{atom(), term()}]}.
runtime() ->
    {[{name, <<"erlang">>},
      {version, iolist_to_binary(["OTP ", erlang:system_info(otp_release),
                                  " / ERTS ", erlang:system_info(version)])},
      {schedulers, erlang:system_info(schedulers_online)},
      {process_limit, erlang:system_info(process_limit)}]}.

-spec now_ns() -> integer().
now_ns() -> erlang:monotonic_time(nanosecond).

-spec seconds(integer()) -> float().
seconds(Ns) -> Ns / 1.0e9.
