"""The parts of a protocol-5 IM sweep beyond the rate search, and the report's tables of
them (benchmarks/im/tables_v5.py reads the searches): the memory caps and live bytes per
client (IM2), chaos's throughput kept and its loss runs with the queued-kill control (IM5),
fan-out at saturation, the capacity line and every replicated run. Every derived table is
at csvout's stated precision (6 significant digits)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from serverbench.analysis.reading import csvout
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im import tables_v5 as V
from serverbench.benchmarks.im.columns import Col


def memory_counts(P) -> dict:
    """{(server row, cap bytes): the memory search's result (clients held)}."""
    return {k: r for k, r in V.results(P, V.MEMORY).items() if isinstance(k, tuple)}


def live_bytes_rounds(P) -> pd.DataFrame:
    """One row per server and round (`server_language`, `trial`, `value`): (live bytes at
    10,000 idle clients - at 1,000) / 9,000 from the idle part's MEMORY command; RSS only for
    a server that keeps no record (the production daemons, which have no MEMORY): one of ours
    whose record lacks live_bytes gives no value, never its RSS in place of it."""
    cols = ["server_language", "trial", "value"]
    d = T.valid(T.runs(P, "idle"))
    if d.empty:
        return pd.DataFrame(columns=cols)
    low, high = (int(n) for n in sorted(D.claim("IM2").get(Col.clients, (1000, 10000))))
    live = T.num(d, V.F["live_bytes"])
    daemon = T.num(d, "server.record.metrics.messages_routed").isna()  # counters null: a daemon
    d = d.assign(v=live.where(~daemon, T.num(d, T.RSS)))
    a = d[d[Col.clients] == high][["server_language", "trial", "v"]]
    b = d[d[Col.clients] == low][["server_language", "trial", "v"]]
    m = a.merge(b, on=["server_language", "trial"], suffixes=("_hi", "_lo"))
    m["value"] = (m["v_hi"] - m["v_lo"]) / (high - low)
    return m.dropna(subset=["value"])[cols].reset_index(drop=True)


def live_bytes_per_client(P) -> dict[str, float]:
    """{server: the median over rounds of live_bytes_rounds}."""
    r = live_bytes_rounds(P)
    return {s: float(g["value"].median()) for s, g in r.groupby("server_language")}


def _picked(a: pd.DataFrame) -> pd.Series:
    """How each attempt chose its victim (random or queued), from the record or its params."""
    return a["pick"].where(a["pick"].notna(), T.column(a, "server.record.params.chaos_pick")).astype(str)


def loss_runs(P) -> pd.DataFrame:
    """The final attempts of the loss runs: server, kills per second, pick, lost, dropped, kills."""
    a = V.attempts(P, V.LOSS)
    if a.empty:
        return a
    a = a[a["final"] & a["valid"]].copy()
    a["pick"] = _picked(a)
    target = a["target"].where(a["target"].notna(), T.column(a, "server.record.params.chaos_target"))
    a["target"] = target.astype(str)
    kps = a["kills_per_s"]
    ms = T.num(a, "server.record.params.chaos_interval_ms")
    a["kills_per_s"] = kps.where(kps.notna(), 1000.0 / ms.where(ms > 0))
    a["kills"] = sum(T.num(a, c).fillna(0) for c in V.KILLS)
    return a


def kept_bounds(plain: V.Result, shaken: V.Result) -> tuple[float, float]:
    """The interval kept = chaos-sustainable / sustainable can lie in, from the two results' bounds."""
    start = D.grid()[0]
    p_lo, p_hi = V.bounds(plain, start)
    s_lo, s_hi = V.bounds(shaken, start)
    lo = s_lo / p_hi if p_hi not in (0.0, float("inf")) else 0.0
    hi = s_hi / p_lo if p_lo > 0 else float("inf")
    return lo, hi


def _fixed(t: pd.DataFrame) -> pd.DataFrame:
    return csvout.at_precision(t.reset_index(drop=True))


def capacity_table(P) -> pd.DataFrame:
    """The generator's certified capacity against every server row's sustainable rate at the
    SLO: the rate, its share of the capacity, whether it is censored (and why), and the rate at
    each sensitivity SLO (text, as the rate's: a number, or that no replicated step met it)."""
    cap = V.capacity(P)
    slo, sens = D.slos()
    r = V.rates(P)
    s = {x: V.sensitivity(P, x) for x in sens}
    rows: list[dict[str, Any]] = [
        {
            "row": "generator (null sink): certified capacity",
            f"rate_at_{slo * 1e3:g}ms": V.rate_text(cap),
            "share_of_capacity": np.nan,
            "censored": "" if cap is None or cap.bound == "established" else "yes: " + cap.why,
        }
    ]
    for k in _order(r):
        x = r[k]
        share = x.value / cap.value if cap and cap.value and x.value else np.nan
        row: dict[str, Any] = {"row": V.row_label(x.server_language, k.endswith(V.NODELAY_ROW))}
        row |= {f"rate_at_{slo * 1e3:g}ms": V.rate_text(x), "share_of_capacity": share}
        row["censored"] = "yes: " + x.why if x.bound == "at_least" else ""
        for y in sens:  # the search ran: a rate no replicated step met is said so, not a dash
            met = V.sensitivity_text(s[y][k], cap) if k in s[y] else f"no replicated step met {y * 1e3:g} ms"
            row[f"rate_at_{y * 1e3:g}ms"] = met
        rows.append(row)
    return _fixed(pd.DataFrame(rows))


def _order(keys) -> list:
    servers = T.servers(pd.DataFrame({"server_language": [str(k).split(" ")[0] for k in keys]}))
    return sorted(keys, key=lambda k: (servers.index(str(k).split(" ")[0]), str(k)))


def runs_table(
    P, names=(V.CAPACITY, V.RATE, V.CHAOS_RATE, V.FANOUT_CAPACITY, V.FANOUT, V.MEMORY), grid: bool = False
) -> pd.DataFrame:
    """Every attempt of every step of the searches, re-runs with their reason; a memory
    search's cap and a fan-out search's channel size beside its row (each is its own search:
    two caps' steps of one server would read as one step run twice). With `grid`, also every
    attempt of the im grid's runs (search 'grid <mode>', run = the round; V.grid_attempts)."""
    a = V.attempts(P)
    a = a[a[Col.search_name].isin(names)] if not a.empty else a
    g = V.grid_attempts(P) if grid else pd.DataFrame()
    a = pd.concat([x for x in (a, g) if not x.empty], ignore_index=True) if not (a.empty and g.empty) else a
    if a.empty:
        return a
    a = a.assign(cap_mib=lambda d: d.cap_bytes / 2**20)
    if Col.channel_size in a:  # every run records the generator's default; only fan-out uses it
        a = a.assign(channel_size=a.channel_size.where(a.search_name.isin([V.FANOUT_CAPACITY, V.FANOUT])))
    own = [c for c in ("cap_mib", "channel_size") if c in a and a[c].notna().any()]
    a = a.sort_values(["search_name", "row", *own, "step", "run", "attempt_no"], kind="stable")
    cols = {
        "search_name": "search",
        "row_label": "row",
        **{c: c for c in own},
        "step": "step",
        "phase": "phase",
        "rate_per_s": "rate_per_s",
        "clients": "clients",
        "run": "run",
        "attempt_no": "attempt",
        "status": "status",
        "p99": "p99_s",
        "lost": "lost",
        "run_verdict": "run_verdict",
        "rerun_reason": "rerun_reason",
        "final": "final",
        "outcome": "step_outcome",
        "median_p99_s": "step_median_p99_s",
    }
    t = a[[c for c in cols if c in a]].rename(columns=cols)
    return _fixed(t)


def reruns_table(P) -> pd.DataFrame:
    """Each re-run: search (or the grid's part: 'grid latency', ...), row, step, run, the
    attempt re-run and its reason."""
    names = (V.CAPACITY, V.RATE, V.CHAOS_RATE, V.LOSS, V.FANOUT_CAPACITY, V.FANOUT, V.MEMORY)
    t = runs_table(P, names=names, grid=True)
    if t.empty:
        return t
    again = t["rerun_reason"].notna() & (t["rerun_reason"].astype(str) != "") & ~t["final"].astype(bool)
    return t[again].reset_index(drop=True)  # a final attempt with a reason was not run again (none left)


def chaos_table(P) -> pd.DataFrame:
    """IM5 per server of ours: sustainable with and without chaos, kept, loss per kill at
    each kill rate (random pick), and the queued-kill positive control."""
    plain, shaken = V.rates(P), V.rates(P, V.CHAOS_RATE)
    loss = loss_runs(P)
    ran = V.attempts(P, V.LOSS)  # every attempt, valid or not: 'no valid run' is not 'not run'
    tried = set() if ran.empty else set(ran.server_language[_picked(ran) == "queued"])
    rows = []
    for s in _order([k for k in shaken if k in plain]):
        lo, hi = kept_bounds(plain[s], shaken[s])
        row: dict[str, Any] = {"server": V.row_label(s, False), "sustainable": V.rate_text(plain[s])}
        row |= {"with_chaos": V.rate_text(shaken[s]), "kept": lo if lo == hi else np.nan}
        mine = loss[loss[Col.server_language] == s] if not loss.empty else loss
        chaos = D.im()["chaos"]
        for k in chaos["kills_per_s"]:
            g = mine[(mine["pick"] == "random") & (mine["kills_per_s"] == k)] if not mine.empty else mine
            g = g[g["target"] == chaos["target"]] if not g.empty else g
            row[f"lost_at_{k:g}_per_s"] = int(g["lost"].sum()) if len(g) else np.nan
            kills = g["kills"].sum() if len(g) else 0
            row[f"lost_per_kill_at_{k:g}_per_s"] = g["lost"].sum() / kills if kills else np.nan
        sess = mine[(mine["pick"] == "random") & (mine["target"] == chaos.get("loss_target"))] if len(mine) else mine
        sess = sess[sess["kills_per_s"] == chaos["queued_control_kills_per_s"]] if len(sess) else sess  # IM5(b)'s
        row["session_kills_lost"] = int(sess["lost"].sum()) if len(sess) else np.nan
        c = mine[mine["pick"] == "queued"] if not mine.empty else mine
        row[Col.control_lost] = int(c["lost"].sum()) if len(c) else np.nan
        row[Col.control_dropped] = float(c["dropped"].fillna(0).sum()) if len(c) else np.nan
        none = "no valid run" if s in tried else "not run"
        row["control_tripped"] = ("yes" if row[Col.control_lost] > 0 else "no: IM5(b) unclear") if len(c) else none
        rows.append(row)
    return _fixed(pd.DataFrame(rows))


def memory_table(P) -> pd.DataFrame:
    """IM2: each server's idle clients held within each cap, and live bytes per client."""
    counts, live = memory_counts(P), live_bytes_per_client(P)
    caps = sorted({int(c) for _, c in counts})
    rows = []
    for s in _order({k for k, _ in counts}):
        row: dict[str, Any] = {"server": V.row_label(s.split(" ")[0], s.endswith(V.NODELAY_ROW))}
        row |= {f"held_within_{c // 2**20}MiB": V.rate_text(counts.get((s, c))) for c in caps}
        row["live_bytes_per_client"] = live.get(s, np.nan)
        rows.append(row)
    return _fixed(pd.DataFrame(rows))


def fanout_table(P) -> pd.DataFrame:
    """Fan-out at saturation: per server row and channel size, the sustainable messages per
    second and deliveries per second = rate x (size - 1), 'at least' at or above the headroom
    of the generator's own fan-out capacity at that size (its first rows, the null sink)."""
    r = V.fanout_rates(P)
    rows = []
    for size, x in sorted(V.fanout_capacities(P).items()):
        v = x.value
        rows.append(
            {
                "row": "generator capacity (null sink)",
                "channel_size": size,
                "messages_per_s": V.rate_text(x),
                "deliveries_per_s": v * (size - 1) if v is not None else np.nan,
                "censored": "yes" if x.bound != "established" else "",
            }
        )
    order = _order({row for row, _ in r})
    for (row, size), x in sorted(r.items(), key=lambda kv: (order.index(kv[0][0]), kv[0][1])):
        v = x.value
        rows.append(
            {
                "row": V.row_label(x.server_language, row.endswith(V.NODELAY_ROW)),
                "channel_size": int(size),
                "messages_per_s": V.rate_text(x),
                "deliveries_per_s": v * (int(size) - 1) if v is not None else np.nan,
                "censored": "yes" if x.bound != "established" else "",
            }
        )
    return _fixed(pd.DataFrame(rows))
