%% @doc The im benchmark's wire format (docs/im.md): parsing one IRC line, checking nicks
%% and channel names, and formatting numerics and relayed lines. Pure functions; the
%% limits (server name, line, nick and channel lengths) come from spec/cli.json's
%% benchmarks.im through sb_im, so none is written here.
-module(sb_im_proto).
-export([parse/1, upper/1, valid_nick/2, valid_channel/2, fold/1, numeric/4, from_user/4, split_lines/3]).

%% RFC 2812: at most 14 middle parameters and a trailing one.
-define(MAX_PARAMS, 15).

-type limits() :: #{server_name := binary(), line_max_bytes := pos_integer(),
                    nick_max_chars := pos_integer(), channel_max_chars := pos_integer()}.
-export_type([limits/0]).

%% One line without its line ending -> {Command upper-cased, Params} (the trailing
%% parameter without its colon); <<>> for an empty line; error for a prefix alone.
-spec parse(binary()) -> {binary(), [binary()]} | error.
parse(Line) ->
    case skip_spaces(Line) of
        <<>> -> {<<>>, []};
        <<$:, Rest/binary>> ->
            case binary:split(Rest, <<" ">>) of
                [_Prefix, After] ->
                    case skip_spaces(After) of
                        <<>> -> error;
                        S -> command(S)
                    end;
                [_] -> error
            end;
        S -> command(S)
    end.

command(S) ->
    {Cmd, Rest} = token(S),
    {upper(Cmd), params(skip_spaces(Rest), [])}.

%% Commands are ASCII words (RFC 2812), so only a-z are mapped: string:uppercase/1 does
%% Unicode case mapping (a code-point walk through unicode_util), 0.75 % of the server's
%% samples at 20,000 messages/s (perf). A command already in upper case (what clients
%% send) is returned as it is, without building a new binary.
-spec upper(binary()) -> binary().
upper(Cmd) ->
    case has_lower(Cmd) of
        false -> Cmd;
        true -> << <<(if C >= $a, C =< $z -> C - 32; true -> C end)>> || <<C>> <= Cmd >>
    end.

has_lower(<<C, _/binary>>) when C >= $a, C =< $z -> true;
has_lower(<<_, Rest/binary>>) -> has_lower(Rest);
has_lower(<<>>) -> false.

params(<<>>, Acc) -> lists:reverse(Acc);
params(<<$:, Trailing/binary>>, Acc) -> lists:reverse([Trailing | Acc]);
params(S, Acc) when length(Acc) =:= ?MAX_PARAMS - 1 -> lists:reverse([S | Acc]);
params(S, Acc) ->
    {Tok, Rest} = token(S),
    params(skip_spaces(Rest), [Tok | Acc]).

token(S) ->
    case binary:split(S, <<" ">>) of
        [Tok, Rest] -> {Tok, Rest};
        [Tok] -> {Tok, <<>>}
    end.

skip_spaces(<<$\s, Rest/binary>>) -> skip_spaces(Rest);
skip_spaces(S) -> S.

%% 1 to nick_max_chars characters: a letter or one of []\`_^{|} first, then letters,
%% digits, those and '-'.
-spec valid_nick(binary(), limits()) -> boolean().
valid_nick(<<First, Rest/binary>> = N, #{nick_max_chars := Max}) when byte_size(N) =< Max ->
    (letter(First) orelse special(First)) andalso
        lists:all(fun(C) -> letter(C) orelse digit(C) orelse special(C) orelse C =:= $- end,
                  binary_to_list(Rest));
valid_nick(_, _) -> false.

letter(C) -> (C >= $a andalso C =< $z) orelse (C >= $A andalso C =< $Z).
digit(C) -> C >= $0 andalso C =< $9.
special(C) -> lists:member(C, "[]\\`_^{|}").

%% '#' first, at most channel_max_chars, none of space, comma, BEL, NUL, CR, LF.
-spec valid_channel(binary(), limits()) -> boolean().
valid_channel(<<$#, _/binary>> = C, #{channel_max_chars := Max}) when byte_size(C) >= 2,
                                                                    byte_size(C) =< Max ->
    nomatch =:= binary:match(C, [<<" ">>, <<",">>, <<7>>, <<0>>, <<"\r">>, <<"\n">>]);
valid_channel(_, _) -> false.

%% The case-insensitive key of a nick or channel name (ASCII).
-spec fold(binary()) -> binary().
fold(S) -> << <<(lower(C))>> || <<C>> <= S >>.

lower(C) when C >= $A, C =< $Z -> C + 32;
lower(C) -> C.

%% ":server NNN target p1 ... :last\r\n"; the last parameter is sent as a trailing one.
-spec numeric(non_neg_integer(), binary(), [binary()], limits()) -> iodata().
numeric(Code, Target, Params, #{server_name := Server}) ->
    [$:, Server, $\s, code(Code), $\s, Target, middle_and_trailing(Params), <<"\r\n">>].

code(N) when N < 10 -> [<<"00">>, integer_to_binary(N)];
code(N) when N < 100 -> [$0, integer_to_binary(N)];
code(N) -> integer_to_binary(N).

middle_and_trailing([]) -> [];
middle_and_trailing([Last]) -> [<<" :">>, Last];
middle_and_trailing([P | Rest]) -> [$\s, P | middle_and_trailing(Rest)].

%% ":prefix CMD middle... [:trailing]\r\n" (no trailing when it is none).
-spec from_user(binary(), binary(), [binary()], binary() | none) -> iodata().
from_user(Prefix, Cmd, Middle, Trailing) ->
    [$:, Prefix, $\s, Cmd, [[$\s, M] || M <- Middle],
     case Trailing of none -> []; T -> [<<" :">>, T] end, <<"\r\n">>].

%% Splits Buf at line ends (LF, a CR before it dropped). Returns the complete lines,
%% each either {line, Body} or too_long (a line whose body and CRLF exceed Max bytes),
%% and the rest: {Lines, Rest, Discarding}. Discarding: inside a line already too long,
%% whose bytes are dropped up to its end (the answer, 417, is given once, at its end).
-spec split_lines(binary(), boolean(), pos_integer()) ->
          {[{line, binary()} | too_long], binary(), boolean()}.
split_lines(Buf, Discarding, Max) -> split_lines(Buf, Discarding, Max, []).

split_lines(Buf, Discarding, Max, Acc) ->
    case binary:split(Buf, <<"\n">>) of
        [Line, Rest] ->
            Body = strip_cr(Line),
            Item = case Discarding orelse byte_size(Body) + 2 > Max of
                       true -> too_long;
                       false -> {line, Body}
                   end,
            split_lines(Rest, false, Max, [Item | Acc]);
        [Partial] when byte_size(Partial) + 1 > Max ->
            %% no line end yet and already too long: drop what came, remember the line is bad
            {lists:reverse(Acc), <<>>, true};
        [Partial] ->
            {lists:reverse(Acc), Partial, Discarding}
    end.

strip_cr(<<>>) -> <<>>;
strip_cr(Line) ->
    case binary:last(Line) of
        $\r -> binary:part(Line, 0, byte_size(Line) - 1);
        _ -> Line
    end.
