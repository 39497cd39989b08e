%% @doc The paper variant's knobs (docs/spec.md "The paper variant"): each knob is
%% a flag in spec/cli.json with a `knob' entry {fair, paper, languages}. Its default
%% "variant" means: fair and mixed take the fair value, paper the paper value. A knob
%% erlang does not have, or a value that contradicts --variant fair|paper, is a usage
%% error (exit 2) and nothing runs.
-module(sb_knobs).
-export([resolve/4, get/2, given/2]).

-spec resolve(map(), binary(), binary(), map()) -> {ok, map()} | {error, string()}.
resolve(Spec, Bench, Lang, Params) ->
    Benches = maps:get(<<"benchmarks">>, Spec),
    Flags = maps:get(<<"flags">>, maps:get(Bench, Benches, #{}), #{}),
    Variant = maps:get(variant, Params, <<"fair">>),
    Knobs = [{F, S} || {F, S} <- lists:sort(maps:to_list(Flags)), is_map_key(<<"knob">>, S)],
    lists:foldl(
      fun(_, {error, _} = E) -> E;
         ({Flag, S}, {ok, Acc}) ->
              Param = binary_to_atom(maps:get(<<"param">>, S), utf8),
              K = maps:get(<<"knob">>, S),
              Given = maps:get(Param, Params, <<"variant">>),
              Has = lists:member(Lang, maps:get(<<"languages">>, K)),
              Fair = maps:get(<<"fair">>, K),
              Paper = case maps:get(<<"paper">>, K) of
                          M when is_map(M) -> maps:get(Lang, M, null);
                          V -> V
                      end,
              if not Has, Given =/= <<"variant">> ->
                      {error, fmt("~ts is not a knob of ~ts ~ts (only ~ts)",
                                  [Flag, Lang, Bench, join(maps:get(<<"languages">>, K))])};
                 not Has -> {ok, Acc};
                 Given =:= <<"variant">>, Variant =:= <<"paper">> -> {ok, Acc#{Param => Paper}};
                 Given =:= <<"variant">> -> {ok, Acc#{Param => Fair}};
                 Variant =:= <<"fair">>, Given =/= Fair ->
                      {error, fmt("~ts ~ts contradicts --variant fair (fair means ~ts; use --variant mixed)",
                                  [Flag, Given, Fair])};
                 Variant =:= <<"paper">>, Given =/= Paper ->
                      {error, fmt("~ts ~ts contradicts --variant paper (paper means ~ts for ~ts; use --variant mixed)",
                                  [Flag, Given, Paper, Lang])};
                 true -> {ok, Acc#{Param => Given}}
              end
      end, {ok, #{}}, Knobs).

%% The resolved value of knob Param (an atom) in a benchmark's params, as an atom.
-spec get(atom(), map()) -> atom().
get(Param, Params) ->
    binary_to_atom(maps:get(Param, maps:get(knobs, Params, #{}), <<"fair">>), utf8).

%% The knob flags given on the command line (not "variant"), for the record's params.
-spec given([atom()], map()) -> [{atom(), binary()}].
given(Params, P) ->
    [{K, V} || K <- Params, V <- [maps:get(K, P, <<"variant">>)], V =/= <<"variant">>].

join(Bins) -> lists:join(", ", Bins).

fmt(F, A) -> lists:flatten(io_lib:format(F, A)).
