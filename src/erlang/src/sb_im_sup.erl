%% @doc The im server's supervisors (docs/im.md): one for the chat sessions, which
%% restarts a session that was killed (transient: a session ended for good exits
%% normally and stays ended), one for the channels (temporary: a channel's state is its
%% members, which a restart could not bring back), and the chaos monkey that kills a
%% random live session every --chaos-interval-ms, as RD-IM's rhesus does.
-module(sb_im_sup).
-behaviour(supervisor).
-export([start_link/2, init/1, chaos_start/4]).

-spec start_link(sessions | channels, map()) -> {ok, pid()}.
start_link(Which, Ctx) -> supervisor:start_link(?MODULE, {Which, Ctx}).

-spec init({sessions | channels, map()}) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init({sessions, Ctx}) ->
    %% The intensity must never stop the supervisor at the chaos rates a run asks for.
    Flags = #{strategy => simple_one_for_one, intensity => 1000000, period => 1},
    {ok, {Flags, [#{id => session, start => {sb_im_session, start_link, [Ctx]},
                    restart => transient, shutdown => brutal_kill, type => worker}]}};
init({channels, Ctx}) ->
    Flags = #{strategy => simple_one_for_one, intensity => 1000000, period => 1},
    {ok, {Flags, [#{id => channel, start => {sb_im_channel, start_link, [Ctx]},
                    restart => temporary, shutdown => brutal_kill, type => worker}]}}.

%% The chaos monkey: every IntervalMs, one live session drawn uniformly from the
%% session supervisor's children with the seeded stream, killed.
-spec chaos_start(pid(), pos_integer(), non_neg_integer(), atomics:atomics_ref()) -> pid().
chaos_start(Sup, IntervalMs, Seed, Ctr) ->
    spawn_link(fun() -> chaos(Sup, IntervalMs, rand:seed_s(exsss, Seed), Ctr) end).

chaos(Sup, IntervalMs, Rand, Ctr) ->
    receive after IntervalMs -> ok end,
    Live = [P || {_, P, _, _} <- supervisor:which_children(Sup), is_pid(P)],
    Rand1 = case Live of
                [] -> Rand;
                _ ->
                    {I, R} = rand:uniform_s(length(Live), Rand),
                    exit(lists:nth(I, Live), kill),
                    atomics:add(Ctr, sb_im:slot(sessions_killed), 1),
                    R
            end,
    chaos(Sup, IntervalMs, Rand1, Ctr).
