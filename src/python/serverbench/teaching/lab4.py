"""Lab 4 - Benchmarking pitfalls: noise, warm-up, too few trials, and benchmarks that
silently do less work, found from the numbers.

The core part (about 30 minutes) is here: noise, warm-up, how many trials an interval
needs, and a batch counter that drops its remainder. The optional part ("If you have
time", about 15 minutes) is in lab4_paper.py (an asynchronous spawn timed as if it had
finished; the paper variant's reports against the work done) and lab4_tcp.py (a 1-byte TCP
read buffer); this module re-exports them, so the notebook reaches every cell through one
module, and keeps every exercise, so that each self-check is found in one place."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.explorer import explore_plots
from serverbench.analysis.statistics import stats
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import Exercise, LabData, median
from serverbench.teaching.lab4_paper import PAIRS, REPORT_EVERY, _paper_fraction
from serverbench.teaching.lab4_paper import paper_available as paper_available  # the optional part, for the notebook
from serverbench.teaching.lab4_paper import paper_spawn as paper_spawn
from serverbench.teaching.lab4_paper import paper_table as paper_table
from serverbench.teaching.lab4_paper import paper_vs_fair as paper_vs_fair
from serverbench.teaching.lab4_paper import spawn_timing as spawn_timing
from serverbench.teaching.lab4_tcp import recorded_tcp as recorded_tcp
from serverbench.teaching.lab4_tcp import tcp_buffer as tcp_buffer
from serverbench.teaching.lab4_tcp import tcp_buffer_flag as tcp_buffer_flag
from serverbench.teaching.lab4_tcp import tcp_looks_faster
from serverbench.teaching.lab4_tcp import tcp_table as tcp_table

# the class time this lab is planned for, in minutes: the notebook, docs/teaching.md and the
# instructor material quote it (tests/python/test_teaching_consistency.py)
CLASS_MINUTES = "45"

SIZE = 5000
REPS = (1000, 20_000)


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
    d = data.runs[(data.runs[Col.table] == "pingping") & (data.runs[Col.status] == "ok")]
    rows = []
    for (lang, r), g in d.groupby(["language", "repetitions"]):
        m = g[~g[Col.warmup]][Col.ns_per_message]
        w = g[g[Col.warmup]][Col.ns_per_message]
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
                "load avg before": g[Col.load_avg_1m_before].median() if Col.load_avg_1m_before in g else None,
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
        per_pair = r[Col.exchanges] / r[Col.pairs]
        kept = (per_pair // REPORT_EVERY) * REPORT_EVERY
        rows.append(
            {
                "language": r[Col.language],
                "pairs": int(r[Col.pairs]),
                "exchanges": int(r[Col.exchanges]),
                "per pair": round(per_pair),
                "counted in whole batches": int(kept * r[Col.pairs]),
                "fraction lost": round(1 - kept / per_pair, 3),
            }
        )
    return pd.DataFrame(rows)


def _lost(data, lang="go"):
    t = batch_table(data)
    t = t[t[Col.language] == lang]
    return float(t["fraction lost"].iloc[0]) if len(t) else None


# --- exercises -------------------------------------------------------------------------
def _langs(data, table="pingping"):
    return set(data.ok(table)[Col.language])


def _spread(data):
    lang = "go" if "go" in _langs(data) else sorted(_langs(data))[0]
    d = data.ok("pingping")
    v = d[(d[Col.language] == lang) & (d[Col.repetitions] == max(REPS))][Col.ns_per_message]
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
        fixed=True,
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
        fixed=True,
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
            f"{t:.1f}x: the same program and input cost more per message in a short run. Compare Go's "
            "and Erlang's rows, which hardly change with R; why the JVM's do is exercise 3. A benchmark "
            "must run long enough, or discard a warm-up phase."
        ),
    ),
    "why_warmup": common.choice(
        "why_warmup",
        "the letter of the reason Scala/Akka's short run costs more per message than its long run",
        {
            "a": "the garbage collector runs only during short runs",
            "b": "the JVM interprets the loop first and compiles it once it is hot, so a short run is mostly "
            "spent before the compiled code runs",
            "c": "Akka sends the first messages of a run through a slower, unbuffered mailbox",
        },
        "b",
        "which languages' rows in the noise table differ between R = 1,000 and R = 20,000, and how each "
        "language turns its code into machine code",
        "Go is compiled ahead of time and Erlang's JIT translates code when it is loaded, so their short "
        "and long runs cost about the same per message; HotSpot compiles a method only after it has run "
        "many times. Keep the warm-up outside the clock, or run long enough that it does not matter.",
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
        tcp_looks_faster,
        common.within_factor(1.3),
        lambda data, t: (
            f"{t:.1f}x faster on paper, while bytes_read shows it read a quarter of the bytes: each "
            "1-byte read was counted as a whole round trip. Count what arrived (bytes) and check it "
            "against what was expected, as the program's validation does."
        ),
    ),
    "why_tcp": common.choice(
        "why_tcp",
        "the letter of the reason the 1-byte run looked faster",
        {
            "a": "a 1-byte read returns as soon as the first byte arrives, so each round trip really is shorter",
            "b": "the client counted every read as a round trip, so it reached its count after a fraction of "
            "the bytes it was owed: the same count stood for less work",
            "c": "with a 1-byte buffer the kernel turns off Nagle's algorithm and sends sooner",
        },
        "b",
        "bytes_read against expected_bytes_each_way, and round_trips_counted against round_trips_completed, "
        "in the TCP table",
        "A 4-byte message read 1 byte at a time takes 4 reads; counting reads as round trips reaches the "
        "target after a quarter of the messages, so the time per 'round trip' is the time per read. "
        "The fair program counts whole messages and checks the bytes that arrived.",
    ),
}


def check(key: str, answer, data, solutions=False, prediction=None) -> None:
    """Print 'correct' or a hint, then the prediction beside the measurement (common.check
    returns the verdict, for tests)."""
    common.check(EXERCISES[key], answer, data, solutions, prediction)


TAKEAWAY = """**Take-away.** Before comparing speeds, check the work: messages
received, bytes moved, processes ready, exchanges counted by both sides. A faster number with less
work behind it is a bug, not a result. Then: several trials, medians with intervals at the
confidence they really reach (6 trials for [min, max] at 95 %), warm-up outside the clock, and
distributions, not single numbers."""


def takeaway(solutions=False):
    return common.reveal(solutions, TAKEAWAY)
