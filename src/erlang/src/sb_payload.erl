%% @doc Message buffers (docs/spec.md 2, "Messages and markers").
%% Byte 0 is the sender's marker, byte i (i >= 1) is i mod 256.
-module(sb_payload).
-export([build/2, check/3, copy/2, markers/0, marker/1]).

%% Marker bytes from spec/cli.json `markers' (checked against the file by a test).
-spec markers() -> #{atom() => byte()}.
markers() ->
    #{pingping_a => 65, pingping_b => 66, throughput_server => 83, throughput_client => 67}.

-spec marker(atom()) -> byte().
marker(Name) -> maps:get(Name, markers()).

%% Built once, before any clock starts. The tail is made from a 256-byte cycle so a
%% 64 MiB buffer does not go through a 64 Mi-element list.
-spec build(byte(), pos_integer()) -> binary().
build(Marker, B) when is_integer(B), B >= 1 ->
    Cycle = list_to_binary([I band 255 || I <- lists:seq(1, 256)]),
    L = B - 1,
    Tail = <<(binary:copy(Cycle, L div 256))/binary, (binary:part(Cycle, 0, L rem 256))/binary>>,
    <<Marker:8, Tail/binary>>.

%% Length B, first byte the peer's marker, last byte (B-1) mod 256 when B >= 2.
-spec check(binary(), pos_integer(), byte()) -> boolean().
check(Bin, B, PeerMarker) when byte_size(Bin) =:= B ->
    case Bin of
        <<PeerMarker:8, _/binary>> -> B < 2 orelse binary:last(Bin) =:= (B - 1) band 255;
        _ -> false
    end;
check(_, _, _) ->
    false.

%% --payload copy: ONE fresh binary of B bytes with our marker. Constructing
%% <<M, Tail/binary>> allocates a new binary and copies the tail into it; it never
%% reuses the received (reference-counted) binary.
-spec copy(binary(), byte()) -> binary().
copy(<<_:8, Tail/binary>>, Marker) -> <<Marker:8, Tail/binary>>;
copy(<<>>, Marker) -> <<Marker:8>>.
