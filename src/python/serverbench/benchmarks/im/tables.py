"""The IM tables and the reading of their records that every IM figure, claim and report
row uses. One row per generator run, `server_language` the server it loaded (one of ours,
ngircd or InspIRCd); the profile's parts (IM_PROTOCOL in docs/protocol.md) are told apart
by the record: `latency` (mode latency, no chaos stage), `login`, `idle`, `fanout`, the
rate search's steps (raw `search.name` im_rate: table im_rate) and the chaos stage (raw
`resolved_from.rule` im_chaos, chaos on and off paired by round).

`runs` marks the runs the generator limited (kept so a figure draws them hollow, never
counted as the server's result: they are invalid, so no claim reads them) and those that
lost messages with chaos off (the server's failure, kept and marked, never dropped)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from serverbench import catalog, contract
from serverbench.analysis.reading import registry
from serverbench.benchmarks.im.columns import Col

TABLE = "im"
SEARCH_TABLE = "im_rate"  # the rate search's steps (raw search.name im_rate)
SEARCH_NAME = "im_rate"
CHAOS_RULE = "im_chaos"  # raw resolved_from.rule of the chaos stage's runs
# the server's own record, flattened into the run's columns (absent for ngircd and InspIRCd)
SERVER_CHAOS = "server.record.params.chaos_interval_ms"
SERVER_KILLED = "server.record.metrics.sessions_killed"
SERVER_SENDQ = "server.record.metrics.sendq_disconnects"
RESOLVED_RULE = "resolved_from.rule"
SEARCH_PASSED = "search.passed"
SEARCH_WHY_NOT = "search.why_not"
SEARCH_ESTABLISHES = "search.establishes"  # a failing step's: the server's failure (True) or censoring
# the server process tree's largest sampled RSS over the generator's run (the harness's probe);
# server.peak_rss_bytes is wait4's, the ircd launcher's own for ngircd and InspIRCd: never used
RSS = "server_rss_peak_bytes"
KEYS = (
    "variant",
    "server_language",
    "placement",
    "mode",
    "clients",
    "rate_per_s",
    "schedule",
    "channel_size",
    "payload_bytes",
    "warmup_s",
    "duration_s",
    SERVER_CHAOS,  # the chaos stage's two runs of a round are two configurations
)
METRICS = (
    "latency_p99_s",
    "latency_p50_s",
    "latency_p90_s",
    "latency_p999_s",
    "latency_max_s",
    "deliveries_per_s",
    "login_s",
    "clients_registered",
    "messages_lost",
    "messages_duplicated",
    "messages_reordered",
    "deliveries_expected",
    "warmup_messages_delivered",
    "client_cpu_share",
    "schedule_slip_p99_s",
    RSS,
)
TABLE_SPEC = registry.TableSpec(
    name=TABLE,
    benchmark="im",
    keys=KEYS,
    metrics=METRICS,
    ratio_metric="latency_p99_s",
    explore_x="rate_per_s",
)
SEARCH_TABLE_SPEC = registry.TableSpec(
    name=SEARCH_TABLE,
    benchmark="im",
    keys=("variant", "server_language", "placement", "mode", "clients", "rate_per_s"),
    metrics=METRICS,
    explore_metric="latency_p99_s",
    explore_x="rate_per_s",
    search_steps=True,
)
# the generator's reasons for an invalid run (src/im_loadgen/src/record.rs; "CPU share" before
# protocol 5's instrument, "busy share" and "read lateness" since), carried into the run's
# status_reason by the harness (classify: "...validation failed: <reason>")
GENERATOR_LIMITED = r"\bgenerator (?:busy share|CPU share|schedule slip|read lateness)"


def production() -> tuple[str, ...]:
    """The production servers (spec/cli.json languages.<s>.production: ngircd, InspIRCd): the
    anchor rows of every IM figure and table, never in a claim's population."""
    return tuple(s for s in contract.languages() if catalog.language(s).production)


def servers(d: pd.DataFrame) -> list[str]:
    """The servers in d, ours first in the spec's order, then the production ones."""
    have = set(d[Col.server_language]) if Col.server_language in d else set()
    spec = [s for s in contract.languages() if s in have]
    rest = sorted(have - set(spec))
    anchors = set(production())
    return [s for s in spec + rest if s not in anchors] + [s for s in spec + rest if s in anchors]


def column(d: pd.DataFrame, name: str) -> pd.Series:
    return d[name] if name in d else pd.Series(np.nan, index=d.index, dtype=object)


def num(d: pd.DataFrame, name: str) -> pd.Series:
    """A column as numbers (NaN where absent or empty)."""
    return pd.to_numeric(column(d, name), errors="coerce")


def all_runs(P, table: str = TABLE) -> pd.DataFrame:
    """Selected (processing's rule: a grid run re-run by protocol 5's rule is its last attempt),
    non-warm-up runs of an IM table, marked (see mark)."""
    r = P.runs
    if r is None or r.empty or Col.table not in r:
        return pd.DataFrame()
    d = r[(r[Col.table] == table) & r[Col.selected].astype(bool) & ~r[Col.warmup].astype(bool)].copy()
    return mark(d) if not d.empty else d


def runs(P, mode: str | None = None) -> pd.DataFrame:
    """Selected, non-warm-up IM runs (of one mode, if given) with the columns of mark;
    the chaos stage's runs are among them (column `chaos_stage`)."""
    d = all_runs(P)
    if d.empty or mode is None:
        return d
    return d[d[Col.mode] == mode]


def mark(d: pd.DataFrame) -> pd.DataFrame:
    """The judgements of a run, from its own columns: `generator_limited` (one of the
    generator's two reasons in status_reason), `chaos_ms` (the server's chaos interval, 0
    off or unknown), `server_failed` (messages lost while the server ran without chaos),
    `chaos_stage` (a run of the chaos stage, chaos on or off)."""
    d = d.copy()
    reason = column(d, "status_reason")
    d["generator_limited"] = reason.astype(object).where(reason.notna(), "").astype(str).str.contains(GENERATOR_LIMITED)
    d["chaos_ms"] = num(d, SERVER_CHAOS).fillna(0)
    lost = num(d, "messages_lost").fillna(0)
    d["server_failed"] = (lost > 0) & (d["chaos_ms"] == 0)
    d["chaos_stage"] = column(d, RESOLVED_RULE).astype(object).eq(CHAOS_RULE)
    return d


def valid(d: pd.DataFrame) -> pd.DataFrame:
    """The runs that are a server's result: ok (an invalid run, e.g. one the generator
    limited, never is)."""
    if d.empty:
        return d
    return d[d[Col.is_ok].astype(bool) & ~d["generator_limited"]]


def latency_part(P) -> pd.DataFrame:
    """The latency part's runs (mode latency, outside the chaos stage)."""
    d = runs(P, "latency")
    return d[~d["chaos_stage"]] if not d.empty else d


def chaos_stage(P) -> pd.DataFrame:
    d = runs(P, "latency")
    return d[d["chaos_stage"]] if not d.empty else d


def per_round(d: pd.DataFrame, value: str) -> pd.DataFrame:
    """(trial, value) of one server's runs at one configuration: a side of a paired comparison."""
    out = pd.DataFrame({"trial": d[Col.trial].to_numpy(), "value": num(d, value).to_numpy()})
    return out[out["value"].notna()]


def pick(present, want):
    """want if the sweep has it, else the largest value it has (a reduced profile, e.g.
    quick's IM slice, shown at its own sizes; the claims never fall back)."""
    have = sorted({v for v in present if pd.notna(v)})
    return want if want in have or not have else have[-1]


# ------------------------------------------------------------------ the idle part (IM2)


def idle_pair(P, want: tuple[int, int]) -> tuple[int, int]:
    """The two idle N between which bytes per client are shown: the protocol's pair where
    the sweep ran both, else its two largest N with the most rounds."""
    d = runs(P, "idle")
    if d.empty:
        return want
    rounds = d.groupby("clients")[Col.trial].nunique()
    if set(want) <= set(rounds.index):
        return want
    best = sorted(rounds.index, key=lambda n: (rounds[n], n))[-2:]
    return (int(min(best)), int(max(best))) if len(best) == 2 else want


def idle_bytes_per_client(P, low: int, high: int) -> pd.DataFrame:
    """Per server and round: bytes per idle client = (server RSS peak at N = high - at N =
    low) / (high - low), from the valid idle runs of that round with every client
    registered (server_language, trial, value)."""
    d = valid(runs(P, "idle"))
    if d.empty:
        return pd.DataFrame(columns=["server_language", "trial", "value"])
    d = d[num(d, "clients_registered") == num(d, "clients")]
    a = d[d[Col.clients] == high][["server_language", "trial", RSS]]
    b = d[d[Col.clients] == low][["server_language", "trial", RSS]]
    m = a.merge(b, on=["server_language", "trial"], suffixes=("_high", "_low"))
    m["value"] = (pd.to_numeric(m[f"{RSS}_high"]) - pd.to_numeric(m[f"{RSS}_low"])) / (high - low)
    return m[m["value"].notna()][["server_language", "trial", "value"]]


MEMORY_STATUS = "over_memory_budget"


def largest_held(P) -> pd.DataFrame:
    """Per server: the largest idle N whose every run held every client (`largest_n`), the
    smallest N at which a run did not (`failed_n`, with its status), and whether that was
    the memory budget (`memory_limited`: C3's 'established' for IM2's limit rule)."""
    d = runs(P, "idle")
    rows = []
    for s, g in d.groupby("server_language") if not d.empty else []:
        held = g[Col.is_ok].astype(bool) & ~g["generator_limited"] & (num(g, "clients_registered") == num(g, "clients"))
        per_n = held.groupby(g[Col.clients]).all().sort_index()
        bad = [int(n) for n, ok in per_n.items() if not ok]
        first_bad = min(bad) if bad else None
        ok_ns = [int(n) for n, ok in per_n.items() if ok and (first_bad is None or n < first_bad)]
        status = None
        if first_bad is not None:
            fb = g[(g[Col.clients] == first_bad) & ~held]
            status = str(fb[Col.status].iloc[0]) if len(fb) else None
        rows.append(
            {
                "server_language": s,
                "largest_n": max(ok_ns) if ok_ns else None,
                "failed_n": first_bad,
                "failure_status": status,
                "memory_limited": status == MEMORY_STATUS,
            }
        )
    return pd.DataFrame(rows, columns=["server_language", "largest_n", "failed_n", "failure_status", "memory_limited"])


# ------------------------------------------------------------------ the rate search (IM4)


def search_steps(P) -> pd.DataFrame:
    """The rate search's steps in order per server, each with `passed` (the harness's
    search.passed; recomputed from the record where absent: ok, nothing lost, p99 within
    the search's SLO is the caller's, so absent means unknown) and `why_not`."""
    d = all_runs(P, SEARCH_TABLE)
    if d.empty:
        return d
    d = d.assign(step=num(d, "search_step"), p99=num(d, "latency_p99_s"), lost=num(d, "messages_lost").fillna(0))
    passed = column(d, SEARCH_PASSED)
    d["passed"] = passed.map(flag)
    d["establishes"] = column(d, SEARCH_ESTABLISHES).map(flag)
    d["why_not"] = column(d, SEARCH_WHY_NOT)
    return d.sort_values(["server_language", "step"]).reset_index(drop=True)


def flag(v) -> bool | None:
    """A recorded yes/no (True/False, or their text in runs.csv), None where not recorded."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return None
    return v if isinstance(v, bool) else str(v).strip().lower() in ("true", "1")


def sustainable(steps: pd.DataFrame, slo_s: float, search_slo_s: float, top_rate: float) -> dict:
    """One server's search steps -> its sustainable rate at SLO slo_s: the largest rate of
    the leading run of passing steps with p99 <= slo_s (None: no step passed). `established`
    when a step after that run failed for the server's reason (p99 over slo_s, a message
    lost, the server's failure); otherwise the rate is censored: `at least` it, because the
    search stopped on a run the generator limited (or that says it does not establish a
    limit: the harness's search.establishes false, e.g. a timeout) or at the grid's top.
    `why` says which. A step's passed/establishes are the harness's where recorded, else
    judged here from the record by the same rule."""
    rate, last = None, None
    for _, s in steps.sort_values("step").iterrows():
        ok = bool(s[Col.is_ok]) and s["lost"] == 0 and pd.notna(s["p99"]) and s["p99"] <= search_slo_s
        if s.get("passed") is not None:
            ok = bool(s["passed"])
        censors = bool(s["generator_limited"]) or (not ok and s.get("establishes") is False)
        if censors:
            what = "the generator limited the run" if s["generator_limited"] else _why(s, slo_s)
            return _limit(rate, False, f"stopped at {s[Col.rate_per_s]:,.0f}/s: {what} (limit not established)")
        if not ok or s["p99"] > slo_s:
            return _limit(rate, True, f"fails at {s[Col.rate_per_s]:,.0f}/s ({_why(s, slo_s)})")
        rate, last = float(s[Col.rate_per_s]), s
    if last is None:
        return _limit(None, False, "no search step")
    if rate is not None and rate >= top_rate * (1 - 1e-9):
        return _limit(rate, False, "passed every step up to the grid's top")
    return _limit(rate, False, f"the search ended after {rate:,.0f}/s without a failing step")


def _limit(rate, established: bool, why: str) -> dict:
    return {"rate_per_s": rate, "established": established, "why": why}


def _why(s, slo_s: float) -> str:
    if not bool(s[Col.is_ok]):
        return f"{s[Col.status]}: {s.get(Col.status_reason) or ''}".strip(": ")
    if s["lost"] > 0:
        return f"lost {int(s['lost']):,} messages"
    if isinstance(s.get("why_not"), str) and s["why_not"] and not (pd.notna(s["p99"]) and s["p99"] > slo_s):
        return s["why_not"]
    return f"p99 {s['p99'] * 1e3:.3g} ms > {slo_s * 1e3:g} ms"
