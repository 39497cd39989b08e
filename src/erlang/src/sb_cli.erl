%% @doc Command line of serverbench, parsed from spec/cli.json itself (docs/spec.md 1).
%%
%% The rebar3 pre-compile hook (embed_cli_json.escript) builds spec/cli.json into this
%% module (include/sb_cli_json.hrl), so there is no flag table here: a flag, benchmark,
%% role or variant added to cli.json is parsed without an Erlang edit. parse/1 is pure;
%% execute/1 turns arguments into {ExitCode, Stdout, Stderr} so the contract can be
%% tested in-process; serverbench:main/1 only writes and halts. prepare/1 is execute/1
%% up to the benchmark's start, so every command line can be checked without running one.
-module(sb_cli).
-export([parse/1, parse/3, prepare/1, execute/1, usage/0, usage/2, spec/0, version_info/0,
         program_version/0]).

-include("sb_cli_json.hrl").

-define(LANGUAGE, <<"erlang">>).
-define(EXIT_OK, 0).
-define(EXIT_FAILED, 1).
-define(EXIT_USAGE, 2).

-type spec() :: #{binary() => sb_json_decode:json()}.
-type parsed() :: version | help | {run, binary(), sb_benchmark:params()} | {error, string()}.
-export_type([spec/0]).

-spec program_version() -> binary().
program_version() -> <<"0.1.0">>.

%% spec/cli.json as built into the program.
-spec spec() -> spec().
spec() -> sb_json_decode:decode(?CLI_JSON).

-spec version_info() -> {[{atom(), term()}]}.
version_info() ->
    {[{program, <<"serverbench">>},
      {program_version, program_version()},
      {language, ?LANGUAGE},
      {runtime, sb_sys:runtime()}]}.

%% ---------------------------------------------------------------------------
%% parse

-spec parse([string()]) -> parsed().
parse(Args) -> parse(spec(), ?LANGUAGE, Args).

%% Args for language Lang under the cli.json Spec.
-spec parse(spec(), binary(), [string()]) -> parsed().
parse(_S, _L, ["--version"]) -> version;
parse(_S, _L, ["--version", Arg | _]) ->
    {error, fmt("--version takes no value or arguments, got '~ts'", [printable(Arg)])};
parse(_S, _L, ["--help" | _]) -> help;
parse(_S, _L, ["-h" | _]) -> help;
parse(S, L, []) ->
    {error, fmt("missing sub-command (expected one of: ~ts, --version, --help)", [listed(S, L)])};
parse(S, L, [Cmd | Rest]) ->
    case lists:member("--help", Rest) orelse lists:member("-h", Rest) of
        true -> help;
        false -> parse_command(S, L, bin(Cmd), Rest)
    end.

parse_command(S, L, Name, Rest) ->
    Lang = maps:get(L, maps:get(<<"languages">>, S)),
    case maps:find(Name, maps:get(<<"benchmarks">>, S)) of
        error ->
            {error, fmt("unknown sub-command '~ts' (expected one of: ~ts, --version, --help)",
                        [printable(Name), listed(S, L)])};
        {ok, Bench} ->
            case lists:member(Name, maps:get(<<"benchmarks">>, Lang)) of
                false ->
                    {error, fmt("~ts does not implement the benchmark ~ts (it implements: ~ts)",
                                [L, Name, listed(S, L)])};
                true ->
                    with_role(S, L, Lang, Name, Bench, Rest)
            end
    end.

with_role(S, L, Lang, Name, #{<<"roles">> := Roles}, Rest) ->
    Known = lists:join(", ", lists:sort(maps:keys(Roles))),
    case Rest of
        [[C | _] = R | Rest1] when C =/= $- ->
            Role = bin(R),
            Implemented = maps:get(Name, maps:get(<<"roles">>, Lang, #{}), maps:keys(Roles)),
            case {maps:find(Role, Roles), lists:member(Role, Implemented)} of
                {error, _} ->
                    {error, fmt("unknown role '~ts' for ~ts (expected one of: ~ts)",
                                [printable(Role), Name, Known])};
                {{ok, _}, false} ->
                    {error, fmt("~ts does not implement the benchmark ~ts role ~ts (it implements: ~ts)",
                                [L, Name, Role, lists:join(", ", Implemented)])};
                {{ok, #{<<"flags">> := Flags}}, true} ->
                    case parse_flags(Name, Flags, Rest1) of
                        {ok, Params} -> check_variant(S, L, Lang, Name, Params#{role => Role});
                        {error, _} = E -> E
                    end
            end;
        _ ->
            {error, fmt("~ts needs a role first: one of ~ts", [Name, Known])}
    end;
with_role(S, L, Lang, Name, #{<<"flags">> := Flags}, Rest) ->
    case parse_flags(Name, Flags, Rest) of
        {ok, Params} -> check_variant(S, L, Lang, Name, Params);
        {error, _} = E -> E
    end.

check_variant(S, L, Lang, Name, #{variant := V} = Params) ->
    Implemented = maps:get(<<"variants">>, Lang, maps:get(<<"implemented_variants">>, S)),
    case lists:member(V, Implemented) of
        true -> {run, Name, Params};
        false -> {error, fmt("--variant ~ts is not implemented for ~ts ~ts (only: ~ts)",
                             [V, L, Name, lists:join(", ", Implemented)])}
    end;
check_variant(_S, _L, _Lang, Name, Params) ->
    {run, Name, Params}.

%% Collect the raw values, then check every flag in name order (values, required,
%% defaults); the flag whose param is null (--variant) goes under the key variant.
parse_flags(Bench, Flags, Args) ->
    case collect(Bench, Flags, Args, #{}) of
        {ok, Raw} ->
            lists:foldl(
              fun(_, {error, _} = E) -> E;
                 ({Name, F}, {ok, Acc}) ->
                      Value = case maps:find(Name, Raw) of
                                  {ok, V} -> convert(Name, F, V);
                                  error -> default(Bench, Name, F)
                              end,
                      case {Value, maps:get(<<"param">>, F)} of
                          {{error, _} = E, _} -> E;
                          {none, _} -> {ok, Acc};
                          {{ok, V1}, null} -> {ok, Acc#{variant => V1}};
                          {{ok, V1}, P} -> {ok, Acc#{binary_to_atom(P, utf8) => V1}}
                      end
              end, {ok, #{}}, lists:sort(maps:to_list(Flags)));
        {error, _} = E -> E
    end.

collect(_Bench, _Flags, [], Raw) -> {ok, Raw};
collect(Bench, Flags, ["--" ++ [_ | _] = Arg | Rest], Raw) ->
    {Name, Inline} = case string:split(Arg, "=") of
                         [N, V] -> {bin(N), {value, V}};
                         [N] -> {bin(N), none}
                     end,
    case {maps:is_key(Name, Flags), maps:is_key(Name, Raw)} of
        {false, _} -> {error, fmt("unknown flag ~ts for ~ts", [printable(Name), Bench])};
        {true, true} -> {error, fmt("~ts given more than once", [Name])};
        {true, false} ->
            case take_value(Inline, Rest) of
                {ok, [_ | _] = Value, Rest1} -> collect(Bench, Flags, Rest1, Raw#{Name => Value});
                _ -> {error, fmt("~ts needs a value", [Name])}
            end
    end;
collect(Bench, _Flags, [Arg | _], _Raw) ->
    {error, fmt("unexpected argument '~ts' for ~ts (flags are --name value or --name=value)",
                [printable(Arg), Bench])}.

%% A following token that starts with "--" is the next flag, not this flag's value.
take_value({value, V}, Rest) -> {ok, V, Rest};
take_value(none, ["--" ++ _ | _]) -> missing;
take_value(none, [V | Rest]) -> {ok, V, Rest};
take_value(none, []) -> missing.

default(Bench, Name, #{<<"required">> := true}) ->
    {error, fmt("missing required flag ~ts for ~ts", [Name, Bench])};
default(_Bench, Name, #{<<"default">> := D} = F) when D =/= null ->
    convert(Name, F, case D of
                         _ when is_binary(D) -> binary_to_list(D);
                         _ when is_integer(D) -> integer_to_list(D);
                         _ -> float_to_list(D, [short])
                     end);
default(_Bench, _Name, _F) -> none.

%% Integers: plain decimal digits only (no sign, exponent or '_').
convert(Name, #{<<"type">> := <<"int">>} = F, Raw) ->
    case digits(Raw) of
        true ->
            I = list_to_integer(Raw),
            case in_range(I, F) of
                true -> {ok, I};
                false -> {error, out_of_range(Name, Raw, F)}
            end;
        false -> {error, fmt("~ts: '~ts' is not a plain decimal integer", [Name, printable(Raw)])}
    end;
%% Numbers: 60, 0.5, .5, 5. ; nan, inf, signs and exponents refused.
convert(Name, #{<<"type">> := <<"number">>} = F, Raw) ->
    case decimal(Raw) of
        {ok, X} ->
            case in_range(X, F) of
                true -> {ok, X};
                false -> {error, out_of_range(Name, Raw, F)}
            end;
        too_big -> {error, out_of_range(Name, Raw, F)};
        error -> {error, fmt("~ts: '~ts' is not a plain decimal number", [Name, printable(Raw)])}
    end;
convert(Name, #{<<"type">> := <<"enum">>, <<"values">> := Values}, Raw) ->
    V = bin(Raw),
    case lists:member(V, Values) of
        true -> {ok, V};
        false -> {error, fmt("~ts: '~ts' is not one of ~ts",
                             [Name, printable(Raw), lists:join(", ", Values)])}
    end;
convert(Name, #{<<"type">> := T}, _Raw) ->
    {error, fmt("~ts: cli.json type ~ts is not supported by this program", [Name, T])}.

in_range(X, F) ->
    (not is_map_key(<<"min">>, F) orelse X >= maps:get(<<"min">>, F)) andalso
        (not is_map_key(<<"max">>, F) orelse X =< maps:get(<<"max">>, F)) andalso
        (not is_map_key(<<"min_exclusive">>, F) orelse X > maps:get(<<"min_exclusive">>, F)).

out_of_range(Name, Raw, F) ->
    {Open, Lo} = case F of
                     #{<<"min">> := Min} -> {"[", Min};
                     #{<<"min_exclusive">> := Min} -> {"(", Min};
                     _ -> {"(", '-inf'}
                 end,
    {Hi, Close} = case F of #{<<"max">> := Max} -> {Max, "]"}; _ -> {inf, ")"} end,
    fmt("~ts: ~ts is out of range ~ts~p, ~p~ts", [Name, printable(Raw), Open, Lo, Hi, Close]).

digits([]) -> false;
digits(S) -> lists:all(fun(C) -> C >= $0 andalso C =< $9 end, S).

decimal(S) ->
    case string:split(S, ".") of
        [I] -> decimal(I, "0");
        [I, F] when I =/= [] orelse F =/= [] -> decimal(I, F);
        _ -> error
    end.

decimal(I, F) ->
    I1 = case I of [] -> "0"; _ -> I end,
    F1 = case F of [] -> "0"; _ -> F end,
    case digits(I1) andalso digits(F1) of
        %% A value too large for a float is out of range.
        true -> try {ok, list_to_float(I1 ++ "." ++ F1)} catch error:badarg -> too_big end;
        false -> error
    end.

listed(S, L) ->
    lists:join(", ", maps:get(<<"benchmarks">>, maps:get(L, maps:get(<<"languages">>, S)))).

bin(S) ->
    case unicode:characters_to_binary(S) of
        B when is_binary(B) -> B;
        _ -> <<"?">>
    end.

%% Keep the one error line one line, whatever the user typed.
printable(B) when is_binary(B) -> printable(unicode:characters_to_list(B));
printable(S) -> [case C of $\n -> $\s; $\r -> $\s; _ -> C end || C <- S].

fmt(F, A) -> lists:flatten(io_lib:format(F, A)).

%% ---------------------------------------------------------------------------
%% usage (generated from the spec)

-spec usage() -> iodata().
usage() -> usage(spec(), ?LANGUAGE).

-spec usage(spec(), binary()) -> iodata().
usage(S, L) ->
    Benches = maps:get(<<"benchmarks">>, S),
    Line = fun(Cmd, Flags) ->
                   ["  serverbench ", Cmd,
                    [flag_usage(N, F) || {N, F} <- lists:sort(maps:to_list(Flags))], "\n"]
           end,
    ["usage:\n",
     [case maps:get(B, Benches) of
          #{<<"roles">> := Roles} ->
              [Line([B, " ", R], Fs) || {R, #{<<"flags">> := Fs}} <- lists:sort(maps:to_list(Roles))];
          #{<<"flags">> := Fs} -> Line(B, Fs)
      end || B <- maps:get(<<"benchmarks">>, maps:get(L, maps:get(<<"languages">>, S)))],
     "  serverbench --version\n"
     "  serverbench --help\n"
     "Flags: --name value or --name=value, any order, each at most once.\n"
     "Schedulers are not a flag: set ERL_FLAGS=\"+S C:C +P L\".\n"
     "stdout: one JSON record; exit 0 ok, 1 run failed, 2 bad command line.\n"].

flag_usage(N, F) ->
    Arg = case F of
              #{<<"type">> := <<"enum">>, <<"values">> := Vs} -> lists:join("|", Vs);
              _ -> string:uppercase(string:replace(string:prefix(N, "--"), "-", "_", all))
          end,
    case maps:get(<<"required">>, F, false) of
        true -> [" ", N, " ", Arg];
        false -> [" [", N, " ", Arg, "]"]
    end.

%% ---------------------------------------------------------------------------
%% execute

-spec execute([string()]) -> {0 | 1 | 2, iodata(), iodata()}.
execute(Args) ->
    case prepare(Args) of
        {done, Code, Out, Err} -> {Code, Out, Err};
        {run, Mod, Params} -> run_module(Mod, Params)
    end.

%% Everything execute/1 does before a benchmark starts: {done, ...} is the whole answer
%% (help, version, usage error), {run, Mod, Params} what execute/1 would run.
-spec prepare([string()]) ->
          {done, 0 | 2, iodata(), iodata()} | {run, module(), sb_benchmark:params()}.
prepare(Args) ->
    case parse(Args) of
        help -> {done, ?EXIT_OK, usage(), []};
        version -> {done, ?EXIT_OK, [sb_json:encode(version_info()), $\n], []};
        {error, Msg} -> {done, ?EXIT_USAGE, [], ["error: ", Msg, $\n]};
        {run, Bench, Params} -> prepare_run(Bench, Params)
    end.

prepare_run(Bench, Params) ->
    case sb_benchmark:find(Bench) of
        {ok, Mod} ->
            %% The paper variant's knobs (sb_knobs): a contradiction is a usage error.
            case sb_knobs:resolve(spec(), Bench, ?LANGUAGE, Params) of
                {error, KMsg} -> {done, ?EXIT_USAGE, [], ["error: ", KMsg, $\n]};
                {ok, Knobs} -> {run, Mod, Params#{knobs => Knobs}}
            end;
        error ->
            {done, ?EXIT_USAGE, [], ["error: ", Bench, " is listed for erlang in cli.json but not built "
                                     "into this program\n"]}
    end.

run_module(Mod, Params) ->
    case Mod:run(Params) of
        {ok, Record, Ok} ->
            Code = case Ok of true -> ?EXIT_OK; false -> ?EXIT_FAILED end,
            {Code, [sb_json:encode(Record), $\n], []};
        {error, Msg} ->
            {?EXIT_FAILED, [], ["error: ", Msg, $\n]};
        {usage, Msg} ->  % a rule across flags that cli.json's ranges cannot state
            {?EXIT_USAGE, [], ["error: ", Msg, $\n]}
    end.
