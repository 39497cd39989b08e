%% Every parser case of tests/conformance/parser-cases.json (generated from spec/cli.json
%% by tests/python/conformance/cases.py) for erlang, in process: sb_cli:prepare/1 is what
%% serverbench:main/1 runs (through sb_cli:execute/1) up to a benchmark's start, so no
%% benchmark runs, no process is started and no socket is opened. The process-level
%% suite (tests/python/conformance) runs the valid cases at toy size.
-module(sb_parser_cases_tests).
-include_lib("eunit/include/eunit.hrl").

-define(CASES, "tests/conformance/parser-cases.json").
-define(LANGUAGE, <<"erlang">>).
%% Relative tolerance for number params: both sides are decimal text read as doubles.
-define(REL_TOL, 1.0e-9).

parser_cases_test_() ->
    Doc = sb_test_util:read_json(?CASES),
    Codes = maps:get(<<"exit_codes">>, Doc),
    Lang = maps:get(?LANGUAGE, maps:get(<<"languages">>, Doc), #{}),
    Usage = maps:get(<<"usage">>, Lang, []),
    Valid = maps:get(<<"valid">>, Lang, []),
    [{"parser-cases.json was generated from this spec/cli.json",
      fun() -> cases_are_current(Doc) end},
     {fmt("~b usage cases of erlang: exit ~p, nothing on stdout, one 'error: ' line",
          [length(Usage), maps:get(<<"usage">>, Codes)]),
      fun() -> check_all("usage", Usage, fun(C) -> usage_problem(Codes, C) end) end},
     {fmt("~b valid cases of erlang: accepted, fair params as the record's", [length(Valid)]),
      fun() -> check_all("valid", Valid, fun valid_problem/1) end}].

cases_are_current(Doc) ->
    {ok, Cli} = file:read_file(filename:join([sb_test_util:repo_root(), "spec", "cli.json"])),
    Sha = string:lowercase(binary:encode_hex(crypto:hash(sha256, Cli))),
    case maps:get(<<"cli_json_sha256">>, Doc) of
        Sha -> ok;
        Old -> error({stale_parser_cases, ?CASES, Old, Sha,
                      "spec/cli.json changed: run python3 tests/python/conformance/cases.py"})
    end.

%% Runs Check on every case (none for a language the file lacks is a failure too) and
%% fails once, listing every failing case on the console (eunit shortens error terms).
check_all(Kind, Cases, Check) ->
    Cases =:= [] andalso error({no_cases, Kind, ?LANGUAGE, ?CASES}),
    Failed = [{maps:get(<<"args">>, C), P} || C <- Cases, P <- [Check(C)], P =/= ok],
    case Failed of
        [] -> ok;
        _ ->
            io:format(user, "~n~b of ~b ~ts cases of ~ts failed (~ts):~n~ts",
                      [length(Failed), length(Cases), Kind, ?LANGUAGE, ?CASES,
                       [io_lib:format("  ~ts~n      ~ts~n", [show_args(A), P]) || {A, P} <- Failed]]),
            error({parser_cases_failed, Kind, length(Failed), 'of', length(Cases),
                   "every failing case is listed above", hd(Failed)})
    end.

%% ---------------------------------------------------------------------------
%% usage: exit code, stdout, stderr as serverbench:main/1 would write them

usage_problem(Codes, #{<<"args">> := A, <<"mentions">> := Mentions}) ->
    Want = maps:get(<<"usage">>, Codes),
    case prepare(A) of
        {crashed, What} -> What;
        {run, Mod, _} -> fmt("accepted: would run ~p (expected exit ~p)", [Mod, Want]);
        {done, Code, Out, Err} ->
            OutB = unicode:characters_to_binary(Out),
            ErrB = unicode:characters_to_binary(Err),
            Lines = [L || L <- binary:split(ErrB, <<"\n">>, [global]), string:trim(L) =/= <<>>],
            Missing = [M || M <- Mentions, [L] <- [Lines], string:find(L, M) =:= nomatch],
            if Code =/= Want -> fmt("exit ~p, expected ~p (stderr ~0tp)", [Code, Want, ErrB]);
               OutB =/= <<>> -> fmt("stdout not empty: ~0tp", [OutB]);
               length(Lines) =/= 1 -> fmt("~b non-blank stderr lines, expected 1: ~0tp",
                                          [length(Lines), ErrB]);
               true ->
                   [Line] = Lines,
                   case {string:prefix(Line, "error: "), Missing} of
                       {nomatch, _} -> fmt("stderr line does not start with 'error: ': ~0tp", [Line]);
                       {_, [_ | _]} -> fmt("stderr line does not mention ~0tp: ~0tp", [Missing, Line]);
                       {_, []} -> ok
                   end
            end
    end.

%% ---------------------------------------------------------------------------
%% valid: accepted, the benchmark and variant named, and (variant null or fair) the
%% params the record would carry: every flag's param but the variant's and the knobs'
%% (knobs are reported apart), so the parsed map without variant, role, knobs and the
%% knob flags' params (spec/cli.json "knob").

valid_problem(#{<<"args">> := A, <<"benchmark">> := Bench, <<"variant">> := Variant,
                <<"params">> := Want}) ->
    case prepare(A) of
        {crashed, What} -> What;
        {done, Code, _Out, Err} ->
            fmt("refused: exit ~p, stderr ~0tp", [Code, unicode:characters_to_binary(Err)]);
        {run, Mod, Params} ->
            Name = Mod:name(),
            GotVariant = maps:get(variant, Params, null),
            Got = record_params(Bench, Params),
            if Name =/= Bench -> fmt("runs ~ts, expected ~ts", [Name, Bench]);
               GotVariant =/= Variant -> fmt("variant ~0tp, expected ~0tp", [GotVariant, Variant]);
               Variant =/= null, Variant =/= <<"fair">> -> ok;
               true ->
                   case same_params(Want, Got) of
                       true -> ok;
                       false -> fmt("params ~0tp, expected ~0tp", [Got, Want])
                   end
            end
    end.

record_params(Bench, Params) ->
    B = maps:get(Bench, maps:get(<<"benchmarks">>, sb_cli:spec())),
    Flags = case {B, Params} of
                {#{<<"roles">> := Roles}, #{role := Role}} ->
                    maps:get(<<"flags">>, maps:get(Role, Roles));
                _ -> maps:get(<<"flags">>, B)
            end,
    Knobs = [binary_to_atom(P, utf8) || #{<<"knob">> := _, <<"param">> := P} <- maps:values(Flags)],
    maps:from_list([{atom_to_binary(K, utf8), V}
                    || {K, V} <- maps:to_list(maps:without([variant, role, knobs | Knobs], Params))]).

same_params(Want, Got) ->
    lists:sort(maps:keys(Want)) =:= lists:sort(maps:keys(Got)) andalso
        lists:all(fun(K) -> same(maps:get(K, Want), maps:get(K, Got)) end, maps:keys(Want)).

%% Numbers by value: an int param must be that integer, a number param within REL_TOL.
same(W, G) when is_integer(W) -> is_integer(G) andalso W =:= G;
same(W, G) when is_float(W), is_number(G) ->
    abs(W - G) =< ?REL_TOL * max(abs(W), abs(G));
same(W, G) -> W =:= G.

%% ---------------------------------------------------------------------------

%% The arguments as an escript receives them (lists of characters); a crash is a
%% failure of its own (serverbench:main/1 would print "error: internal" and exit 1).
prepare(A) ->
    Args = [unicode:characters_to_list(X) || X <- A],
    try sb_cli:prepare(Args)
    catch Class:Reason:Stack -> {crashed, fmt("crashed: ~p:~0tp ~0tp", [Class, Reason, Stack])}
    end.

show_args(A) -> io_lib:format("~0tp", [[unicode:characters_to_list(X) || X <- A]]).

fmt(F, A) -> lists:flatten(io_lib:format(F, A)).
