%% @doc The behaviour every benchmark module implements. sb_cli finds the callback
%% modules among the application's modules (their -behaviour(sb_benchmark)
%% attribute) and picks the one whose name/0 is the sub-command: no module-name
%% table, no list_to_atom. A new benchmark is a new module with
%% -behaviour(sb_benchmark) plus its entry in spec/cli.json (languages.erlang).
-module(sb_benchmark).
-export([modules/0, find/1]).

%% The command line as parsed from spec/cli.json: each flag's "param" as an atom key,
%% its value as an integer (int), float (number) or binary (enum); `variant' (binary)
%% when the benchmark has a --variant flag; `role' (binary) for a benchmark with roles.
%% `knobs' (a map param => binary) holds the paper variant's knobs, resolved by sb_knobs.
-type params() :: #{atom() => integer() | float() | binary() | #{atom() => binary()}}.
%% {ok, Record, ValidationOk}: the record is printed as one JSON line (exit 0 when
%% ValidationOk, else 1); {error, Msg}: one error line, exit 1; {usage, Msg}: exit 2.
-type result() :: {ok, Record :: term(), boolean()} | {error, string()} | {usage, string()}.
-export_type([params/0, result/0]).

%% The sub-command, as spec/cli.json names the benchmark.
-callback name() -> binary().
-callback run(params()) -> result().

%% Every benchmark module built into the program.
-spec modules() -> [module()].
modules() ->
    _ = application:load(serverbench),
    {ok, Mods} = application:get_key(serverbench, modules),
    [M || M <- Mods, implements(M)].

-spec find(binary()) -> {ok, module()} | error.
find(Name) ->
    case [M || M <- modules(), M:name() =:= Name] of
        [M] -> {ok, M};
        [] -> error
    end.

implements(M) ->
    Attrs = M:module_info(attributes),
    lists:member(?MODULE, proplists:get_value(behaviour, Attrs, []) ++
                     proplists:get_value(behavior, Attrs, [])).
