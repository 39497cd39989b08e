"""Lab 4 - Benchmarking pitfalls: noise, warm-up, too few trials, and benchmarks that
silently do less work (a batch counter dropping its remainder, an asynchronous spawn
timed as if it had finished, a 1-byte TCP read buffer), found from the numbers.

Its shared runs and plots live in teaching/common.py, the TCP 1-byte-buffer pitfall and
the extra sweeps it and the paper variant need in teaching/lab4_tcp.py.

The paper variant (`--variant paper`) and the TCP ping-pong benchmark are used when this
checkout has them (spec/cli.json); otherwise the lab says so and works on the fair runs.

Why one module past ~350 lines: it is one lab, read top to bottom beside its notebook;
each pitfall's exercise sits next to the data it checks."""

from __future__ import annotations

import pandas as pd

from serverbench import contract
from serverbench.analysis import explore_plots, stats
from serverbench.teaching import common
from serverbench.teaching.common import Exercise, LabData, median
from serverbench.teaching.lab4_tcp import _run_extra, _tcp_looks_faster, tcp_buffer, tcp_buffer_flag, tcp_table  # noqa: F401

SIZE = 5000
REPS = (1000, 20_000)
PAIRS = 16
REPORT_EVERY = 10_000


def load(run=True, raw_folder=None, languages=None, trials=5, duration_s=0.3) -> LabData:
    langs = common.need_languages(languages)
    trials = common.need_int("trials", trials, 2, 9)
    dur = common.need_number("duration_s", duration_s, 0.1, 2.0)
    overrides = {
        "pingping.trials": trials,
        "pingping.warmup": True,
        "pingping.message_bytes": [SIZE],
        "pingping.repetitions": list(REPS),
        "pingping.payload": ["copy"],
        "throughput.trials": 1,
        "throughput.pairs": [PAIRS],
        "throughput.duration_s": dur,
        "throughput.report_every": REPORT_EVERY,
        "throughput.cores": ["max"],
    }
    data = common.get_runs(
        "lab4",
        run=run,
        raw_folder=raw_folder,
        languages=langs,
        benchmarks=["pingping", "throughput"],
        overrides=overrides,
    )
    common.require_ok(data, "pingping")
    print(common.describe(data))
    return data


# --- noise and warm-up ------------------------------------------------------------------
def noise_table(data: LabData) -> pd.DataFrame:
    d = data.runs[(data.runs["table"] == "pingping") & (data.runs["status"] == "ok")]
    rows = []
    for (lang, r), g in d.groupby(["language", "repetitions"]):
        m = g[~g["warmup"]]["ns_per_message"]
        w = g[g["warmup"]]["ns_per_message"]
        rows.append(
            {
                "language": lang,
                "repetitions": int(r),
                "trials": len(m),
                "median_ns": m.median(),
                "min_ns": m.min(),
                "max_ns": m.max(),
                "max/min": m.max() / m.min(),
                "warm-up run ns": w.iloc[0] if len(w) else None,
                "load avg before": g["load_avg_1m_before"].median() if "load_avg_1m_before" in g else None,
            }
        )
    return pd.DataFrame(rows).round(2)


def figure(data: LabData, kind: str = "strip"):
    return explore_plots.trial_distributions(
        data.runs,
        "pingping",
        "ns_per_message",
        kind=kind,
        title="pingping 5 kB: every measured trial (noise; R = warm-up)",
    )


def ecdf(data: LabData):
    return explore_plots.trial_distributions(
        data.runs, "pingping", "ns_per_message", kind="ecdf", title="the same trials as ECDFs: steps far apart = noise"
    )


def coverage_table(max_n: int = 9) -> pd.DataFrame:
    rows = []
    for n in range(2, max_n + 1):
        lo, hi, cov = stats.order_statistic_indices(n, 0.95)
        both = stats.max_confidence(n, n) if hasattr(stats, "max_confidence") else None
        rows.append(
            {
                "trials": n,
                "median interval": f"[x({lo + 1}), x({hi + 1})]",
                "its confidence": round(cov, 3),
                "best ratio interval, n vs n": None if both is None else round(both, 3),
            }
        )
    return pd.DataFrame(rows)


def min_trials_for(level=0.95) -> int:
    n = 2
    while stats.order_statistic_indices(n, level)[2] < level:
        n += 1
    return n


# --- the batch counter ---------------------------------------------------------------------
def batch_table(data: LabData) -> pd.DataFrame:
    """What a counter that only adds complete batches of K would report (per pair: the
    average count, its remainder mod K, lost)."""
    d = data.ok("throughput")
    rows = []
    for _, r in d.iterrows():
        per_pair = r["exchanges"] / r["pairs"]
        kept = (per_pair // REPORT_EVERY) * REPORT_EVERY
        rows.append(
            {
                "language": r["language"],
                "pairs": int(r["pairs"]),
                "exchanges": int(r["exchanges"]),
                "per pair": round(per_pair),
                "counted in whole batches": int(kept * r["pairs"]),
                "fraction lost": round(1 - kept / per_pair, 3),
            }
        )
    return pd.DataFrame(rows)


def _lost(data, lang="go"):
    t = batch_table(data)
    t = t[t["language"] == lang]
    return float(t["fraction lost"].iloc[0]) if len(t) else None


# --- asynchronous spawn ----------------------------------------------------------------------
def spawn_timing() -> pd.DataFrame:
    """spawn_call_s (the loop returned) vs all_ready_s (every process ran), committed sample."""
    s = common.sample_sweep()
    if s is None:
        return pd.DataFrame()
    d = s.ok()
    d = d[d["table"] == "spawn"]
    d = d[d["processes"].isin([1000, 10_000, 100_000])].astype({"processes": int})
    t = d.groupby(["language", "processes"])[["spawn_call_s", "all_ready_s"]].median()
    t["ready/call"] = t["all_ready_s"] / t["spawn_call_s"]
    return t.round(4)


# --- paper variant and TCP 1-byte buffer: only where this checkout has them -------------------
def paper_available() -> str | None:
    """None if the paper variant is built, else why not."""
    if "paper" in contract.cli_contract().get("implemented_variants", []):
        return None
    return "the paper variant is not built in this checkout yet (spec/cli.json implemented_variants)"


def paper_vs_fair(data: LabData, run: bool = True):
    """Throughput with the original programs' quirks (variant paper) next to the fair runs:
    what each program reported against what it really did."""
    why = paper_available()
    if why:
        return common.md(
            f"**Not available yet:** {why}. The batch-counter and spawn-timing pitfalls above are "
            "shown on the fair runs instead."
        )
    if not run or data.source != "ran":
        return common.md(
            "**Skipped:** this lab is studying an existing sweep (run=False or raw_folder), so no "
            "paper-variant runs were made."
        )
    cli = contract.cli_contract()
    langs = [
        x
        for x in data.languages
        if "paper" in (cli["languages"].get(x, {}).get("variants") or cli.get("implemented_variants", []))
    ]
    if not langs:
        return common.md(f"**Not available yet:** none of {', '.join(data.languages)} implements the paper variant.")
    try:
        s = _run_extra(
            "paper",
            ["throughput", "spawn"],
            {
                "variant": "paper",
                "throughput.trials": 1,
                "throughput.pairs": [PAIRS],
                "throughput.duration_s": 0.3,
                "throughput.report_every": REPORT_EVERY,
                "throughput.cores": ["max"],
                "spawn.trials": 1,
                "spawn.processes": [20_000],
            },
            langs,
        )
    except Exception as e:  # an optional demo: say why and go on
        return common.md(f"**The paper-variant runs could not be made:** {e}")
    data.extra["paper"] = s
    return paper_table(pd.concat([data.ok("throughput"), s.runs[s.runs["table"] == "throughput"]], ignore_index=True))


def paper_table(d: pd.DataFrame) -> pd.DataFrame:
    nan = pd.Series(float("nan"), index=d.index)
    true = d["true_exchanges"].fillna(d["exchanges"]) if "true_exchanges" in d else d["exchanges"]
    reported = d["reported_exchanges"] if "reported_exchanges" in d else nan
    reported = reported.where(d["variant"] != "fair", d["exchanges"])
    printed = d["reported_printed"] if "reported_printed" in d else pd.Series(True, index=d.index)
    out = pd.DataFrame(
        {
            "language": d["language"],
            "variant": d["variant"],
            "status": d["status"],
            "exchanges really done": true,
            "exchanges the program reported": reported,
            "printed a result": printed.where(d["variant"] != "fair", True),
        }
    )
    out["reported / done"] = (out["exchanges the program reported"] / out["exchanges really done"]).round(3)
    return out.sort_values(["language", "variant"]).reset_index(drop=True)


def paper_spawn(data: LabData):
    s = data.extra.get("paper")
    if s is None:
        return common.md("*(No paper-variant spawn runs: see the cell above.)*")
    d = s.runs[(s.runs["table"] == "spawn")]
    cols = [
        c for c in ("language", "processes", "status", "reported_elapsed_s", "spawn_call_s", "all_ready_s") if c in d
    ]
    return d[cols].astype({"processes": "Int64"}).reset_index(drop=True)


def _paper_fraction(data, lang="go"):
    s = data.extra.get("paper")
    if s is None or "reported_exchanges" not in s.runs:
        return None
    t = paper_table(s.runs[s.runs["table"] == "throughput"])
    t = t[t["language"] == lang]
    return float(t["reported / done"].fillna(0).iloc[0]) if len(t) else None


# --- exercises -------------------------------------------------------------------------
def _langs(data, table="pingping"):
    return set(data.ok(table)["language"])


def _spread(data):
    lang = "go" if "go" in _langs(data) else sorted(_langs(data))[0]
    d = data.ok("pingping")
    v = d[(d["language"] == lang) & (d["repetitions"] == max(REPS))]["ns_per_message"]
    return float(v.max() / v.min()) if len(v) > 1 else None


def _warm(data):
    lang = "scala_akka" if "scala_akka" in _langs(data) else sorted(_langs(data))[0]
    d = data.ok("pingping")
    return median(d, "ns_per_message", language=lang, repetitions=min(REPS)) / median(
        d, "ns_per_message", language=lang, repetitions=max(REPS)
    )


EXERCISES = {
    "coverage3": Exercise(
        "coverage3",
        "the confidence that [min, max] of 3 trials contains the true median (0..1)",
        lambda data: stats.order_statistic_indices(3, 0.95)[2],
        common.within_abs(0.02),
        lambda data, t: (
            f"{t:.2f}: the median lies outside [min, max] only if all 3 trials fall on the same side "
            "of it, probability 2 x (1/2)^3 = 0.25. No interval from 3 trials reaches 95 %."
        ),
    ),
    "min_trials": Exercise(
        "min_trials",
        "the fewest trials whose [min, max] reaches 95 % confidence",
        lambda data: min_trials_for(0.95),
        common.within_abs(0),
        lambda data, t: (
            f"{t}: 1 - 2 x (1/2)^n >= 0.95 needs 2^n >= 40, n = 6. With 3 trials per language a "
            "comparison of two languages reaches at most 90 % (1 - 2/C(6,3))."
        ),
    ),
    "spread": Exercise(
        "spread",
        "max / min of go's trials at the larger R (how noisy is one configuration?)",
        _spread,
        common.within_factor(1.15),
        lambda data, t: (
            f"{t:.2f}x between the fastest and slowest trial of the same program and input: other "
            "processes, CPU frequency, where the threads land. Report medians with intervals, and "
            "never compare two single runs."
        ),
    ),
    "warmup": Exercise(
        "warmup",
        "scala_akka's ns per message at R = 1,000 divided by that at R = 20,000",
        _warm,
        common.within_factor(1.5),
        lambda data, t: (
            f"{t:.1f}x: the JVM interprets the code first and compiles it once it is hot, so a short "
            "run measures mostly the warm-up. Go is compiled ahead of time and Erlang's JIT translates "
            "code when it is loaded, so neither warms up this way (compare their rows); a benchmark "
            "must run long enough, or discard a warm-up phase."
        ),
    ),
    "batch": Exercise(
        "batch",
        "the fraction of go's exchanges a counter of whole batches would lose (0..1)",
        lambda data: _lost(data, "go" if "go" in _langs(data, "throughput") else sorted(_langs(data, "throughput"))[0]),
        common.within_abs(0.05),
        lambda data, t: (
            f"{t:.2f}: each pair's last, incomplete batch of {REPORT_EVERY:,} is never reported. With "
            f"{PAIRS} pairs in a short run that is a large share; the fair programs send the remainder "
            "and the harness checks reported == counted exchanges."
        ),
    ),
    "paper": Exercise(
        "paper",
        "the fraction of go's real exchanges that its paper-variant program reported (0..1)",
        _paper_fraction,
        common.within_abs(0.05),
        lambda data, t: (
            f"{t:.2f}: the original program only added whole batches and closed its window when "
            "it chose to, so a short, many-pair run reports a part of its work. Compare every "
            "'reported' number with a count the benchmark cannot fake."
        ),
    ),
    "tcp": Exercise(
        "tcp",
        "how many times faster go's 1-byte-buffer run looks (reported us per round trip: 4 B / 1 B)",
        _tcp_looks_faster,
        common.within_factor(1.3),
        lambda data, t: (
            f"{t:.1f}x faster on paper, while bytes_read shows it read a quarter of the bytes: each "
            "1-byte read was counted as a whole round trip. Count what arrived (bytes) and check it "
            "against what was expected, as the program's validation does."
        ),
    ),
}


def check(key: str, answer, data, solutions=False) -> None:
    """Print 'correct' or a hint (common.check returns the verdict, for tests)."""
    common.check(EXERCISES[key], answer, data, solutions)


TAKEAWAY = """**Take-away.** Before comparing speeds, check the work: messages
received, bytes moved, processes ready, exchanges counted by both sides. A faster number with less
work behind it is a bug, not a result. Then: several trials, medians with intervals at the
confidence they really reach (6 trials for [min, max] at 95 %), warm-up outside the clock, and
distributions, not single numbers."""


def takeaway(solutions=False):
    return common.reveal(solutions, TAKEAWAY)
