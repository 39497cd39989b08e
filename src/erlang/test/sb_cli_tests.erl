%% The parser is checked against spec/cli.json itself, read at test time: every flag
%% of every benchmark, every kind of bad value, through sb_cli:execute/1 (exit code,
%% stdout, stderr), and a few through the built escript.
-module(sb_cli_tests).
-include_lib("eunit/include/eunit.hrl").

cli() -> sb_test_util:read_json("spec/cli.json").

benches() -> maps:to_list(maps:get(<<"benchmarks">>, cli())).

flags(Spec) -> maps:to_list(maps:get(<<"flags">>, Spec)).

s(B) -> binary_to_list(B).

%% A valid value for each flag (its minimum, or the default / first enum value).
good_value(#{<<"type">> := <<"int">>, <<"min">> := Min}) -> integer_to_list(Min);
good_value(#{<<"type">> := <<"number">>}) -> "0.25";
good_value(#{<<"type">> := <<"enum">>} = F) -> s(maps:get(<<"default">>, F)).

required_args(Spec) ->
    lists:append([[s(N), good_value(F)] || {N, F} <- flags(Spec),
                                           maps:get(<<"required">>, F, false)]).

%% Args that are valid except for Flag, which gets Value (or, for a missing value,
%% nothing after it).
with(Spec, Flag, Value) ->
    Others = lists:append([[s(N), good_value(F)] || {N, F} <- flags(Spec),
                                                    maps:get(<<"required">>, F, false),
                                                    s(N) =/= Flag]),
    Others ++ [Flag | Value].

bad_values(#{<<"type">> := <<"int">>, <<"min">> := Min, <<"max">> := Max}) ->
    ["0" || Min >= 1] ++
        ["-1", "-5", "abc", "1.5", "1e3", "+3", "0x10", "1_000", " 7", "", "nan",
         integer_to_list(Max + 1), integer_to_list(Max) ++ "000000000000000000000"];
bad_values(#{<<"type">> := <<"number">>, <<"max">> := Max}) ->
    ["0", "0.0", "-1", "-0.5", "abc", "nan", "inf", "-inf", "1e3", "1.5.2", ".", "",
     integer_to_list(Max + 1), integer_to_list(Max) ++ ".001", lists:duplicate(400, $9)];
bad_values(#{<<"type">> := <<"enum">>, <<"values">> := Vs}) ->
    ["bogus", "", "COPY"] -- [s(V) || V <- Vs].

expect_usage_error(Args, Mention) ->
    {Code, Out, Err} = sb_cli:execute(Args),
    ErrBin = iolist_to_binary(Err),
    Ctx = {args, Args, stderr, ErrBin},
    ?assertEqual({2, Ctx}, {Code, Ctx}),
    ?assertEqual({<<>>, Ctx}, {iolist_to_binary(Out), Ctx}),
    ?assertMatch({[<<"error: ", _/binary>>], _}, {sb_test_util:lines(ErrBin), Ctx}),
    ?assertMatch({<<_/binary>>, _}, {binary:last(ErrBin) =:= $\n andalso ErrBin, Ctx}),
    ?assertNotEqual({nomatch, Ctx}, {string:find(ErrBin, Mention), Ctx}).

rejects_bad_values_test() ->
    Cases = [{[s(Bench) | Args], s(Name)}
             || {Bench, Spec} <- benches(), {Name, F} <- flags(Spec),
                V <- bad_values(F),
                Args <- [with(Spec, s(Name), [V]), with(Spec, s(Name) ++ "=" ++ V, [])]],
    ?assert(length(Cases) > 100),
    [expect_usage_error(A, M) || {A, M} <- Cases].

rejects_missing_value_test() ->
    [begin
         Spec0 = with(Spec, s(Name), []),
         expect_usage_error([s(Bench) | Spec0], s(Name)),
         %% followed by another flag instead of a value
         expect_usage_error([s(Bench), s(Name) | required_args(Spec)], s(Name))
     end || {Bench, Spec} <- benches(), {Name, _} <- flags(Spec)].

rejects_duplicate_test() ->
    [begin
         V = good_value(F),
         Args = with(Spec, s(Name), [V]) ++ [s(Name) ++ "=" ++ V],
         expect_usage_error([s(Bench) | Args], s(Name))
     end || {Bench, Spec} <- benches(), {Name, F} <- flags(Spec)].

rejects_missing_required_test() ->
    [begin
         Args = lists:append([[s(N), good_value(F)] || {N, F} <- flags(Spec),
                                                       maps:get(<<"required">>, F, false),
                                                       N =/= Name]),
         expect_usage_error([s(Bench) | Args], s(Name))
     end || {Bench, Spec} <- benches(), {Name, F0} <- flags(Spec),
            maps:get(<<"required">>, F0, false)].

rejects_unknown_flag_and_command_test() ->
    [begin
         expect_usage_error([s(Bench) | required_args(Spec)] ++ ["--bogus", "1"], "--bogus"),
         expect_usage_error([s(Bench), "--bogus=1" | required_args(Spec)], "--bogus"),
         expect_usage_error([s(Bench), "stray" | required_args(Spec)], "stray"),
         %% a flag of another benchmark is unknown here
         expect_usage_error([s(Bench), "--nonexistent-flag" | required_args(Spec)],
                            "--nonexistent-flag")
     end || {Bench, Spec} <- benches()],
    expect_usage_error(["pingpong", "--message-bytes", "1"], "pingpong"),
    expect_usage_error(["PINGPING"], "PINGPING"),
    expect_usage_error([], "sub-command"),
    expect_usage_error(["--version", "extra"], "--version").

variants_not_built_are_refused_test() ->
    Built = [s(V) || V <- maps:get(<<"implemented_variants">>, cli())],
    ?assertEqual(Built, sb_cli:implemented_variants()),
    [expect_usage_error([s(Bench), "--variant", s(V) | required_args(Spec)], "--variant")
     || {Bench, Spec} <- benches(),
        V <- maps:get(<<"values">>, maps:get(<<"--variant">>, maps:get(<<"flags">>, Spec))),
        not lists:member(s(V), Built)].

%% The hard-coded table is the same as cli.json: names, params, ranges, defaults.
table_matches_cli_json_test() ->
    Names = lists:sort([binary_to_atom(B) || {B, _} <- benches()]),
    ?assertEqual(Names, lists:sort(sb_cli:benchmarks())),
    [begin
         Mine = sb_cli:spec(binary_to_atom(Bench)),
         ?assertEqual(lists:sort([s(N) || {N, _} <- flags(Spec)]),
                      lists:sort([N || {N, _, _, _} <- Mine])),
         [begin
              {_, Param, Type, Req} = lists:keyfind(s(N), 1, Mine),
              case maps:get(<<"param">>, F) of
                  null -> ?assertEqual(variant, Param);
                  P -> ?assertEqual(binary_to_atom(P), Param)
              end,
              ?assertEqual(maps:get(<<"required">>, F, false), Req =:= required),
              case Req of
                  {default, D} -> ?assertEqual(maps:get(<<"default">>, F), json_default(D));
                  required -> ok
              end,
              ?assertEqual(type_of(F), Type)
          end || {N, F} <- flags(Spec)]
     end || {Bench, Spec} <- benches()].

json_default(D) when is_integer(D) -> D;
json_default(D) when is_binary(D) -> D.

type_of(#{<<"type">> := <<"int">>, <<"min">> := Min, <<"max">> := Max}) -> {int, Min, Max};
type_of(#{<<"type">> := <<"number">>, <<"min_exclusive">> := Min, <<"max">> := Max}) ->
    {number, {exclusive, Min}, Max};
type_of(#{<<"type">> := <<"enum">>, <<"values">> := Vs}) -> {enum, [s(V) || V <- Vs]}.

%% Valid command lines: limits, both syntaxes, any order, defaults filled in.
accepts_valid_test() ->
    [begin
         Req = [{N, F} || {N, F} <- flags(Spec), maps:get(<<"required">>, F, false)],
         Args = lists:append([[s(N) ++ "=" ++ good_value(F)] || {N, F} <- lists:reverse(Req)]),
         {run, B, Params} = sb_cli:parse([s(Bench) | Args]),
         ?assertEqual(binary_to_atom(Bench), B),
         [case maps:get(<<"param">>, F) of
              null -> ?assertEqual(<<"fair">>, maps:get(variant, Params));
              P -> ?assertEqual(maps:get(<<"default">>, F), maps:get(binary_to_atom(P), Params))
          end || {_, F} <- flags(Spec), is_map_key(<<"default">>, F)],
         [begin
              Max = maps:get(<<"max">>, F),
              MaxS = integer_to_list(Max),
              {run, _, P1} = sb_cli:parse([s(Bench) | with(Spec, s(N), [MaxS])]),
              ?assert(Max == maps:get(binary_to_atom(maps:get(<<"param">>, F)), P1))
          end || {N, F} <- flags(Spec), maps:get(<<"type">>, F) =/= <<"enum">>]
     end || {Bench, Spec} <- benches()],
    {run, throughput, #{duration_s := D}} =
        sb_cli:parse(["throughput", "--duration-s", ".5", "--pairs", "1", "--message-bytes", "1"]),
    ?assertEqual(0.5, D),
    {run, pingping, #{payload := <<"share">>}} =
        sb_cli:parse(["pingping", "--payload", "share", "--repetitions=1", "--message-bytes", "1"]).

help_test() ->
    {0, Out, Err} = sb_cli:execute(["--help"]),
    ?assertNotEqual(nomatch, string:find(iolist_to_binary(Out), "usage")),
    ?assertEqual(<<>>, iolist_to_binary(Err)).

%% The escript wires execute/1 to stdout, stderr and the exit status.
escript_usage_errors_test_() ->
    {timeout, 60,
     fun() ->
             Cases = [{["pingping", "--message-bytes", "0", "--repetitions", "1"], "--message-bytes"},
                      {["spawn", "--processes=-3"], "--processes"},
                      {["throughput", "--pairs", "1", "--message-bytes", "1", "--duration-s", "nan"], "--duration-s"},
                      {["spawn", "--processes"], "--processes"},
                      {["spawn", "--processes", "1", "--processes", "1"], "--processes"},
                      {["spawn", "--processes", "1", "--bogus"], "--bogus"},
                      {["spawn", "--processes", "1", "--variant", "paper"], "--variant"},
                      {["spwan"], "spwan"}],
             [begin
                  {Code, Out, Err} = sb_test_util:run([], Args),
                  ?assertEqual({Args, 2}, {Args, Code}),
                  ?assertEqual({Args, <<>>}, {Args, Out}),
                  ?assertMatch([<<"error: ", _/binary>>], sb_test_util:lines(Err)),
                  ?assertNotEqual(nomatch, string:find(Err, M))
              end || {Args, M} <- Cases],
             {0, Help, _} = sb_test_util:run([], ["--help"]),
             ?assertNotEqual(nomatch, string:find(Help, "usage"))
     end}.
