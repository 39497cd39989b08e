%% @doc Small JSON decoder (OTP 25 has no json module and hex.pm is not used): reads
%% the spec/cli.json built into the escript (sb_cli) and records in the tests.
%% Objects become maps with binary keys, arrays lists, strings binaries; numbers
%% without fraction or exponent become integers.
-module(sb_json_decode).
-export([decode/1]).

-type json() :: #{binary() => json()} | [json()] | binary() | number() | true | false | null.
-export_type([json/0]).

-spec decode(iodata()) -> json().
decode(Data) ->
    Bin = iolist_to_binary(Data),
    {V, Rest} = value(ws(Bin)),
    case ws(Rest) of
        <<>> -> V;
        Trailing -> error({trailing, Trailing})
    end.

ws(<<C, R/binary>>) when C =:= $\s; C =:= $\t; C =:= $\n; C =:= $\r -> ws(R);
ws(B) -> B.

value(<<${, R/binary>>) -> object(ws(R), #{});
value(<<$[, R/binary>>) -> array(ws(R), []);
value(<<$", R/binary>>) -> string(R, <<>>);
value(<<"true", R/binary>>) -> {true, R};
value(<<"false", R/binary>>) -> {false, R};
value(<<"null", R/binary>>) -> {null, R};
value(B) -> number(B).

object(<<$}, R/binary>>, M) when map_size(M) =:= 0 -> {M, R};
object(<<$", R/binary>>, M) ->
    {K, R1} = string(R, <<>>),
    <<$:, R2/binary>> = ws(R1),
    {V, R3} = value(ws(R2)),
    case is_map_key(K, M) of true -> error({duplicate_key, K}); false -> ok end,
    case ws(R3) of
        <<$,, R4/binary>> -> object(ws(R4), M#{K => V});
        <<$}, R4/binary>> -> {M#{K => V}, R4}
    end.

array(<<$], R/binary>>, []) -> {[], R};
array(B, Acc) ->
    {V, R} = value(B),
    case ws(R) of
        <<$,, R1/binary>> -> array(ws(R1), [V | Acc]);
        <<$], R1/binary>> -> {lists:reverse([V | Acc]), R1}
    end.

string(<<$", R/binary>>, Acc) -> {Acc, R};
string(<<$\\, C, R/binary>>, Acc) when C =/= $u ->
    Ch = case C of $" -> $"; $\\ -> $\\; $/ -> $/; $b -> $\b; $f -> $\f;
                   $n -> $\n; $r -> $\r; $t -> $\t end,
    string(R, <<Acc/binary, Ch>>);
string(<<$\\, $u, H:4/binary, R/binary>>, Acc) ->
    Cp = binary_to_integer(H, 16),
    string(R, <<Acc/binary, Cp/utf8>>);
string(<<C, R/binary>>, Acc) when C >= 16#20 -> string(R, <<Acc/binary, C>>).

number(B) ->
    {Int, R1} = take(B, fun(C) -> (C >= $0 andalso C =< $9) orelse C =:= $- end),
    true = Int =/= <<>>,
    {Frac, R2} = case R1 of
                     <<$., X/binary>> -> take(X, fun digit/1);
                     _ -> {none, R1}
                 end,
    {Exp, R3} = case R2 of
                    <<E, X2/binary>> when E =:= $e; E =:= $E ->
                        take(X2, fun(C) -> digit(C) orelse C =:= $- orelse C =:= $+ end);
                    _ -> {none, R2}
                end,
    case {Frac, Exp} of
        {none, none} -> {binary_to_integer(Int), R3};
        _ ->
            F = case Frac of none -> <<"0">>; <<>> -> error(bad_fraction); _ -> Frac end,
            E1 = case Exp of none -> <<>>; _ -> <<"e", Exp/binary>> end,
            {binary_to_float(<<Int/binary, ".", F/binary, E1/binary>>), R3}
    end.

digit(C) -> C >= $0 andalso C =< $9.

take(B, P) -> take(B, P, 0).
take(B, P, N) ->
    case B of
        <<_:N/binary, C, _/binary>> -> case P(C) of true -> take(B, P, N + 1); false -> split(B, N) end;
        _ -> split(B, N)
    end.
split(B, N) -> <<H:N/binary, T/binary>> = B, {H, T}.
