"""Lab 3 - Throughput vs cores: P pairs exchanging messages on 1 and 2 cores."""

from __future__ import annotations

import pandas as pd

from serverbench import catalog
from serverbench.analysis.explorer import explore_plots
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import Exercise, LabData, median

# the class time this lab is planned for, in minutes: the notebook, docs/teaching.md and the
# instructor material quote it (tests/python/test_teaching_consistency.py)
CLASS_MINUTES = "30-35"

TABLE = "throughput"
METRIC = "exchanges_per_s"


def load(run=True, raw_folder=None, languages=None, trials=2, pairs=(1, 4, 16), duration_s=0.3) -> LabData:
    langs = common.need_languages(languages)
    trials = common.need_int("trials", trials, 1, 5)
    ps = common.need_ints("pairs", list(pairs), 1, 1024, 5)
    dur = common.need_number("duration_s", duration_s, 0.1, 3.0)
    overrides = {
        "throughput.trials": trials,
        "throughput.pairs": ps,
        "throughput.duration_s": dur,
        "throughput.cores": [1, 2],
    }
    data = common.get_runs(
        "lab3", run=run, raw_folder=raw_folder, languages=langs, benchmarks=[TABLE], overrides=overrides
    )
    common.require_ok(data, TABLE)
    print(common.describe(data))
    return data


def table(data: LabData) -> pd.DataFrame:
    """Median exchanges per second (millions): rows language x pairs, columns cores; speed-up."""
    d = data.ok(TABLE)
    t = d.pivot_table(index=["language", "pairs"], columns="cores", values=METRIC, aggfunc="median") / 1e6
    t.columns = [f"M/s on {c} core(s)" for c in t.columns]
    if len(t.columns) == 2:
        t["speed-up"] = t.iloc[:, 1] / t.iloc[:, 0]
    return t.round(2)


def figure(data: LabData, kind: str = "strip"):
    return explore_plots.trial_distributions(
        data.runs, TABLE, METRIC, kind=kind, log=False, title="throughput: exchanges per second, every trial"
    )


def speedup(data, lang, pairs=None):
    d = data.ok(TABLE)
    pairs = pairs if pairs is not None else d[Col.pairs].max()
    return median(d, METRIC, language=lang, pairs=pairs, cores=2) / median(
        d, METRIC, language=lang, pairs=pairs, cores=1
    )


def _lang(data):
    langs = set(data.ok(TABLE)[Col.language])
    return "go" if "go" in langs else sorted(langs)[0]


def best_gainer(data):
    """The language(s) with the largest speed-up at the largest P (ties within 10 %)."""
    sp = {lang: speedup(data, lang) for lang in sorted(set(data.ok(TABLE)[Col.language]))}
    sp = {k: v for k, v in sp.items() if v == v}
    if not sp:
        return None
    top = max(sp.values())
    return {k for k, v in sp.items() if v >= top / 1.1}


def pairs_help_one_core(data, lang="go"):
    d = data.ok(TABLE)
    lo, hi = d[Col.pairs].min(), d[Col.pairs].max()
    r = median(d, METRIC, language=lang, pairs=hi, cores=1) / median(d, METRIC, language=lang, pairs=lo, cores=1)
    return None if r != r else ("yes" if r > 1.2 else "no")


EXERCISES = {
    "speedup": Exercise(
        "speedup",
        "go's speed-up from 1 to 2 cores at the largest number of pairs",
        lambda data: speedup(data, _lang(data)),
        common.within_abs(0.3),
        lambda data, t: (
            f"measured {t:.2f}x. Two cores can at best double the rate; hand-offs between cores "
            "(waking a process on the other core, moving the message's cache lines) eat part of the "
            "gain, and on a shared machine other work takes its share too."
        ),
    ),
    "gainer": Exercise(
        "gainer",
        "which language gains most from the second core: 'erlang', 'go' or 'scala_akka'",
        best_gainer,
        common.one_of(catalog.paper_languages),
        lambda data, t: (
            f"measured: {', '.join(sorted(t))}. What a second core buys depends on how much work "
            "runs in parallel (pairs on different cores) against how many hand-offs now cross cores; a "
            "runtime whose one core was also busy with its own background work (the JVM's JIT and GC "
            "threads) gains more than its pairs alone explain. Short runs on a busy machine blur this: "
            "check the spread of the dots before you believe the ranking."
        ),
    ),
    "pairs1": Exercise(
        "pairs1",
        "'yes' or 'no': on 1 core, do more pairs raise go's rate by more than 20 %?",
        lambda data: pairs_help_one_core(data, _lang(data)),
        common.one_of(["yes", "no"]),
        lambda data, t: (
            f"measured '{t}'. One core runs one thing at a time: more pairs only add more "
            "processes to the run queue, so the rate stays flat (or drops a little, as more "
            "processes compete for the cache)."
        ),
    ),
    "why_one_pair": common.choice(
        "why_one_pair",
        "the letter of the reason one pair cannot use a second core",
        {
            "a": "the runtime pins each pair to one core",
            "b": "a ping-pong pair has one message in flight: at any moment only one of its two processes has "
            "work, while the other waits for the answer",
            "c": "the operating system gives one program at most one core",
        },
        "b",
        "the speed-up column at the smallest P next to the largest P, and what each side of a pair does "
        "while the other handles the message",
        "The two processes of a pair take turns, so there is nothing to run in parallel: a second core "
        "only adds cross-core wake-ups. The same runtimes and the same program do use both cores once "
        "there are several pairs (the larger P rows).",
    ),
}


def check(key: str, answer, data, solutions=False, prediction=None) -> None:
    """Print 'correct' or a hint, then the prediction beside the measurement (common.check
    returns the verdict, for tests)."""
    common.check(EXERCISES[key], answer, data, solutions, prediction)


def background(data: LabData):
    s = common.sample_sweep()
    if s is None:
        return common.md("*(The committed sample sweep is not in this checkout.)*")
    d = s.ok()
    d = d[d[Col.table] == TABLE]
    rows = []
    for lang in ("erlang", "go", "scala_akka"):
        vals = [median(d, METRIC, language=lang, pairs=p, cores=2) / 1e6 for p in (1, 2, 8, 128)]
        rows.append(f"| {lang} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
    return common.md(
        f"The committed sample sweep `{common.SAMPLE_SWEEP}` measured, on 2 cores, millions of exchanges per "
        "second:\n\n| language | P = 1 | P = 2 | P = 8 | P = 128 |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
        + "\n\nThe paper found Go flattening and Erlang peaking at some P; on 2 cores the curve flattens "
        "as soon as both cores are busy (P = 2): beyond that, pairs only wait for their turn. Your runs "
        "below last 0.3 s on a machine others may be using: expect lower and noisier rates."
    )


TAKEAWAY = """**Take-away.** A pair is a strict ping-pong: one message in flight, so
one pair keeps at most one core busy, and on two cores it pays for cross-core wake-ups. Throughput
grows with pairs only until every core is busy; after that the schedulers just rotate more processes
(Go flattens). A runtime with its own overheads per scheduler (Erlang's run-queue balancing, the
JVM's helper threads) can even get slower with more pairs or cores: where the curve peaks depends
on the machine, which is why the paper's figure has one panel per core count."""


def takeaway(solutions=False):
    return common.reveal(solutions, TAKEAWAY)
