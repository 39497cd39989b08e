%% @doc Minimal JSON encoder (OTP 25 has no json module and hex.pm is not used).
%%
%% Terms: `{[{Key, Value}]}' is an object whose keys keep their order; a map is an
%% object with keys sorted (deterministic output); a list is an array; a binary is a
%% string; `true', `false', `null' are themselves, other atoms are strings; integers
%% and floats are numbers. Keys may be atoms, binaries or strings.
-module(sb_json).
-export([encode/1]).

-spec encode(term()) -> iodata().
encode(true) -> <<"true">>;
encode(false) -> <<"false">>;
encode(null) -> <<"null">>;
encode(A) when is_atom(A) -> string(atom_to_binary(A, utf8));
encode(I) when is_integer(I) -> integer_to_binary(I);
%% Erlang floats are always finite (NaN/inf cannot be made by arithmetic), and the
%% shortest round-trip form ("0.001", "1.0e-10", "60.0") is valid JSON.
encode(F) when is_float(F) -> float_to_binary(F, [short]);
encode(B) when is_binary(B) -> string(B);
encode({KVs}) when is_list(KVs) -> object(KVs);
encode(M) when is_map(M) -> object(lists:sort(maps:to_list(M)));
encode(L) when is_list(L) -> [$[, join([encode(V) || V <- L]), $]].

object(KVs) ->
    [${, join([[string(key(K)), $:, encode(V)] || {K, V} <- KVs]), $}].

key(K) when is_atom(K) -> atom_to_binary(K, utf8);
key(K) when is_binary(K) -> K;
key(K) when is_list(K) -> unicode:characters_to_binary(K).

join([]) -> [];
join([H | T]) -> [H | [[$, | X] || X <- T]].

string(B) -> [$", escape(B, <<>>), $"].

%% UTF-8 passes through unchanged; only what JSON forbids raw is escaped.
escape(<<>>, Acc) -> Acc;
escape(<<$", R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\\"">>);
escape(<<$\\, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\\\">>);
escape(<<$\n, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\n">>);
escape(<<$\r, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\r">>);
escape(<<$\t, R/binary>>, Acc) -> escape(R, <<Acc/binary, "\\t">>);
escape(<<C, R/binary>>, Acc) when C < 16#20 ->
    Hex = list_to_binary(io_lib:format("\\u~4.16.0b", [C])),
    escape(R, <<Acc/binary, Hex/binary>>);
escape(<<C, R/binary>>, Acc) -> escape(R, <<Acc/binary, C>>).
