"""The paper's conclusions as checks on processed data (docs/statistics.md, "Claims").

Each check returns a Verdict: supported / contradicted / inconclusive / not testable
here, the numbers behind it (an evidence table of ratios with bootstrap intervals) and
its scope (what this sweep could test). Comparisons are ratios of medians with a seeded
percentile-bootstrap 95% interval (stats.bootstrap_ratio); a comparison with fewer than
MIN_TRIALS ok trials on either side is never decisive.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from serverbench.analysis import stats
from serverbench.analysis.process import LANGUAGE_LABELS, Processed

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
INCONCLUSIVE = "inconclusive"
NOT_TESTABLE = "not testable here"
VERDICTS = (SUPPORTED, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE)

MIN_TRIALS = stats.MIN_TRIALS_FOR_COMPARISON
SIMILAR_FACTOR = 1.5          # "very similar": ratio within [1/1.5, 1.5]
GO_RANGE = (2.0, 5.0)         # "2-5x"
JUMP_FACTOR = 1.5             # a step whose time grows > 1.5x faster than N is a jump
PEAK_TOLERANCE = 1.05         # another pair count > 5% better contradicts "peak at pairs = cores"
SCALING_TOLERANCE = 1.10      # > 10% more throughput beyond 4 cores counts as scaling
SMALL_CORES, SMALL_PAIRS = 8, 20
PAPER_BUDGET_BYTES = 8 * 2**30

YES, NO, UNCLEAR = "yes", "no", "unclear"


@dataclass
class Verdict:
    id: str
    claim: str
    definition: str
    verdict: str
    summary: str
    scope: str = ""
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)

    def row(self) -> dict:
        return {"id": self.id, "claim": self.claim, "verdict": self.verdict, "numbers": self.summary,
                "scope": self.scope, "definition": self.definition}


def L(lang: str) -> str:
    return LANGUAGE_LABELS.get(lang, lang)


def combine(results: list[str]) -> str:
    """Per-comparison results -> verdict: any 'no' contradicts, all 'yes' supports."""
    if not results:
        return NOT_TESTABLE
    if NO in results:
        return CONTRADICTED
    if all(r == YES for r in results):
        return SUPPORTED
    return INCONCLUSIVE


def below(ci: stats.RatioCI, thr: float) -> str:
    """Is the ratio below thr? yes if the whole interval is, no if the whole interval is above."""
    if min(ci.n_num, ci.n_den) < MIN_TRIALS or not np.isfinite(ci.lo):
        return UNCLEAR
    if ci.hi < thr:
        return YES
    if ci.lo > thr:
        return NO
    return UNCLEAR


def above(ci: stats.RatioCI, thr: float) -> str:
    r = below(ci, thr)
    return {YES: NO, NO: YES}.get(r, UNCLEAR)


def within(ci: stats.RatioCI, a: float, b: float) -> str:
    if min(ci.n_num, ci.n_den) < MIN_TRIALS or not np.isfinite(ci.lo):
        return UNCLEAR
    if a <= ci.lo and ci.hi <= b:
        return YES
    if ci.hi < a or ci.lo > b:
        return NO
    return UNCLEAR


def _ev(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def _evrow(claim, comparison, config, ci: stats.RatioCI, result, expect):
    return {"claim": claim, "comparison": comparison, "config": config, "ratio": ci.ratio, "ci_lo": ci.lo,
            "ci_hi": ci.hi, "n_num": ci.n_num, "n_den": ci.n_den, "expected": expect, "result": result}


def _fmt(ci: stats.RatioCI) -> str:
    if not np.isfinite(ci.ratio):
        return "n/a"
    if not np.isfinite(ci.lo):
        return f"{ci.ratio:.2f} (n={min(ci.n_num, ci.n_den)}: no interval)"
    s = f"{ci.ratio:.2f} [{ci.lo:.2f}, {ci.hi:.2f}]"
    if min(ci.n_num, ci.n_den) < MIN_TRIALS:
        s += f" (n={min(ci.n_num, ci.n_den)} < {MIN_TRIALS})"
    return s


def _fmt_row(r: dict) -> str:
    return _fmt(stats.RatioCI(r["n_num"], r["n_den"], r["ratio"], r["ci_lo"], r["ci_hi"], 0.0))


def _count(results):
    return ", ".join(f"{sum(r == k for r in results)} {k}" for k in (YES, NO, UNCLEAR) if any(r == k for r in results))


def _values(P: Processed, table: str, metric: str) -> pd.DataFrame:
    return P.values(table, metric)


def _grp(d: pd.DataFrame, **eq) -> np.ndarray:
    m = np.ones(len(d), dtype=bool)
    for k, v in eq.items():
        m &= (d[k] == v).to_numpy()
    return d.loc[m, "value"].to_numpy(dtype=float)


def _machine_note(P: Processed) -> str:
    cpus = P.info.get("logical_cpus")
    measured = P.info.get("cores_measured") or []
    return f"this machine: {cpus} logical CPUs; cores measured: {', '.join(map(str, measured)) or 'none'}"


def _missing(langs_needed, d: pd.DataFrame, what: str) -> str | None:
    have = set(d["language"].unique()) if not d.empty else set()
    miss = [lang for lang in langs_needed if lang not in have]
    if miss:
        return f"no ok {what} runs for {', '.join(L(m) for m in miss)} in this sweep"
    return None


# ---------------------------------------------------------------- PingPing

def _pingping_points(d: pd.DataFrame) -> list[dict]:
    """Per (variant, payload, cores, message size): the largest repetitions measured."""
    pts = []
    keys = [k for k in ("variant", "payload", "cores", "message_bytes") if k in d]
    for kv, g in d.groupby(keys):
        kv = kv if isinstance(kv, tuple) else (kv,)
        reps = g["repetitions"].max()
        pts.append({**dict(zip(keys, kv)), "repetitions": reps})
    return pts


def _short(p: dict) -> str:
    return f"{int(p['message_bytes']) / 1000:g} kB x {int(p['repetitions']):,}"


def _cfg(p: dict) -> str:
    return ", ".join(f"{k}={int(v) if isinstance(v, float) and float(v).is_integer() else v}" for k, v in p.items())


def claim_pingping_faster(P: Processed) -> Verdict:
    cid = "C1"
    claim = "Go and Erlang have lower PingPing latency than Scala/Akka at every message size"
    definition = ("For each message size, at the largest repetition count measured: the ratio of median times "
                  "Go/Akka and Erlang/Akka with a 95% bootstrap interval. 'yes' if the interval lies below 1, "
                  "'no' if above 1. Supported if every comparison is yes; contradicted if any is no; otherwise "
                  "inconclusive.")
    d = _values(P, "pingping", "elapsed_s")
    miss = _missing(["scala_akka"], d, "PingPing") or (
        _missing(["go", "erlang"], d, "PingPing") if not {"go", "erlang"} & set(d["language"]) else None)
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    rows, res = [], []
    for p in _pingping_points(d):
        den = _grp(d, language="scala_akka", **p)
        for lang in ("go", "erlang"):
            num = _grp(d, language=lang, **p)
            if len(num) == 0 or len(den) == 0:
                continue
            ci = stats.bootstrap_ratio(num, den)
            r = below(ci, 1.0)
            res.append(r)
            rows.append(_evrow(cid, f"{L(lang)}/Akka time", _cfg(p), ci, r, "< 1") | {"short": _short(p)})
    ev = _ev(rows)
    summ = "; ".join(f"{r['comparison']} at {r['short']}: {_fmt_row(r)}" for r in rows[:6]) + \
        (f" ... ({len(rows)} comparisons: {_count(res)})" if len(rows) > 6 else f" ({_count(res)})")
    sizes = sorted({int(p["message_bytes"]) for p in _pingping_points(d)})
    return Verdict(cid, claim, definition, combine(res), summ,
                   f"message sizes measured: {', '.join(map(str, sizes))} bytes", ev)


def claim_go_erlang_similar(P: Processed) -> Verdict:
    cid = "C2"
    claim = "Go and Erlang PingPing latencies are very similar"
    definition = (f"For each message size, at the largest repetition count measured: the ratio of median times "
                  f"Go/Erlang with a 95% bootstrap interval. 'yes' if the interval lies inside "
                  f"[1/{SIMILAR_FACTOR}, {SIMILAR_FACTOR}], 'no' if it lies entirely outside. Supported if all yes; "
                  f"contradicted if any no; otherwise inconclusive.")
    d = _values(P, "pingping", "elapsed_s")
    miss = _missing(["go", "erlang"], d, "PingPing")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    rows, res = [], []
    for p in _pingping_points(d):
        num, den = _grp(d, language="go", **p), _grp(d, language="erlang", **p)
        if len(num) == 0 or len(den) == 0:
            continue
        ci = stats.bootstrap_ratio(num, den)
        r = within(ci, 1 / SIMILAR_FACTOR, SIMILAR_FACTOR)
        res.append(r)
        rows.append(_evrow(cid, "Go/Erlang time", _cfg(p), ci, r, f"in [{1/SIMILAR_FACTOR:.2f}, {SIMILAR_FACTOR}]")
                    | {"short": _short(p)})
    summ = "Go/Erlang: " + "; ".join(f"{r['short']}: {_fmt_row(r)}" for r in rows) + f" ({_count(res)})"
    return Verdict(cid, claim, definition, combine(res), summ, "", _ev(rows))


# ---------------------------------------------------------------- Spawn

def claim_akka_most_processes(P: Processed) -> Verdict:
    cid = "C3"
    claim = "Scala/Akka supports the most dormant processes"
    definition = ("From the max-processes search (Fig. 4a): per language the largest N that ran ok below the first "
                  "failing N. Against each other language: 'yes' if Akka's largest ok N is larger and the other's "
                  "limit was found (a run failed); 'no' if the other's is larger and Akka's limit was found; "
                  "otherwise (equal, or a limit not reached) unclear. Tested at the sweep's memory budget.")
    lim = P.spawn_max_limits
    if lim is None or lim.empty or not {"scala_akka"} <= set(lim["language"]) or len(set(lim["language"])) < 2:
        return Verdict(cid, claim, definition, NOT_TESTABLE,
                       "the sweep has no max-processes search for Scala/Akka and at least one other language")
    lim = lim.set_index("language")
    a = lim.loc["scala_akka"]
    rows, res = [], []
    for lang in lim.index:
        if lang == "scala_akka":
            continue
        o = lim.loc[lang]
        an, on = a["max_ok_processes"], o["max_ok_processes"]
        an = 0 if pd.isna(an) else an
        on = 0 if pd.isna(on) else on
        if an > on:
            r = YES if bool(o["limit_found"]) else UNCLEAR
        elif an < on:
            r = NO if bool(a["limit_found"]) else UNCLEAR
        else:
            r = UNCLEAR
        res.append(r)
        rows.append({"claim": cid, "comparison": f"Akka vs {L(lang)} max processes",
                     "config": f"budget={_gib(a['budget_bytes'])}", "akka_max_ok": an, "other_max_ok": on,
                     "akka_limit_found": bool(a["limit_found"]), "other_limit_found": bool(o["limit_found"]),
                     "expected": "Akka larger", "result": r})
    summ = "; ".join(f"{L(lang)}: {_n(lim.loc[lang, 'max_ok_processes'])} ok"
                     + (f", fails at {_n(lim.loc[lang, 'first_failed_processes'])} ({_why(lim.loc[lang, 'failure'])})"
                        if bool(lim.loc[lang, "limit_found"]) else
                        f", stopped at {_n(lim.loc[lang, 'first_failed_processes'])} ({_why(lim.loc[lang, 'failure'])}; "
                        f"limit not established)" if pd.notna(lim.loc[lang, "first_failed_processes"])
                        else ", no failure reached")
                     for lang in lim.index)
    budget = a["budget_bytes"]
    scope = f"memory budget {_gib(budget)}"
    if pd.notna(budget) and budget < PAPER_BUDGET_BYTES:
        scope += " (reduced from the paper's 8 GiB machine: limits are smaller than the paper's)"
    return Verdict(cid, claim, definition, combine(res), summ, scope, _ev(rows))


def _why(failure, width: int = 70) -> str:
    f = str(failure) if isinstance(failure, str) else ""
    return f if len(f) <= width else f[: width - 3] + "..."


def _gib(b) -> str:
    return "unknown" if b is None or pd.isna(b) else f"{float(b) / 2**30:.3g} GiB"


def _n(x) -> str:
    return "none" if x is None or pd.isna(x) else f"{int(x):,}"


def _spawn_values(P: Processed, metric: str) -> pd.DataFrame:
    a = _values(P, "spawn", metric)
    b = _values(P, "spawn_max", metric)
    cols = ["language", "processes", "value"]
    return pd.concat([x[cols] for x in (a, b) if not x.empty], ignore_index=True) if not (a.empty and b.empty) \
        else pd.DataFrame(columns=cols)


def claim_erlang_spawns_fastest(P: Processed, metric: str = "all_ready_s") -> Verdict:
    cid = "C4"
    claim = "Erlang spawns processes fastest (e.g. 3 M processes in 12 s)"
    definition = (f"Spawn time ({metric}) pooled over the fixed-N and max-processes runs. At the largest N measured "
                  f"with at least {MIN_TRIALS} ok trials in all three languages (else the largest N all three ran): "
                  f"ratios Erlang/Go and Erlang/Akka of median times. 'yes' if the interval lies below 1, 'no' if "
                  f"above. Supported if both yes; contradicted if either no.")
    d = _spawn_values(P, metric)
    miss = _missing(["erlang", "go", "scala_akka"], d, "spawn")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    cnt = d.groupby(["processes", "language"]).size().unstack()
    full = cnt.dropna()
    enough = full[(full >= MIN_TRIALS).all(axis=1)]
    if full.empty:
        return Verdict(cid, claim, definition, NOT_TESTABLE, "no N was measured in all three languages")
    n = (enough.index.max() if not enough.empty else full.index.max())
    rows, res = [], []
    for lang in ("go", "scala_akka"):
        ci = stats.bootstrap_ratio(_grp(d, language="erlang", processes=n), _grp(d, language=lang, processes=n))
        r = below(ci, 1.0)
        res.append(r)
        rows.append(_evrow(cid, f"Erlang/{L(lang)} {metric}", f"N={int(n):,}", ci, r, "< 1"))
    med = d[d["processes"] == n].groupby("language")["value"].median()
    summ = f"N = {int(n):,}: medians " + ", ".join(f"{L(k)} {v:.3g} s" for k, v in med.items()) + "; " + \
        "; ".join(f"{r['comparison']}: {_fmt_row(r)}" for r in rows)
    scope = f"largest common N {int(n):,}" + ("" if n >= 3_000_000 else " (the paper's example is 3,000,000)")
    return Verdict(cid, claim, definition, combine(res), summ, scope, _ev(rows))


def claim_spawn_growth(P: Processed, metric: str = "all_ready_s") -> Verdict:
    cid = "C5"
    claim = "Erlang and Go spawn time grows smoothly up to 100,000 processes; Akka's jumps between 10,000 and 20,000"
    definition = (f"Fixed-N spawn runs ({metric}), N from 10,000 to 100,000. For consecutive measured N1 < N2 the "
                  f"super-linearity s = (t(N2)/t(N1)) / (N2/N1) with a bootstrap interval on the ratio of medians. "
                  f"A step is smooth if s's interval lies below {JUMP_FACTOR} and a jump if it lies above. "
                  f"Erlang and Go: 'yes' for each smooth step, 'no' for a jump. Akka: the step from 10,000 to the next "
                  f"N up to 25,000 must be a jump. Supported if all yes; contradicted if any no.")
    d = _values(P, "spawn", metric)
    need = _missing(["erlang", "go", "scala_akka"], d, "fixed-N spawn")
    if need:
        return Verdict(cid, claim, definition, NOT_TESTABLE, need)
    all_n = sorted(d["processes"].unique())
    d = d[(d["processes"] >= 10_000) & (d["processes"] <= 100_000)]
    rows, res = [], []

    def step(lang, n1, n2):
        ci = stats.bootstrap_ratio(_grp(d, language=lang, processes=n2), _grp(d, language=lang, processes=n1))
        f = n2 / n1
        return stats.RatioCI(ci.n_num, ci.n_den, ci.ratio / f, ci.lo / f, ci.hi / f, ci.level, "super-linearity")

    for lang in ("erlang", "go"):
        ns = sorted(d[d["language"] == lang]["processes"].unique())
        for n1, n2 in zip(ns, ns[1:]):
            ci = step(lang, n1, n2)
            r = below(ci, JUMP_FACTOR)
            res.append(r)
            rows.append(_evrow(cid, f"{L(lang)} step s", f"{int(n1):,} -> {int(n2):,}", ci, r, f"< {JUMP_FACTOR}"))
    ns = sorted(d[d["language"] == "scala_akka"]["processes"].unique())
    nxt = [n for n in ns if 10_000 < n <= 25_000]
    if 10_000 not in ns or not nxt or not rows:
        return Verdict(cid, claim, definition, NOT_TESTABLE,
                       "needs fixed-N spawn runs at 10,000 and 20,000 (or up to 25,000) for Akka and two N >= 10,000 "
                       f"for Erlang and Go; fixed N measured: {', '.join(f'{int(n):,}' for n in all_n) or 'none'}",
                       "", _ev(rows))
    ci = step("scala_akka", 10_000, nxt[0])
    r = above(ci, JUMP_FACTOR)
    res.append(r)
    rows.append(_evrow(cid, "Akka step s", f"10,000 -> {int(nxt[0]):,}", ci, r, f"> {JUMP_FACTOR}"))
    worst = {lang: max((x for x in rows if x["comparison"].startswith(L(lang))), key=lambda x: x["ratio"], default=None)
             for lang in ("erlang", "go")}
    summ = "; ".join(f"{L(k)} largest step s {_fmt_row(v)} at {v['config']}"
                     for k, v in worst.items() if v) + f"; Akka s {_fmt(ci)} at 10,000 -> {int(nxt[0]):,}"
    return Verdict(cid, claim, definition, combine(res), summ, "", _ev(rows))


# ---------------------------------------------------------------- Throughput

def _tp(P: Processed) -> pd.DataFrame:
    return _values(P, "throughput", "paper_msgs_per_min")


def _tp_keys(d):
    return [k for k in ("variant", "payload", "message_bytes", "duration_s", "cores", "pairs") if k in d]


def _tp_groups(d, num_lang, den_lang, mask=None):
    keys = _tp_keys(d)
    groups, cfgs = [], []
    dd = d if mask is None else d[mask]
    for kv, g in dd.groupby(keys):
        a = g[g["language"] == num_lang]["value"].to_numpy(float)
        b = g[g["language"] == den_lang]["value"].to_numpy(float)
        if len(a) and len(b):
            groups.append((a, b))
            cfgs.append(dict(zip(keys, kv)))
    return groups, cfgs


def _enough(groups, cfgs):
    """Configurations with at least MIN_TRIALS ok trials on both sides (all of them if none
    has: the geometric mean is then reported but never decisive) and how many were left out."""
    keep = [i for i, (a, b) in enumerate(groups) if min(len(a), len(b)) >= MIN_TRIALS]
    if not keep:
        return groups, cfgs, 0
    return [groups[i] for i in keep], [cfgs[i] for i in keep], len(groups) - len(keep)


def _left_out(n: int) -> str:
    return f" ({n} with fewer than {MIN_TRIALS} trials left out)" if n else ""


def _cores_scope(d) -> str:
    cs = sorted(int(c) for c in d["cores"].unique()) if not d.empty else []
    return f"cores measured: {', '.join(map(str, cs)) or 'none'} (paper: 1-32)"


def claim_go_throughput_2_5x(P: Processed) -> Verdict:
    cid = "C6"
    claim = "Go's throughput is 2-5x that of Erlang and Scala/Akka"
    definition = (f"Over every (cores, pairs) configuration measured in both languages: the geometric mean of the "
                  f"ratios of median exchanges per minute Go/Erlang and Go/Akka, with a bootstrap interval (each "
                  f"configuration's trials resampled). 'yes' if the interval lies inside [{GO_RANGE[0]:g}, "
                  f"{GO_RANGE[1]:g}], 'no' if entirely outside. Supported if both yes; contradicted if either no. "
                  f"Per-configuration ratios are in the evidence table.")
    d = _tp(P)
    miss = _missing(["go"], d, "throughput") or (
        None if {"erlang", "scala_akka"} & set(d["language"]) else "no ok throughput runs for Erlang or Akka")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    rows, res, parts = [], [], []
    for other in ("erlang", "scala_akka"):
        groups, cfgs = _tp_groups(d, "go", other)
        if not groups:
            continue
        for (a, b), c in zip(groups, cfgs):
            ci = stats.bootstrap_ratio(a, b)
            rows.append(_evrow(cid, f"Go/{L(other)} msgs/min", _cfg(c), ci,
                               within(ci, *GO_RANGE), f"in [{GO_RANGE[0]:g}, {GO_RANGE[1]:g}]"))
        rs = [x["ratio"] for x in rows if x["comparison"].startswith(f"Go/{L(other)}")]
        groups, _, dropped = _enough(groups, cfgs)
        g = stats.bootstrap_geomean_ratio(groups)
        g = stats.RatioCI(min(len(a) for a, _ in groups), min(len(b) for _, b in groups), g.ratio, g.lo, g.hi, g.level, g.method)
        r = within(g, *GO_RANGE)
        res.append(r)
        parts.append(f"Go/{L(other)} geometric mean {_fmt(g)} over {len(groups)} configurations{_left_out(dropped)} "
                     f"(per configuration {min(rs):.2f}-{max(rs):.2f})")
        rows.append(_evrow(cid, f"Go/{L(other)} geometric mean", "all configurations", g, r,
                           f"in [{GO_RANGE[0]:g}, {GO_RANGE[1]:g}]"))
    return Verdict(cid, claim, definition, combine(res), "; ".join(parts), _cores_scope(d), _ev(rows))


def claim_erlang_beats_akka_small(P: Processed) -> Verdict:
    cid = "C7a"
    claim = f"Erlang's throughput beats Akka's at small scale (<= {SMALL_CORES} cores, <= {SMALL_PAIRS} pairs)"
    definition = (f"Configurations with cores <= {SMALL_CORES} and pairs <= {SMALL_PAIRS}: geometric mean of the "
                  f"ratios Erlang/Akka of median exchanges per minute with a bootstrap interval. Supported if the "
                  f"interval lies above 1; contradicted if below 1; otherwise inconclusive.")
    d = _tp(P)
    miss = _missing(["erlang", "scala_akka"], d, "throughput")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    mask = (d["cores"] <= SMALL_CORES) & (d["pairs"] <= SMALL_PAIRS)
    return _region(cid, claim, definition, d, mask, expect_above=True)


def claim_akka_beats_erlang_large(P: Processed) -> Verdict:
    cid = "C7b"
    claim = "... and Erlang loses to Akka at larger scale (more cores and pairs)"
    definition = (f"Configurations with cores > {SMALL_CORES} and pairs > {SMALL_PAIRS}: geometric mean of the "
                  f"ratios Erlang/Akka with a bootstrap interval. Supported if the interval lies below 1; "
                  f"contradicted if above 1. Not testable without runs on more than {SMALL_CORES} cores.")
    d = _tp(P)
    miss = _missing(["erlang", "scala_akka"], d, "throughput")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    mask = (d["cores"] > SMALL_CORES) & (d["pairs"] > SMALL_PAIRS)
    if not mask.any():
        return Verdict(cid, claim, definition, NOT_TESTABLE,
                       f"needs runs on more than {SMALL_CORES} cores; {_machine_note(P)}", _cores_scope(d))
    return _region(cid, claim, definition, d, mask, expect_above=False)


def _region(cid, claim, definition, d, mask, expect_above):
    groups, cfgs = _tp_groups(d, "erlang", "scala_akka", mask)
    if not groups:
        return Verdict(cid, claim, definition, NOT_TESTABLE, "no configuration in the region measured in both languages",
                       _cores_scope(d))
    rows = []
    for (a, b), c in zip(groups, cfgs):
        ci = stats.bootstrap_ratio(a, b)
        rows.append(_evrow(cid, "Erlang/Akka msgs/min", _cfg(c), ci, above(ci, 1.0) if expect_above else below(ci, 1.0),
                           "> 1" if expect_above else "< 1"))
    n_all = len(groups)
    groups, _, dropped = _enough(groups, cfgs)
    g = stats.bootstrap_geomean_ratio(groups)
    g = stats.RatioCI(min(len(a) for a, _ in groups), min(len(b) for _, b in groups), g.ratio, g.lo, g.hi, g.level, g.method)
    r = above(g, 1.0) if expect_above else below(g, 1.0)
    rows.append(_evrow(cid, "Erlang/Akka geometric mean", "region", g, r, "> 1" if expect_above else "< 1"))
    wins = sum(x["ratio"] > 1 for x in rows[:-1])
    summ = (f"Erlang/Akka geometric mean {_fmt(g)} over {len(groups)} configurations{_left_out(dropped)}; "
            f"Erlang ahead (point estimate) in {wins} of {n_all}")
    return Verdict(cid, claim, definition, combine([r]), summ, _cores_scope(d[mask]), _ev(rows))


def claim_peak_pairs_eq_cores(P: Processed) -> Verdict:
    cid = "C8"
    claim = "Erlang and Go throughput peaks when the number of pairs equals the number of cores"
    definition = (f"For Erlang and Go, at every core count C whose sweep includes pairs = C: for every other pair "
                  f"count P the ratio T(P)/T(C) of median exchanges per minute with a bootstrap interval. Peak at C "
                  f"'yes' if every interval lies below {PEAK_TOLERANCE} (no pair count is more than "
                  f"{(PEAK_TOLERANCE - 1) * 100:.0f}% better), 'no' if some interval lies above {PEAK_TOLERANCE}. "
                  f"Supported if all yes; contradicted if any no.")
    d = _tp(P)
    miss = _missing(["erlang", "go"], d, "throughput")
    if miss:
        return Verdict(cid, claim, definition, NOT_TESTABLE, miss)
    keys = [k for k in ("variant", "payload", "message_bytes", "duration_s", "cores") if k in d]
    rows, res, parts = [], [], []
    for lang in ("erlang", "go"):
        dl = d[d["language"] == lang]
        for kv, g in dl.groupby(keys):
            cfg = dict(zip(keys, kv))
            c = cfg["cores"]
            base = g[g["pairs"] == c]["value"].to_numpy(float)
            others = sorted(p for p in g["pairs"].unique() if p != c)
            if len(base) == 0 or not others:
                continue
            per = []
            for p in others:
                ci = stats.bootstrap_ratio(g[g["pairs"] == p]["value"].to_numpy(float), base)
                r = below(ci, PEAK_TOLERANCE)
                per.append(r)
                rows.append(_evrow(cid, f"{L(lang)} T(P)/T(pairs=cores)", f"cores={int(c)}, P={int(p)}", ci, r,
                                   f"< {PEAK_TOLERANCE}"))
            v = combine(per)
            res.append(YES if v == SUPPORTED else NO if v == CONTRADICTED else UNCLEAR)
            best = g.groupby("pairs")["value"].median().idxmax()
            parts.append(f"{L(lang)} {int(c)} core(s): highest median at {int(best)} pairs ({v})")
    if not res:
        return Verdict(cid, claim, definition, NOT_TESTABLE, "no core count measured with pairs = cores and another pair count")
    return Verdict(cid, claim, definition, combine(res), "; ".join(parts), _cores_scope(d), _ev(rows))


def claim_go_no_scaling_beyond_4(P: Processed) -> Verdict:
    cid = "C9"
    claim = "Go's throughput does not scale beyond 4 cores"
    definition = (f"Go, for every pair count P >= 4 measured at 4 cores and at some C > 4: the ratio T(C, P)/T(4, P) "
                  f"of median exchanges per minute with a bootstrap interval. 'yes' (no scaling) if the interval "
                  f"lies below {SCALING_TOLERANCE}; 'no' if above. Supported if all yes; contradicted if any no. "
                  f"Not testable without runs on 4 and more than 4 cores.")
    d = _tp(P)
    d = d[d["language"] == "go"]
    cores = set(int(c) for c in d["cores"].unique())
    if 4 not in cores or not any(c > 4 for c in cores):
        return Verdict(cid, claim, definition, NOT_TESTABLE,
                       f"needs Go throughput runs on 4 and on 8 or more cores; {_machine_note(P)}", _cores_scope(d))
    rows, res = [], []
    for p in sorted(d["pairs"].unique()):
        if p < 4:
            continue
        base = d[(d["cores"] == 4) & (d["pairs"] == p)]["value"].to_numpy(float)
        for c in sorted(x for x in cores if x > 4):
            v = d[(d["cores"] == c) & (d["pairs"] == p)]["value"].to_numpy(float)
            if len(base) == 0 or len(v) == 0:
                continue
            ci = stats.bootstrap_ratio(v, base)
            r = below(ci, SCALING_TOLERANCE)
            res.append(r)
            rows.append(_evrow(cid, "Go T(C)/T(4 cores)", f"C={c}, P={int(p)}", ci, r, f"< {SCALING_TOLERANCE}"))
    if not res:
        return Verdict(cid, claim, definition, NOT_TESTABLE, "no pair count >= 4 measured at 4 and > 4 cores")
    mx = max(rows, key=lambda x: x["ratio"])
    return Verdict(cid, claim, definition, combine(res),
                   f"largest gain over 4 cores: {_fmt_row(mx)} at {mx['config']} ({_count(res)})",
                   _cores_scope(d), _ev(rows))


CHECKS = (claim_pingping_faster, claim_go_erlang_similar, claim_akka_most_processes, claim_erlang_spawns_fastest,
          claim_spawn_growth, claim_go_throughput_2_5x, claim_erlang_beats_akka_small, claim_akka_beats_erlang_large,
          claim_peak_pairs_eq_cores, claim_go_no_scaling_beyond_4)


def check_all(P: Processed, spawn_metric: str = "all_ready_s") -> list[Verdict]:
    out = []
    for f in CHECKS:
        kw = {"metric": spawn_metric} if f in (claim_erlang_spawns_fastest, claim_spawn_growth) else {}
        try:
            out.append(f(P, **kw))
        except Exception as e:  # a bug in one check must not hide the others; say so in the table
            out.append(Verdict(f.__name__, f.__doc__ or f.__name__, "", INCONCLUSIVE, f"check failed: {e!r}"))
    return out


def claims_table(verdicts: list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame([v.row() for v in verdicts])


def evidence_table(verdicts: list[Verdict]) -> pd.DataFrame:
    frames = [v.evidence.drop(columns=["short"], errors="ignore") for v in verdicts
              if v.evidence is not None and not v.evidence.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def write_claims(P: Processed, out_dir=None, spawn_metric: str = "all_ready_s") -> dict:
    from pathlib import Path
    out = Path(out_dir) if out_dir else P.folder
    v = check_all(P, spawn_metric)
    paths = {"claims": out / "claims.csv", "claims_evidence": out / "claims_evidence.csv"}
    claims_table(v).to_csv(paths["claims"], index=False)
    evidence_table(v).to_csv(paths["claims_evidence"], index=False)
    return paths
