"""Lab 1 - What does a message cost? Copy vs share across message sizes (pingping)."""

from __future__ import annotations

import pandas as pd

from serverbench import catalog
from serverbench.analysis.explorer import explore_plots
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import Exercise, LabData, median

# the class time this lab is planned for, in minutes: the notebook, docs/teaching.md and the
# instructor material quote it (tests/python/test_teaching_consistency.py)
CLASS_MINUTES = "35-45"

TABLE = "pingping"


def load(
    run=True, raw_folder=None, languages=None, trials=3, message_bytes=(100, 10_000, 1_000_000), repetitions=2000
) -> LabData:
    langs = common.need_languages(languages)
    trials = common.need_int("trials", trials, 1, 7)
    sizes = common.need_ints("message_bytes", list(message_bytes), 1, 4_000_000, 5)
    if len(sizes) < 2:
        raise common.LabInputError("parameter message_bytes needs at least two different sizes to compare")
    reps = common.need_int("repetitions", repetitions, 100, 20_000)
    overrides = {
        "pingping.trials": trials,
        "pingping.message_bytes": sizes,
        "pingping.repetitions": [reps],
        "pingping.payload": ["copy", "share"],
    }
    data = common.get_runs(
        "lab1", run=run, raw_folder=raw_folder, languages=langs, benchmarks=[TABLE], overrides=overrides
    )
    common.require_ok(data, TABLE)
    print(common.describe(data))
    return data


def table(data: LabData) -> pd.DataFrame:
    """Median ns per message: rows language x size, columns copy / share and their ratio."""
    d = data.ok(TABLE)
    t = d.pivot_table(index=["language", "message_bytes"], columns="payload", values="ns_per_message", aggfunc="median")
    if {"copy", "share"} <= set(t.columns):
        t["copy/share"] = t["copy"] / t["share"]
    return t.round(1)


def figure(data: LabData, kind: str = "strip"):
    return explore_plots.trial_distributions(
        data.runs, TABLE, "ns_per_message", kind=kind, title="pingping: ns per message, every trial (copy vs share)"
    )


def _sizes(data):
    d = data.ok(TABLE)
    return sorted(d[Col.message_bytes].dropna().unique())


def copy_share_ratio(data, lang="go"):
    big = _sizes(data)[-1]
    d = data.ok(TABLE)
    return median(d, "ns_per_message", language=lang, message_bytes=big, payload="copy") / median(
        d, "ns_per_message", language=lang, message_bytes=big, payload="share"
    )


def copy_bandwidth_gb_s(data, lang="go"):
    """(largest - smallest size) bytes / (extra ns per message under copy) = bytes per ns = GB/s."""
    s = _sizes(data)
    d = data.ok(TABLE)
    hi = median(d, "ns_per_message", language=lang, message_bytes=s[-1], payload="copy")
    lo = median(d, "ns_per_message", language=lang, message_bytes=s[0], payload="copy")
    if not hi > lo:
        return float("nan")
    return (s[-1] - s[0]) / (hi - lo)


def share_grows(data, lang="go"):
    s = _sizes(data)
    d = data.ok(TABLE)
    r = median(d, "ns_per_message", language=lang, message_bytes=s[-1], payload="share") / median(
        d, "ns_per_message", language=lang, message_bytes=s[0], payload="share"
    )
    if r != r:
        return None
    return "yes" if r > 2 else "no"


def _lang(data):
    return "go" if "go" in set(data.ok(TABLE)[Col.language]) else sorted(set(data.ok(TABLE)[Col.language]))[0]


def small_costs(data) -> dict:
    """Median ns per copied message at the smallest size, per language: the fixed part of a
    message's cost, before bytes matter."""
    d = data.ok(TABLE)
    small = _sizes(data)[0]
    langs = sorted(set(d[Col.language]))
    out = {lang: median(d, "ns_per_message", language=lang, message_bytes=small, payload="copy") for lang in langs}
    return {k: v for k, v in out.items() if v == v}


def costliest_small(data):
    """The language(s) paying the most per message at the smallest size (ties within 10 %)."""
    c = small_costs(data)
    if not c:
        return None
    top = max(c.values())
    return {k for k, v in c.items() if v >= top / 1.1}


def _why_fixed(data, t) -> str:
    costs = ", ".join(f"{k} {common.human(v)} ns" for k, v in small_costs(data).items())
    out = (
        f"measured: {' or '.join(sorted(t))} ({costs} at {int(_sizes(data)[0]):,} B). At the smallest size "
        "almost nothing is copied: this is the fixed hand-off (wake the receiver, switch to it)."
    )
    if "scala_akka" in t:
        out += (
            " A short JVM run adds the time before the JIT has compiled the loop: the JVM interprets "
            "it first (lab 4, warm-up), so its fixed part is largest at this R."
        )
    return out


EXERCISES = {
    "ratio": Exercise(
        "ratio",
        "how many times more one largest-size message costs under copy than under share",
        lambda data: copy_share_ratio(data, _lang(data)),
        common.within_factor(2.0),
        lambda data, t: (
            f"in {_lang(data)} a copy moves every byte into the receiver's own buffer on every hop, "
            f"so its cost grows with the size; a share sends a reference to an immutable buffer, so "
            f"it costs about the same at any size: measured {t:.1f}x at {int(_sizes(data)[-1]):,} B."
        ),
    ),
    "bandwidth": Exercise(
        "bandwidth",
        "the copy bandwidth in GB/s (bytes per ns) from the copy rows",
        lambda data: copy_bandwidth_gb_s(data, _lang(data)),
        common.within_factor(1.5, "GB/s"),
        lambda data, t: (
            f"(largest - smallest size) / (extra ns per message) = {t:.2g} bytes per ns = GB/s: "
            "the speed of memcpy on this machine (it drops once a buffer no longer fits in the "
            "cache). A message's cost is a fixed hand-off plus bytes / bandwidth."
        ),
    ),
    "share_flat": Exercise(
        "share_flat",
        "'yes' or 'no': does a shared message cost more when it is larger?",
        lambda data: share_grows(data, _lang(data)),
        common.one_of(["yes", "no"]),
        lambda data, t: (
            "sharing hands over a reference to one immutable buffer instead of its bytes (Go: a slice "
            f"header; the JVM: a reference), so the size hardly matters: measured answer '{t}'. How "
            "Erlang does it is exercise 5."
        ),
    ),
    "fixed_cost": Exercise(
        "fixed_cost",
        "which language pays the most per message at the smallest size: 'erlang', 'go' or 'scala_akka'",
        costliest_small,
        common.one_of(
            catalog.paper_languages,
            hint="look at the copy rows at the smallest size, language by language: the cost before any bytes matter",
        ),
        _why_fixed,
    ),
    "why_share": common.choice(
        "why_share",
        "the letter of the reason a shared 1 MB message costs Erlang about as much as a 100 B one",
        {
            "a": "the Erlang VM compresses a large message before it sends it",
            "b": "a binary larger than 64 bytes is stored once, off the process heaps, and reference-counted: "
            "sending it passes a reference",
            "c": "the receiver reads a message lazily, so its bytes are copied only when they are used",
        },
        "b",
        "Erlang's share rows at each size (does the cost follow the bytes?) and what `share` sends, "
        "in the benchmark's description at the top",
        "Only the reference and its count change hands, whatever the size. Compression would still read "
        "every byte, so its cost would grow with the size; and Erlang copies a small message into the "
        "receiver's heap when it is sent, not when it is read.",
    ),
}


def check(key: str, answer, data, solutions=False, prediction=None) -> None:
    """Print 'correct' or a hint, then the prediction beside the measurement (common.check
    returns the verdict, for tests)."""
    common.check(EXERCISES[key], answer, data, solutions, prediction)


def background(data: LabData):
    """Numbers from the committed quick sweep, to set the scene before the exercises."""
    s = common.sample_sweep()
    if s is None:
        return common.md("*(The committed sample sweep is not in this checkout, so no earlier numbers here.)*")
    d = s.ok()
    d = d[(d[Col.table] == TABLE) & (d[Col.repetitions] == 100_000)]
    rows = []
    for lang in ("erlang", "go", "scala_akka"):
        a, b = (median(d, "ns_per_message", language=lang, message_bytes=m) for m in (5000, 50_000))
        rows.append(f"| {lang} | {a:,.0f} | {b:,.0f} | {b / a:.1f}x |")
    return common.md(
        f"In the committed sample sweep `{common.SAMPLE_SWEEP}` (2-core machine, R = 100,000, copy), "
        "the median cost of one message was:\n\n| language | ns at 5 kB | ns at 50 kB | 50 kB / 5 kB |\n"
        "|---|---|---|---|\n" + "\n".join(rows) + "\n\nTen times the bytes did not cost ten times the time: a "
        "message has a fixed part (waking the receiver, scheduling) and a part proportional to its bytes."
    )


TAKEAWAY = """**Take-away.** A message costs a fixed hand-off (wake the receiver, switch to
it: ~0.2-1 µs here) plus bytes / memory bandwidth when its payload is copied. Sharing immutable
data removes the second part, which is why Go's `share` is nearly free and why Erlang stores large
binaries off-heap. A short JVM run is dominated by interpretation before the JIT compiles the loop."""


def takeaway(solutions=False):
    return common.reveal(solutions, TAKEAWAY)
