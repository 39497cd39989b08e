%% @doc Shared test helpers: where the repository and the built escript are, and
%% running the escript as a separate OS process.
-module(sb_test_util).
-export([repo_root/0, read_json/1, escript/0, run/2, run_in/3, lines/1]).

%% Walk up from this source file to the directory that holds spec/cli.json.
repo_root() -> up(filename:dirname(filename:absname(?FILE))).

up("/") -> error(repo_root_not_found);
up(Dir) ->
    case filelib:is_regular(filename:join([Dir, "spec", "cli.json"])) of
        true -> Dir;
        false -> up(filename:dirname(Dir))
    end.

read_json(Rel) ->
    {ok, Bin} = file:read_file(filename:join(repo_root(), Rel)),
    sb_json_decode:decode(Bin).

%% rebar.config builds the escript before eunit (provider hook), into the current
%% profile's bin/ (test profile: _build/test/bin); fall back to the default build.
escript() ->
    Lib = code:lib_dir(serverbench),
    Cands = [filename:join([Lib, "..", "..", "bin", "serverbench"]),
             filename:join([repo_root(), "src", "erlang", "_build", "default", "bin", "serverbench"])],
    case [C || C <- Cands, filelib:is_regular(C)] of
        [E | _] -> filename:absname(E);
        [] -> error({escript_not_built, Cands})
    end.

%% Run the escript with exactly the given environment additions (ERL_FLAGS and
%% ERL_CRASH_DUMP_BYTES are cleared first so the caller decides).
%% Returns {ExitCode, Stdout, Stderr}.
run(Env, Args) ->
    Dir = string:trim(os:cmd("mktemp -d")),
    R = run_in(Dir, Env, Args),
    os:cmd("rm -rf '" ++ Dir ++ "'"),
    R.

run_in(Dir, Env, Args) ->
    Out = filename:join(Dir, "stdout"),
    Err = filename:join(Dir, "stderr"),
    Cmd = lists:flatten(
            ["cd '", Dir, "' && env -u ERL_FLAGS -u ERL_CRASH_DUMP_BYTES ",
             [[K, "='", V, "' "] || {K, V} <- Env],
             "timeout 100 '", escript(), "'", [[" '", A, "'"] || A <- Args],
             " >'", Out, "' 2>'", Err, "'; echo $?"]),
    Code = list_to_integer(string:trim(os:cmd(Cmd))),
    {ok, O} = file:read_file(Out),
    {ok, E} = file:read_file(Err),
    {Code, O, E}.

lines(Bin) -> [L || L <- binary:split(Bin, <<"\n">>, [global]), L =/= <<>>].
