%% @doc The JSON-Schema subset spec/native-record.schema.json uses (its description
%% lists it): type (incl. lists and integer), properties, required,
%% additionalProperties (boolean), enum, const, minimum, exclusiveMinimum, minLength,
%% items, minItems, maxItems, oneOf, local $ref. validate/3 returns a list of errors.
-module(sb_schema).
-export([validate/2, validate/3]).

validate(Root, Value) -> validate(Root, Root, Value).

validate(Root, Schema, Value) -> v(Root, Schema, Value, <<"$">>).

v(Root, #{<<"$ref">> := <<"#/", Path/binary>>} = S, X, At) ->
    Target = lists:foldl(fun(K, M) -> maps:get(K, M) end, Root,
                         binary:split(Path, <<"/">>, [global])),
    v(Root, Target, X, At) ++ v(Root, maps:remove(<<"$ref">>, S), X, At);
v(Root, S, X, At) when is_map(S) ->
    Known = [<<"type">>, <<"properties">>, <<"required">>, <<"additionalProperties">>,
             <<"enum">>, <<"const">>, <<"minimum">>, <<"exclusiveMinimum">>,
             <<"minLength">>, <<"items">>, <<"minItems">>, <<"maxItems">>, <<"oneOf">>],
    lists:append([kw(Root, K, maps:get(K, S), S, X, At) || K <- Known, is_map_key(K, S)]).

kw(_, <<"type">>, Types, _, X, At) when is_list(Types) ->
    case lists:any(fun(T) -> is_type(T, X) end, Types) of
        true -> [];
        false -> [{At, {type, Types}}]
    end;
kw(R, <<"type">>, T, S, X, At) -> kw(R, <<"type">>, [T], S, X, At);
kw(R, <<"properties">>, Props, _, X, At) when is_map(X) ->
    lists:append([v(R, PS, maps:get(K, X), <<At/binary, ".", K/binary>>)
                  || {K, PS} <- maps:to_list(Props), is_map_key(K, X)]);
kw(_, <<"required">>, Req, _, X, At) when is_map(X) ->
    [{At, {missing, K}} || K <- Req, not is_map_key(K, X)];
kw(_, <<"additionalProperties">>, false, S, X, At) when is_map(X) ->
    Props = maps:get(<<"properties">>, S, #{}),
    [{At, {additional, K}} || K <- maps:keys(X), not is_map_key(K, Props)];
kw(_, <<"enum">>, Vals, _, X, At) ->
    case lists:any(fun(V) -> equal(V, X) end, Vals) of
        true -> [];
        false -> [{At, {enum, Vals}}]
    end;
kw(_, <<"const">>, C, _, X, At) ->
    case equal(C, X) of true -> []; false -> [{At, {const, C}}] end;
kw(_, <<"minimum">>, M, _, X, At) when is_number(X) ->
    if X >= M -> []; true -> [{At, {minimum, M}}] end;
kw(_, <<"exclusiveMinimum">>, M, _, X, At) when is_number(X) ->
    if X > M -> []; true -> [{At, {exclusive_minimum, M}}] end;
kw(_, <<"minLength">>, M, _, X, At) when is_binary(X) ->
    case string:length(X) >= M of true -> []; false -> [{At, {min_length, M}}] end;
kw(R, <<"items">>, IS, _, X, At) when is_list(X) ->
    {Errs, _} = lists:foldl(
                  fun(I, {E, N}) ->
                          {E ++ v(R, IS, I, <<At/binary, "[", (integer_to_binary(N))/binary, "]">>), N + 1}
                  end, {[], 0}, X),
    Errs;
kw(_, <<"minItems">>, M, _, X, At) when is_list(X) ->
    if length(X) >= M -> []; true -> [{At, {min_items, M}}] end;
kw(_, <<"maxItems">>, M, _, X, At) when is_list(X) ->
    if length(X) =< M -> []; true -> [{At, {max_items, M}}] end;
kw(R, <<"oneOf">>, Alts, _, X, At) ->
    case [A || A <- Alts, v(R, A, X, At) =:= []] of
        [_] -> [];
        Matching -> [{At, {one_of_matched, length(Matching)}}]
    end;
%% A keyword that does not apply to this JSON type (e.g. minimum on a string).
kw(_, _, _, _, _, _) -> [].

is_type(<<"object">>, X) -> is_map(X);
is_type(<<"array">>, X) -> is_list(X);
is_type(<<"string">>, X) -> is_binary(X);
is_type(<<"boolean">>, X) -> is_boolean(X);
is_type(<<"null">>, X) -> X =:= null;
is_type(<<"number">>, X) -> is_number(X);
is_type(<<"integer">>, X) -> is_integer(X) orelse (is_float(X) andalso X == trunc(X)).

%% JSON equality: 1 and 1.0 are the same number.
equal(A, B) when is_number(A), is_number(B) -> A == B;
equal(A, B) -> A =:= B.
