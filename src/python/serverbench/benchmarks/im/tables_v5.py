"""The reading of a protocol-5 IM sweep's searches (benchmarks/im/design.py tells one): every
attempt of every run of the generator's capacity certification (`im_capacity`, and per
channel size in fan-out mode `im_fanout_capacity`), the replicated rate search (`im_rate`),
chaos (`im_chaos_rate`, `im_chaos_loss`), fan-out (`im_fanout`) and memory caps
(`im_memory`), shaped as the harness writes them (raw `search`: name, step, phase, run,
attempt, final, rerun_reason, rerun_of, run_verdict, why_not; on a step's last final
attempt passed, establishes, step_verdict).

A search's result is recomputed here from its steps (the analysis's own copy of the rule,
protocol 5 im.search.rule): the last passing replicated step P below the first failing F;
'at least' when a step is censored (still generator-limited or interfered after its re-runs),
at the grid's top or at clients_max; 'below' the grid's start when its first step failed.
Processing's `selected` is not used: a scout step and a grid step at one rate share a
config_id, so every attempt is read by its own search fields, and only final attempts count."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import search as S
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im.columns import Col

# the searches' raw names, as the harness records them (benchmarks/im/search.py)
CAPACITY, RATE, CHAOS_RATE, FANOUT, MEMORY = (
    S.KINDS[k].name for k in ("capacity", "rate", "chaos", "fanout", "memory")
)
LOSS, FANOUT_CAPACITY = S.LOSS_NAME, S.FANOUT_CAPACITY_NAME
GENERATOR = S.SINK  # the capacity searches' server_language (the null sink)
F = {  # short name -> the flattened raw field
    "phase": "search.phase",
    "run": "search.run",
    "attempt_no": "search.attempt",
    "final": "search.final",
    "rerun_reason": "search.rerun_reason",
    "rerun_of": "search.rerun_of",
    "run_verdict": "search.run_verdict",
    "run_why_not": "search.why_not",
    "step_passed": "search.passed",
    "step_establishes": "search.establishes",
    "outcome": "search.step_verdict.outcome",
    "median_p99_s": "search.step_verdict.median_p99_s",
    "cap_bytes": "search.cap_bytes",
    "kills_per_s": "resolved_from.kills_per_s",
    "pick": "resolved_from.chaos_pick",
    "target": "resolved_from.chaos_target",
    "dropped": "server.record.metrics.chaos_dropped_messages",
    "live_bytes": "server.record.metrics.live_bytes",
}
KILLS = tuple(f"server.record.metrics.{k}_killed" for k in ("sessions", "channels", "connections"))
NODELAY = ("search.server_settings.nodelay", "server.record.runtime.nodelay")
NODELAY_ROW = " nodelay"  # a search result's key for a production server's TCP_NODELAY row: "ngircd nodelay"


def _flag(v) -> bool:
    return bool(T.flag(v))


def nodelay(d: pd.DataFrame) -> pd.Series:
    """Whether each run's server ran with TCP_NODELAY set on its accepted sockets (a
    production server's second row; ours always set it and record no such setting)."""
    on = pd.Series(False, index=d.index)
    for c in NODELAY:
        if c in d:
            on |= d[c].map(lambda v: str(v).strip().lower() in ("on", "true", "1", "yes"))
    return on


def row_label(server: str, nodelay: bool) -> str:
    name = LANGUAGE_LABELS.get(server, server)
    if server == GENERATOR:  # its capacity searches run it against its own server role
        return f"{name} (null sink)"
    if server in T.production():
        return f"{name}, {'TCP_NODELAY' if nodelay else 'as shipped'}"
    return name


def attempts(P, name: str | None = None) -> pd.DataFrame:
    """Every attempt of the protocol-5 searches (of one, `name`), with the short columns of
    F, `row` (server, and ' nodelay' for a production server's TCP_NODELAY row), `final`,
    `valid`, `generator_limited` and `lost`."""
    r = P.runs
    if r.empty or D.PHASE not in r:
        return pd.DataFrame()
    d = r[(r[Col.benchmark] == "im") & r[D.PHASE].notna() & ~r[Col.warmup].astype(bool)]
    if name is not None:
        d = d[d[Col.search_name] == name]
    return _shaped(d)


def grid_attempts(P) -> pd.DataFrame:
    """Every attempt of the im grid's runs that the harness attempted by the searches' re-run
    rule (search.grid_rerun_reason: raw `search` with attempt, rerun_reason, rerun_of and final,
    no name), shaped as `attempts`: search_name 'grid <mode>', run its round (the trial)."""
    r = P.runs
    if r.empty or F["attempt_no"] not in r or Col.search_name not in r:
        return pd.DataFrame()
    marked = T.num(r, F["attempt_no"]).notna() & r[Col.search_name].isna()
    d = r[(r[Col.benchmark] == "im") & marked & ~r[Col.warmup].astype(bool)]
    if d.empty:
        return d.copy()
    d = _shaped(d.assign(search_name="grid " + T.column(d, "mode").astype(str)))
    d["run"] = T.num(d, "trial")
    return d.sort_values(["search_name", "row", "run", "attempt_no"], kind="stable").reset_index(drop=True)


def _shaped(d: pd.DataFrame) -> pd.DataFrame:
    if d.empty:
        return d.copy()
    d = T.mark(d)
    for short, col in F.items():
        d[short] = T.column(d, col)
    d[Col.nodelay] = nodelay(d)
    d["row"] = [s + (NODELAY_ROW if n else "") for s, n in zip(d[Col.server_language], d[Col.nodelay])]
    d["row_label"] = [row_label(s, n) for s, n in zip(d[Col.server_language], d[Col.nodelay])]
    d["final"] = d["final"].map(_flag)
    d[Col.step] = T.num(d, "search_step")
    d["p99"] = T.num(d, "latency_p99_s")
    d["lost"] = T.num(d, "messages_lost").fillna(0)
    d["valid"] = d[Col.is_ok].astype(bool) & ~d["generator_limited"]
    for c in ("run", "attempt_no", "cap_bytes", "kills_per_s", "median_p99_s", "dropped", "live_bytes"):
        d[c] = T.num(d, F[c]) if c in F else d[c]
    return d.sort_values(["search_name", "row", "step", "run", "attempt_no"], kind="stable").reset_index(drop=True)


def _group_keys(d: pd.DataFrame) -> list[str]:
    """One search: its name and row, and its cap (memory) or channel size (fan-out)."""
    keys = ["search_name", "row"]
    if d[Col.search_name].eq(MEMORY).any():
        keys.append("cap_bytes")
    if d[Col.search_name].isin([FANOUT, FANOUT_CAPACITY]).any():
        keys.append("channel_size")
    return keys


def steps(a: pd.DataFrame) -> pd.DataFrame:
    """One row per step of every search in `a` (attempts): its rate (or clients), phase,
    outcome (the harness's step_verdict, else pass/fail/censored from passed/establishes, else
    from the final attempts by the step rule), median p99 of the final runs, the runs and re-runs."""
    if a.empty:
        return pd.DataFrame()
    keys = _group_keys(a)
    rows = []
    for k, g in a.groupby(keys + ["step"], dropna=False, sort=True):
        fin = g[g["final"]] if g["final"].any() else g.sort_values("attempt_no").groupby("run").tail(1)
        decided = g[g["outcome"].notna() | g["step_passed"].notna()]
        outcome = _outcome(decided.iloc[-1] if len(decided) else None, fin)
        param = "clients" if g[Col.search_name].iloc[0] == MEMORY else "rate_per_s"
        rows.append(
            {
                **dict(zip(keys + ["step"], k)),
                "row_label": g["row_label"].iloc[0],
                "server_language": g[Col.server_language].iloc[0],
                "phase": g["phase"].iloc[0],
                "value": float(T.num(g, param).iloc[0]),
                "outcome": outcome,
                "median_p99_s": float(np.median(fin["p99"].dropna())) if fin["p99"].notna().any() else np.nan,
                "runs": int(len(fin)),
                "reruns": int(len(g) - len(fin)),
                "lost": int(fin["lost"].sum()),
                "valid": bool(fin["valid"].all()),
                "why_not": next((w for w in g["run_why_not"][::-1] if isinstance(w, str) and w), ""),
            }
        )
    return pd.DataFrame(rows)


def _outcome(decided, fin: pd.DataFrame) -> str:
    if decided is not None and isinstance(decided["outcome"], str):
        return decided["outcome"]
    if decided is not None and pd.notna(decided["step_passed"]):
        if _flag(decided["step_passed"]):
            return "pass"
        return "fail" if _flag(decided["step_establishes"]) else "censored"
    verdicts = set(fin["run_verdict"].dropna())
    return "censored" if "censored" in verdicts else "fail" if "fail" in verdicts else "pass"


Bound = Literal["established", "at_least", "below_start", "none"]


@dataclass(frozen=True, slots=True)
class Result:
    """One search's result: its value (the largest passing replicated step; None when none
    passed), how far it is known (`bound`), why, and the server row's language."""

    value: float | None
    bound: Bound
    why: str
    server_language: str = ""


def result(st: pd.DataFrame, top: float, at_least_from: float | None = None) -> Result:
    """One search's steps -> Result(value, bound, why): the largest passing replicated step P (the
    scout's single runs never count, except in a memory search, whose probes are single runs);
    bound 'established' when a replicated step failed above P, 'at_least' when a step was
    censored or P reached `top` (or at_least_from), 'below_start' when nothing passed but a
    step failed on the server, 'none' without a replicated step."""
    rep = st[st["phase"] != "scout"].sort_values("step") if not st.empty else st
    if rep.empty:
        return Result(None, "none", "no replicated step")
    passes, value = [], None
    for _, s in rep.iterrows():
        if s["outcome"] == "censored":
            why = f"censored at {s['value']:,.0f} ({s['why_not'] or 'generator-limited or interfered after re-runs'})"
            return Result(max(passes) if passes else None, "at_least", why)
        if s["outcome"] == "pass":
            passes.append(float(s["value"]))
    value = max(passes) if passes else None
    fails = [float(v) for v in rep.loc[rep["outcome"] == "fail", "value"] if value is None or v > value]
    if value is None:
        if fails:
            return Result(None, "below_start", f"fails at {min(fails):,.0f}")
        return Result(None, "none", "no step decided")
    if value >= top * (1 - 1e-9) or (at_least_from is not None and value >= at_least_from * (1 - 1e-9)):
        return Result(value, "at_least", f"passed the top, {value:,.0f}")
    if not fails:
        return Result(value, "at_least", "the search ended without a failing step")
    return Result(value, "established", f"fails at {min(fails):,.0f}")


def search_steps(P, name: str) -> pd.DataFrame:
    """steps(attempts(P, name)), computed once per sweep (Processed.memo): IM4's three
    comparisons, IM5, the capacity table and the figures all read it."""
    return P.memo(("im-search-steps", name), lambda: steps(attempts(P, name)))


def results(P, name: str) -> dict[str | tuple, Result]:
    """{search key (row, or (row, cap) / (row, channel size)): result} of one search name."""
    st = search_steps(P, name)
    if st.empty:
        return {}
    top = float(D.im()["memory"]["clients_max"]) if name == MEMORY else D.grid()[1]
    keys = [k for k in _group_keys(st) if k != "search_name"]
    return {
        (k[0] if len(keys) == 1 else tuple(k)): replace(result(g, top), server_language=g[Col.server_language].iloc[0])
        for k, g in st.groupby(keys, dropna=False)
    }


def capacity(P) -> Result | None:
    """The generator's certified capacity (the null sink's search), or None."""
    return results(P, CAPACITY).get(GENERATOR)


def censor(r: Result, cap: Result | None) -> Result:
    """A server's rate at or above headroom x the certified capacity is 'at least' (the
    generator may have set it)."""
    if cap is None or cap.value is None or r.value is None or r.bound != "established":
        return r
    limit = float(D.im()["generator"][Col.headroom]) * cap.value
    if r.value >= limit * (1 - 1e-9):
        return replace(r, bound="at_least", why=f"at or above {limit:,.0f}/s, the generator's headroom")
    return r


def fanout_rates(P) -> dict[tuple, Result]:
    """{(row, channel size): the fan-out search's result, censored by the headroom of the
    generator's fan-out capacity at that size (a sweep without one: as found)."""
    caps = {int(k[1]): r for k, r in results(P, FANOUT_CAPACITY).items() if isinstance(k, tuple)}
    return {k: censor(r, caps.get(int(k[1]))) for k, r in results(P, FANOUT).items() if isinstance(k, tuple)}


def fanout_capacities(P) -> dict[int, Result]:
    """{channel size: the generator's certified fan-out capacity (messages per second)}."""
    return {int(k[1]): r for k, r in results(P, FANOUT_CAPACITY).items() if isinstance(k, tuple)}


def rates(P, name: str = RATE) -> dict[str, Result]:
    """{row: the rate search's result, censored by the generator's headroom}."""
    cap = capacity(P)
    return {str(k): censor(r, cap) for k, r in results(P, name).items()}  # a rate search's keys are rows


def sensitivity(P, slo_s: float, name: str = RATE) -> dict:
    """{row: the largest replicated step whose final runs were valid, lost nothing and whose
    median p99 meets slo_s} (protocol 5 search.sensitivity: no search of its own)."""
    st = search_steps(P, name)
    if st.empty:
        return {}
    ok = st[(st["phase"] != "scout") & st["valid"] & (st["lost"] == 0) & (st["median_p99_s"] <= slo_s)]
    return {row: float(g["value"].max()) for row, g in ok.groupby("row")}


def sensitivity_text(value: float, cap: Result | None) -> str:
    """A rate at a sensitivity SLO (search.sensitivity) as the tables write it: 'at least'
    at or above the generator's headroom or at the grid's top, by the rule `censor` and
    `result` apply to the SLO's own rate."""
    limit = float(D.im()["generator"][Col.headroom]) * cap.value if cap and cap.value else float("inf")
    at_least = value >= min(limit, D.grid()[1]) * (1 - 1e-9)
    return ("at least " if at_least else "") + f"{value:,.0f}"


def rate_text(r: Result | None) -> str:
    if r is None:
        return "not run"
    if r.value is None:
        start = D.grid()[0]
        # censored before any step passed: the rate is not known, not zero
        words = {"below_start": f"below {start:,.0f}", "at_least": "unknown: censored before any pass"}
        return words.get(r.bound, "no step decided")
    return ("at least " if r.bound == "at_least" else "") + f"{r.value:,.0f}"


def bounds(r: Result | None, start: float) -> tuple[float, float]:
    """(lowest, highest) the true value of a search's result can be: established [v, v]; at
    least [v, inf); below the start [0, start]; no result [0, inf)."""
    inf = float("inf")
    if r is None or r.bound == "none":
        return 0.0, inf
    if r.bound == "below_start":
        return 0.0, start
    v = float(r.value or 0.0)
    return (v, inf) if r.bound == "at_least" else (v, v)
