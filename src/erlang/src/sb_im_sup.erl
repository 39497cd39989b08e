%% @doc The im server's supervisors (docs/im.md): one for the chat sessions, one for the
%% channels. Both restart a child that was killed (transient: one that ended for good --
%% a session whose peer left, a channel whose last member left -- exits normally and stays
%% ended). A channel's restart gets its members back from the members table
%% (sb_im_channel), since they are still connected. The chaos monkey is sb_im_chaos.
%%
%% The supervisors run at high priority, and so does each child's start (sb_im_session,
%% sb_im_channel): between a kill and the successor's pid in its table, senders find the
%% entry marked `restarting` and wait (sb_im_registry:live/3); at high priority the restart
%% is not queued behind every busy connection process, so that wait stays short.
-module(sb_im_sup).
-behaviour(supervisor).
-export([start_link/2, init/1]).

-spec start_link(sessions | channels, map()) -> {ok, pid()}.
start_link(Which, Ctx) -> supervisor:start_link(?MODULE, {Which, Ctx}).

-spec init({sessions | channels, map()}) -> {ok, {supervisor:sup_flags(), [supervisor:child_spec()]}}.
init({Which, Ctx}) ->
    process_flag(priority, high),
    %% The intensity must never stop the supervisor at the chaos rates a run asks for.
    Flags = #{strategy => simple_one_for_one, intensity => 1000000, period => 1},
    Mod = case Which of sessions -> sb_im_session; channels -> sb_im_channel end,
    {ok, {Flags, [#{id => Which, start => {Mod, start_link, [Ctx]},
                    restart => transient, shutdown => brutal_kill, type => worker}]}}.
