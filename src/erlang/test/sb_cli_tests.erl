%% The parser's own logic on a made-up spec that has what the real one may not have
%% yet (roles, per-language benchmarks, roles and variants, each kind of bound), and
%% the built-in copy of spec/cli.json being current. Every flag and bad value of the
%% real spec is checked in process by sb_parser_cases_tests (tests/conformance/parser-cases.json).
-module(sb_cli_tests).
-include_lib("eunit/include/eunit.hrl").

embedded_spec_is_current_test() ->
    ?assertEqual(sb_test_util:read_json("spec/cli.json"), sb_cli:spec()).

test_spec() ->
    sb_json_decode:decode(
      <<"{\"languages\": {"
        "  \"l1\": {\"benchmarks\": [\"b\", \"sock\"], \"variants\": [\"fair\", \"paper\"],"
        "          \"roles\": {\"sock\": [\"server\"]}},"
        "  \"l2\": {\"benchmarks\": [\"b\"]}},"
        " \"benchmarks\": {"
        "  \"b\": {\"flags\": {"
        "    \"--n\": {\"param\": \"n\", \"type\": \"int\", \"min\": 1, \"max\": 99999999999999999999, \"required\": true},"
        "    \"--t\": {\"param\": \"t\", \"type\": \"number\", \"min_exclusive\": 0, \"max\": 0.5, \"default\": 0.25},"
        "    \"--k\": {\"param\": \"k\", \"type\": \"int\", \"min\": 2, \"max\": 5, \"default\": 3},"
        "    \"--variant\": {\"param\": null, \"type\": \"enum\", \"values\": [\"fair\", \"paper\"], \"default\": \"fair\"}}},"
        "  \"sock\": {\"roles\": {"
        "    \"server\": {\"flags\": {\"--port\": {\"param\": \"port\", \"type\": \"int\", \"min\": 0, \"max\": 65535, \"required\": true}}},"
        "    \"client\": {\"flags\": {\"--port\": {\"param\": \"port\", \"type\": \"int\", \"min\": 1, \"max\": 65535, \"required\": true}}}}}},"
        " \"implemented_variants\": [\"fair\"]}">>).

p(L, Args) -> sb_cli:parse(test_spec(), L, Args).

bad(Mention, L, Args) ->
    {error, Msg} = p(L, Args),
    ?assertNotEqual({nomatch, Args, Msg}, {string:find(Msg, Mention), Args, Msg}).

parses_from_spec_test() ->
    ?assertEqual({run, <<"b">>, #{n => 99999999999999999999, t => 0.5, k => 3, variant => <<"paper">>}},
                 p(<<"l1">>, ["b", "--n", "99999999999999999999", "--t=.5", "--variant", "paper"])),
    ?assertEqual({run, <<"b">>, #{n => 1, t => 0.25, k => 3, variant => <<"fair">>}},
                 p(<<"l2">>, ["b", "--n", "01"])),
    ?assertEqual({run, <<"sock">>, #{port => 0, role => <<"server">>}},
                 p(<<"l1">>, ["sock", "server", "--port", "0"])),
    ?assertEqual(help, p(<<"l1">>, ["b", "--help"])),
    ?assertEqual(version, p(<<"l1">>, ["--version"])).

refuses_per_spec_test() ->
    bad("--n", <<"l1">>, ["b", "--n", "100000000000000000000"]),
    bad("--t", <<"l1">>, ["b", "--n", "1", "--t", "0"]),
    bad("--t", <<"l1">>, ["b", "--n", "1", "--t", "0.5000001"]),
    bad("--t", <<"l1">>, ["b", "--n", "1", "--t", "nan"]),
    bad("--k", <<"l1">>, ["b", "--n", "1", "--k", "6"]),
    bad("paper", <<"l2">>, ["b", "--n", "1", "--variant", "paper"]),
    bad("missing required flag --n", <<"l1">>, ["b"]),
    bad("--n needs a value", <<"l1">>, ["b", "--n", "--k", "3"]),
    bad("given more than once", <<"l1">>, ["b", "--n", "1", "--n=1"]),
    bad("l2 does not implement the benchmark sock", <<"l2">>, ["sock", "server", "--port", "0"]),
    bad("role client", <<"l1">>, ["sock", "client", "--port", "1"]),
    bad("needs a role", <<"l1">>, ["sock", "--port", "1"]),
    bad("unknown role", <<"l1">>, ["sock", "peer"]),
    bad("unknown flag --n", <<"l1">>, ["sock", "server", "--n", "1"]),
    bad("unknown sub-command", <<"l1">>, ["nope"]),
    bad("--version takes no value", <<"l1">>, ["--version", "x"]).

usage_lists_every_flag_test() ->
    U = iolist_to_binary(sb_cli:usage()),
    S = sb_cli:spec(),
    Benches = maps:get(<<"benchmarks">>, S),
    [?assertNotEqual({nomatch, B, F}, {binary:match(U, F), B, F})
     || B <- maps:get(<<"benchmarks">>, maps:get(<<"erlang">>, maps:get(<<"languages">>, S))),
        F <- maps:keys(maps:get(<<"flags">>, maps:get(B, Benches), #{}))].

every_listed_benchmark_is_built_test() ->
    S = sb_cli:spec(),
    [?assertMatch({{ok, _}, B}, {sb_benchmark:find(B), B})
     || B <- maps:get(<<"benchmarks">>, maps:get(<<"erlang">>, maps:get(<<"languages">>, S)))].
