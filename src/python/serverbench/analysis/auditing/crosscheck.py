"""A second, minimal implementation of the verdict protocol, written from its text alone
(docs/protocol*.md, spec/protocol*.json), to check the committed tables against it (N-version
checking; `python -m serverbench.analysis.auditing.crosscheck`). It imports no verdict machinery,
only the field names (rawdata.columns). (Kept whole past ~350 lines: a second implementation is
read and checked as one text, apart from the machinery it checks.)

Recomputed, per sweep folder (data/processed/<sweep>/):
- each ratio comparison's paired per-round log ratios from runs.csv (ok runs, the later ok
  attempt of a re-run, paired by trial), their Hodges-Lehmann estimate and exact Wilcoxon
  signed-rank interval at the protocol's level (reporting the achieved level);
- the yes and no regions from the claim's words, as the version that judged the sweep
  (claims.csv `protocol`) draws them, and that version being the one in force (sweep.json);
- each comparison's result (yes; no only through Holm's step-down over the claim's
  comparisons with a ratio, at 1 - 2 alpha / k; else unclear), and the claim rule;
- at the paper's scale (sweeps `paper-<piece>-<UTC>`): each deciding comparison over its
  piece's sweeps (protocol 3: t interval on S - 1 df; protocol 4: the sd pooled over the
  benchmark), Holm's step-down over the claim's union of pieces, and the claim rule.
Taken as given: which comparisons decide (the rows of claims_evidence.csv with their configurations, '-' for
shown ones), the results of comparisons without a ratio (C3, IM4, IM5's count), 'not testable' and 'error'
verdicts, and the interval of a row whose per-round derivation cannot be identified (source 'given': no
runs.csv, a quantity that is no product of per-run ratios (IM2), rows the table does not tell apart)."""

from __future__ import annotations

import json
import re
from functools import cache

import numpy as np
import pandas as pd
from scipy import stats

from serverbench import paths
from serverbench.rawdata.columns import Col

TESTABLE = ("supported", "contradicted", "inconclusive")
PIECE = re.compile(r"^paper-(.+)-\d{8}T\d{6}Z$")
LANG = dict(Go="go", Erlang="erlang", Akka="scala_akka", **{"Scala/Akka": "scala_akka", "Scala actors": "scala_actors"})
_L = "Scala actors|Scala/Akka|Erlang|Akka|Go"
FLOOD = "echo_flood"  # the benchmark whose load-generator rule bounds a time (validity.echo_flood_load_generator)
TOL = 1e-5  # relative tolerance against a committed number, written at 6 significant digits (csvout)
_finite = lambda v: isinstance(v, (int, float)) and bool(np.isfinite(v))


@cache
def spec(version: int | None = None) -> dict:
    """spec/protocol.json (the newest version) or the archived spec/protocol-<version>.json."""
    current = json.loads((paths.spec_dir() / "protocol.json").read_text(encoding="utf-8"))
    if version in (None, current[Col.protocol]):
        return current
    return json.loads((paths.spec_dir() / f"protocol-{version}.json").read_text(encoding="utf-8"))


def regions(claim: str, comparison: str, version: int) -> tuple[float, float, float, float] | None:
    """(yes_lo, yes_hi, no_below, no_above) from the claim's words; None for a rule claim.
    A bound [x, k] is x m^k; its no region starts one factor beyond, except, from protocol 2
    (decision.ordinal_no_region), at an order word's bound [1, 0], where it starts at 1."""
    s = spec(version)
    c = next(c for c in s["claims"] if c[Col.id] == claim)
    akka = "Akka" in comparison  # C4b: Erlang/Go similar; C5: Akka's s higher; IM5: the count
    key = {"C4b": "yes" if akka else "yes_similar", "C5": "yes_jump" if akka else "yes"}.get(claim, "yes")
    key = "yes_lost" if "lost" in comparison else key
    words, m, order = c[key], s["margin"][Col.factor], s["decision"].get("ordinal_no_region", False)
    if "rule" in words:
        return None
    lo, hi = words.get("lo"), words.get("hi")
    yes_lo, yes_hi = lo[0] * m ** lo[1] if lo else 0.0, hi[0] * m ** hi[1] if hi else np.inf
    no_below = (yes_lo if order and lo == [1, 0] else lo[0] * m ** (lo[1] - 1)) if lo else 0.0
    no_above = (yes_hi if order and hi == [1, 0] else hi[0] * m ** (hi[1] + 1)) if hi else np.inf
    return yes_lo, yes_hi, no_below, no_above


def decide(lo: float, hi: float, reg) -> str:
    """'yes' / 'no' when the interval lies inside that region, else 'unclear'."""
    if lo >= reg[0] and hi <= reg[1]:
        return "yes"
    return "no" if hi <= reg[2] or lo >= reg[3] else "unclear"


@cache
def _null_cdf(n: int) -> np.ndarray:
    """P(T+ <= t) under the null: subsets of the ranks 1..n by their sum."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1
    for i in range(1, n + 1):
        counts = counts + np.concatenate([np.zeros(i), counts[:-i]])
    return np.cumsum(counts) / 2.0**n


def signed_rank(x, level: float) -> tuple[float, float, float, float]:
    """Hodges-Lehmann estimate and the exact signed-rank interval of x whose achieved level is
    at least `level`: (estimate, lo, hi, achieved); (.., -inf, inf, nan) when none reaches it."""
    x = np.asarray(x, float)
    i, j = np.triu_indices(len(x))
    walsh = np.sort((x[i] + x[j]) / 2)
    cover = 1 - 2 * _null_cdf(len(x))[: len(walsh) // 2]  # cover[d - 1]: [W_(d), W_(M + 1 - d)]
    d = np.flatnonzero(cover >= level - 1e-12)
    if not len(d):
        return float(np.median(walsh)), -np.inf, np.inf, np.nan
    return float(np.median(walsh)), walsh[d[-1]], walsh[len(walsh) - 1 - d[-1]], cover[d[-1]]


# an interval as a function of its level: fixed (a given row), a ratio's signed-rank interval
# (open on a side whose time is only an upper bound), exp(mean +- t(df) se)
_open = lambda e, below, above: (0.0 if below else np.exp(e[1]), np.inf if above else np.exp(e[2]))
_at = lambda lo, hi: lambda level: (lo, hi)
_sr_at = lambda x, below, above: lambda level: _open(signed_rank(x, level), below, above)
_t_at = lambda m, se, df: lambda level: tuple(np.exp(m + np.array([-1, 1]) * stats.t.ppf((1 + level) / 2, df) * se))
_n = lambda s: float(s.replace(",", ""))
_two = lambda f, key, a, b, metric: [(1, f | {key: a}, metric), (-1, f | {key: b}, metric)]


def _terms(row) -> tuple[list, float] | None:
    """The per-round log quantity as signed terms [(sign, {column: value}, metric)] and a
    constant, as the claim's quantity defines it; None where no derivation is identified."""
    comp, cfg = row[Col.comparison], str(row[Col.config])
    kv = {k: _n(v) for k, v in re.findall(r"(\w+)=([\d,]+)", cfg)}
    tp = spec(3)["throughput_metric"][Col.metric]
    if m := re.match(rf"({_L})/({_L}) time$", comp):  # PingPing time
        c = re.match(r"([\d,]+) kB x ([\d,]+)(?:, (\d+) core)?", cfg)
        f = {"benchmark": "pingping", "message_bytes": _n(c[1]) * 1000, "repetitions": _n(c[2])}
        return _two(f | ({"cores": float(c[3])} if c[3] else {}), "language", LANG[m[1]], LANG[m[2]], "elapsed_s"), 0
    if (m := re.match(rf"({_L})/({_L}) (\w+)$", comp)) and Col.processes in kv:  # spawn time
        f = {"benchmark": "spawn", "table": "spawn", "processes": kv[Col.processes]}
        return _two(f, "language", LANG[m[1]], LANG[m[2]], m[3]), 0
    if m := re.match(rf"({_L})/({_L}) (\w+)$", comp):  # IM: latency at a rate, or a login storm
        f = {"benchmark": "im", "table": "im", "clients": kv["N"], "server.record.params.chaos_interval_ms": 0.0}
        f |= {"mode": "latency", "rate_per_s": kv["rate"]} if "rate" in kv else {"mode": "login"}
        return _two(f, "server_language", LANG[m[1]], LANG[m[2]], m[3]), 0
    if m := re.match(rf"({_L}) super-linearity( \(heap growing)?", comp):  # s = t(b) / t(a) / (b / a)
        a, b = (_n(v) for v in re.findall(r"[\d,]+", cfg))
        f = {"benchmark": "spawn", "table": "spawn", "language": LANG[m[1]] + ("[heap=grow]" if m[2] else "")}
        return _two(f, "processes", b, a, "all_ready_s"), -np.log(b / a)
    if m := re.match(rf"({_L})/({_L})$", comp):  # throughput, two languages
        f = {"benchmark": "throughput", "cores": kv[Col.cores], "pairs": kv[Col.pairs]}
        return _two(f, "language", LANG[m[1]], LANG[m[2]], tp), 0
    if c := re.match(r"cores=(\d+), (\d+) vs (\d+) pairs$", cfg):  # one language, two pair counts
        f = {"benchmark": "throughput", "cores": float(c[1]), "language": LANG[re.match(_L, comp)[0]]}
        return _two(f, "pairs", float(c[2]), float(c[3]), tp), 0
    if m := re.match(rf"({_L}) T\(C\)/T\((\d+) cores\)$", comp):  # one language, two core counts
        f = {"benchmark": "throughput", "pairs": kv[Col.pairs], "language": LANG[m[1]]}
        return _two(f, "cores", kv[Col.cores], float(m[2]), tp), 0
    f = {"benchmark": FLOOD, "mode": "flood"}
    f |= {"bytes_per_connection": float(re.search(r"D=(\d+) KiB", cfg)[1]) * 1024} if "KiB" in cfg else {}
    if m := re.match(r"(\w+) / (\w+)$", comp):  # flood time, two servers
        return _two(f | {"connections": kv["N"]}, "server_language", m[1], m[2], "elapsed_s"), 0
    if m := re.match(r"(\w+) / (\w+), growth t\(([\d,]+)\) / t\(([\d,]+)\)$", comp):  # E1: growth / C's
        own, c_ = (
            _two(f | {"server_language": v}, "connections", _n(m[3]), _n(m[4]), "elapsed_s") for v in m.group(1, 2)
        )
        return own + [(-sign, f_, metric) for sign, f_, metric in c_], 0
    f = {"benchmark": "tcp_pingpong", "placement": cfg.split("=")[-1]}
    side = lambda client, server, k: f | {"language": client, "server_language": server, "read_buffer_bytes": float(k)}
    if m := re.match(r"(\w+)/(\w+) \(K=(\d+)[^)]*\) / (\w+)/(\w+) \(K=(\d+)", comp):  # T1, T1b, T2
        sides = (side(*m.group(1, 2, 3)), side(*m.group(4, 5, 6)))
        return [(1, sides[0], "reported_us_per_round_trip"), (-1, sides[1], "reported_us_per_round_trip")], 0
    if m := re.match(r"bytes the (\w+) server read / 4 x C x R \(K=(\d+)\)$", comp):  # T3: one sample
        share = lambda d: d["server.record.metrics.bytes_read"] / (4 * d[Col.connections] * d[Col.round_trips])
        return [(1, side(m[1], m[1], m[2]), share)], 0
    if m := re.match(rf"({_L}) (\w+) with chaos / without$", comp):  # IM5 (a), at the chaos part's rate
        f = {"benchmark": "im", "table": "im", "mode": "latency", "server_language": LANG[m[1]]}
        f[Col.rate_per_s] = _n(str(row.get(Col.rate_per_s)).split("/")[0])
        every = float(next(c for c in spec(3)["claims"] if c[Col.id] == "IM5")[Col.chaos_interval_ms])
        return _two(f, "server.record.params.chaos_interval_ms", every, 0.0, m[2]), 0
    return None


def ok_runs(folder) -> dict[str, np.ndarray]:
    """The ok runs (the later ok attempt of a run that was re-run), as column -> array."""
    runs = pd.read_csv(folder / "runs.csv", low_memory=False)
    runs = runs[runs[Col.status] == "ok"].sort_values("attempt").drop_duplicates(["config_id", "trial"], keep="last")
    return {c: runs[c].to_numpy() for c in runs.columns}


def per_round(runs: dict, row):
    """(per-round values, each term's highest load-generator CPU share) | 'pair' (a side has
    a round twice) | None (no derivation identified)."""
    if (t := _terms(row)) is None:
        return None
    parts, shares = [], []
    for sign, f, metric in t[0]:
        mask = np.ones(len(runs[Col.trial]), bool)
        for k, v in f.items():
            mask &= (runs[k] == v) if k in runs else False
        val = metric(runs) if callable(metric) else runs.get(metric, np.full(len(mask), np.nan))
        if len(set(trials := runs[Col.trial][mask])) < len(trials):
            return "pair"
        parts.append(dict(zip(trials, sign * np.log(val[mask].astype(float)))))
        share = runs.get(Col.client_cpu_share, np.full(len(mask), -1.0))[mask].astype(float)
        shares.append(np.nanmax(share, initial=-1.0))  # the load generator's highest CPU share
    common = sorted(set.intersection(*(set(p) for p in parts)))
    return np.array([sum(p[r] for p in parts) + t[1] for r in common]), shares


def holm(members: dict, alpha: float, rejected=()) -> tuple[set, dict]:
    """Holm's step-down: members maps a key to (interval at a level, regions). With k members
    not yet rejected, one is 'no' when its interval at 1 - 2 alpha / k lies in the no region;
    repeat with k reduced until none is added. -> (rejected keys, the last level asked of each)."""
    rejected, asked = set(rejected), {}
    while len(members) > len(rejected):
        level, new = 1 - 2 * alpha / (len(members) - len(rejected)), set()
        for key, (interval, reg) in members.items():
            if key not in rejected:
                asked[key] = level
                lo, hi = interval(level)
                new |= {key} if decide(lo, hi, reg) == "no" else set()
        if not new:
            break
        rejected |= new
    return rejected, asked


def _read(path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.EmptyDataError):
        return pd.DataFrame()


def sweep_comparisons(folder) -> pd.DataFrame:
    """Every row of claims_evidence.csv judged again: source 'recomputed' (from runs.csv),
    'given' (the committed interval) or 'rule' (no ratio: the committed result)."""
    ev, claims = _read(folder / "claims_evidence.csv"), _read(folder / "claims.csv")
    version = int(claims[Col.protocol].iloc[0])
    s = spec(version)
    alpha, level, limit = s["alpha"], s["interval"][Col.level], s["validity"]["load_generator_cpu_limit"]
    runs = ok_runs(folder) if (folder / "runs.csv").is_file() else None
    twice = ev.duplicated(["claim", "comparison", "config"], keep=False)  # rows the table does not tell apart
    out, members = [], {}
    for i, row in enumerate(ev.to_dict("records")):
        reg, shown = regions(row[Col.claim], row[Col.comparison], version), row[Col.result] == "-"
        # a row without a ratio (protocol 5's IM5: kept and loss counts, no interval; empty ratio
        # cells where IM1 shares the table): its committed result stands, as a rule's does
        ratio, *rest = (row.get(k, np.nan) for k in ("ratio", "kept", "messages_lost"))
        reg = None if Col.ratio not in row or (pd.isna(ratio) and any(pd.notna(v) for v in rest)) else reg
        rec = {k: row[k] for k in ("claim", "comparison", "config", "result")}
        rec |= dict(ratio=np.nan, lo=np.nan, hi=np.nan, level=np.nan, rounds=np.nan, regions=reg, holm=np.nan)
        x = None if reg is None or runs is None or twice.iloc[i] else per_round(runs, row)
        rec[Col.source], bound = "rule" if reg is None else "given" if x is None else "recomputed", False
        if rec[Col.source] == "given":
            given_lo, given_hi, given_level = row[Col.ci_lo], row[Col.ci_hi], row[Col.ci_level]
            rec |= dict(ratio=row[Col.ratio], lo=given_lo, hi=given_hi, level=given_level)
            rec[Col.rounds], point = row[Col.rounds], given_lo == given_hi and given_level == 1  # source's points
            known = point or decide(given_lo, given_hi, reg) != "no"  # a wider interval is no 'no' either
            # else the Holm interval is unknown: the committed result stands ('holm_given')
            interval = _at(given_lo, given_hi) if known or row[Col.result] == "no" else _at(-np.inf, np.inf)
            rec["holm_given"] = not known
        elif rec[Col.source] == "recomputed":  # unclear without a round on both sides, or with a round twice
            rec[Col.result] = "-" if shown else "unclear"
        if rec[Col.source] == "recomputed" and not isinstance(x, str) and len(x[0]):
            (x, shares), terms = x, _terms(row)[0]
            est, lo, hi, got = signed_rank(x, level)
            rec.update(ratio=np.exp(est), lo=np.exp(lo), hi=np.exp(hi), level=got, rounds=len(x))
            # a flood time measured with the load generator at its limit is only an upper bound
            # (validity.echo_flood_load_generator: echo flood's rule; IM's generator has its own)
            flood = [t[0] if ("benchmark", FLOOD) in t[1].items() else 0 for t in terms]
            down = any(g > 0 and h >= limit for g, h in zip(flood, shares))
            up = any(g < 0 and h >= limit for g, h in zip(flood, shares))
            interval = _sr_at(x, down, up)
            lo, hi = interval(level)
            bound = decide(rec["lo"], rec["hi"], reg) != decide(lo, hi, reg)  # the decision hangs on it
        if _finite(rec[Col.ratio]) and not shown and not bound:
            members.setdefault(row[Col.claim], {})[i] = (interval, reg)
            lo, hi = interval(level)
            rec["yes"] = decide(lo, hi, reg) == "yes"
        out.append(rec)
    for fam in members.values():
        rejected, asked = holm(fam, alpha)
        for i in fam:
            result = "no" if i in rejected else "yes" if out[i]["yes"] else "unclear"
            out[i].update(holm=asked.get(i, np.nan), result=result)
    return pd.DataFrame(out, index=ev.index)


def claim_rule(results) -> str:
    results = [r for r in results if r != "-"]
    if "no" in results:
        return "contradicted"
    return "supported" if results and all(r == "yes" for r in results) else "inconclusive"


def sweep_verdicts(folder, comps: pd.DataFrame | None = None) -> pd.DataFrame:
    """claim, committed verdict, recomputed verdict ('not testable' and 'error' taken as given), protocol."""
    comps = sweep_comparisons(folder) if comps is None else comps
    claims, rec = _read(folder / "claims.csv"), {c: claim_rule(g[Col.result]) for c, g in comps.groupby("claim")}
    out = claims[["id", "verdict", "protocol"]].rename(columns={"id": "claim", "verdict": "committed"})
    return out.assign(recomputed=[rec.get(c, "inconclusive") if v in TESTABLE else v for c, v in out.values[:, :2]])


def version_in_force(folder) -> int | None:
    """The newest version frozen before the sweep's first run (protocol section 9)."""
    try:
        started = json.loads((folder / "sweep.json").read_text())[Col.first_started_utc]
    except (OSError, KeyError):
        return None
    return max([v for v in range(1, spec()[Col.protocol] + 1) if spec(v)["frozen_utc"] < started] or [1])


def _close(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if not (_finite(a) and _finite(b)):
        return (pd.isna(a) and pd.isna(b)) or a == b
    return abs(a - b) <= TOL * max(abs(a), abs(b))


def mismatches(folder) -> tuple[list[str], pd.DataFrame]:
    """Every disagreement between the committed tables and the recomputation, and the rows."""
    comps, ev, bad = sweep_comparisons(folder), _read(folder / "claims_evidence.csv"), []
    for r, e in zip(comps.to_dict("records"), ev.to_dict("records")):
        where = f"{folder.name} {r[Col.claim]} {r[Col.comparison]} [{r[Col.config]}]"
        checks = [("result", e[Col.result], r[Col.result])]
        if r[Col.source] == "recomputed":
            checks += [(k, e[c], r[k]) for k, c in (("ratio", "ratio"), ("lo", "ci_lo"), ("hi", "ci_hi"))]
            checks += [("rounds", e[Col.rounds], r[Col.rounds])]
            checks += [("ci_level", round(e[Col.ci_level], 4), round(r[Col.level], 4))]
        if isinstance(r["regions"], tuple):
            checks += [(k, e[k], v) for k, v in zip(("yes_lo", "yes_hi", "no_below", "no_above"), r["regions"])]
        if _finite(r["holm"]) and _finite(e[Col.holm_level]):
            checks += [("holm_level", round(e[Col.holm_level], 4), round(r["holm"], 4))]
        bad += [f"{where}: {k} committed {a} vs recomputed {b}" for k, a, b in checks if not _close(a, b)]
    verdicts = sweep_verdicts(folder, comps)
    for _, v in verdicts[verdicts["committed"] != verdicts["recomputed"]].iterrows():
        bad.append(f"{folder.name} {v[Col.claim]}: verdict committed {v['committed']} vs recomputed {v['recomputed']}")
    if (want := version_in_force(folder)) is not None and set(verdicts[Col.protocol]) != {want}:
        bad.append(f"{folder.name}: judged by protocol {set(verdicts[Col.protocol])}, in force {want}")
    return bad, comps


def scale_verdicts(processed_dir=None, version: int = 3) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's scale (section 5 of `version`) over every sweep `paper-<piece>-<UTC>`.
    -> (comparisons: claim, piece, comparison, config, n_sweeps, ratio, lo, hi, result, holm;
        claims: claim, verdict, n_sweeps, own: the sweeps' own verdicts)."""
    root, s = paths.processed_dir() if processed_dir is None else processed_dir, spec(version)
    alpha, level = s["alpha"], s["interval"][Col.level]
    frames, own = [], {}
    for folder in sorted(p for p in root.iterdir() if PIECE.match(p.name)):
        for cid, verdict in _read(folder / "claims.csv")[["id", "verdict"]].itertuples(index=False):
            own.setdefault(cid, []).append(verdict)
        if not (ev := _read(folder / "claims_evidence.csv")).empty:
            frames.append(ev[ev[Col.result] != "-"].assign(piece=PIECE.match(folder.name)[1]))
    out, keys = [], ["claim", "piece", "comparison", "config"]
    for (claim, piece, comp, cfg), g in pd.concat(frames).groupby(keys, sort=False):
        r = g[np.isfinite(g[Col.ratio].astype(float))]
        rec = dict(zip(keys, (claim, piece, comp, cfg)), n_sweeps=len(r) or len(g), ratio=np.nan, lo=np.nan)
        rec |= dict(hi=np.nan, holm=np.nan, results=set(g[Col.result]), regions=regions(claim, comp, version), own=r)
        out.append(rec | {"logs": np.log(r[Col.ratio].to_numpy(float))})
    pools = {}  # protocol 4: the between-sweep variance pooled over a benchmark's comparisons
    for c in (c for c in out if s["scale"].get("variance") == "pooled" and c["regions"] and len(c["logs"]) > 1):
        bench, logs = c["piece"].split("-")[0], c["logs"]
        ss, df = pools.get(bench, (0.0, 0))
        pools[bench] = ss + ((logs - logs.mean()) ** 2).sum(), df + len(logs) - 1
    fams, preset = {}, set()
    for i, c in enumerate(out):
        logs, pool = c["logs"], pools.get(c["piece"].split("-")[0])
        if c["regions"] is None or not len(logs):  # no ratio: yes or no when every sweep agrees
            c[Col.result] = min(c["results"]) if c["results"] in ({"yes"}, {"no"}) else "unclear"
            continue
        if pool is None and len(logs) == 1:  # one sweep, no pool: its own result and interval
            first = c["own"].iloc[0]
            c.update(ratio=np.exp(logs[0]), lo=first[Col.ci_lo], hi=first[Col.ci_hi], result=first[Col.result])
            interval = _at(-np.inf, np.inf)
            preset |= {i} if c[Col.result] == "no" else set()
        else:
            sd, df = (np.sqrt(pool[0] / pool[1]), pool[1]) if pool else (logs.std(ddof=1), len(logs) - 1)
            interval = _t_at(logs.mean(), sd / np.sqrt(len(logs)), df)
            lo, hi = interval(level)
            yes = decide(lo, hi, c["regions"]) == "yes"
            c.update(ratio=np.exp(logs.mean()), lo=lo, hi=hi, result="yes" if yes else "unclear")
        fams.setdefault(c[Col.claim], {})[i] = (interval, c["regions"])
    for fam in fams.values():
        rejected, asked = holm(fam, alpha, rejected=preset & set(fam))
        for i in set(fam) - preset:
            out[i].update(holm=asked.get(i, np.nan), result="no" if i in rejected else out[i][Col.result])
    comps = pd.DataFrame(out).drop(columns=["logs", "own", "regions", "results"])
    rule = {c: claim_rule(g[Col.result]) for c, g in comps.groupby("claim")}  # else: not testable in any sweep
    verdicts = [(c, rule.get(c, "not testable on this machine"), len(v), "; ".join(v)) for c, v in own.items()]
    return comps, pd.DataFrame(verdicts, columns=["claim", "verdict", "n_sweeps", "own"])


def main() -> int:
    folders = [p for p in sorted(paths.processed_dir().iterdir()) if not _read(p / "claims_evidence.csv").empty]
    found = [mismatches(folder) for folder in folders]
    bad, coverage = (
        [b for f, _ in found for b in f],
        pd.concat([c[Col.source] for _, c in found]).value_counts().to_dict(),
    )
    print(f"per sweep, rows by source: {coverage}; {len(bad)} disagreement(s) with the committed tables")
    print(*bad, sep="\n")
    pd.set_option("display.width", 200)
    for version in (3, 4):
        comps, claims = scale_verdicts(version=version)
        print(f"\nat the paper's scale, protocol {version}'s rule:")
        print(comps.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
        print(claims[["claim", "verdict", "n_sweeps"]].to_string(index=False))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
