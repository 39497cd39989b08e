"""Why ours differ from the paper's values: the gap, factor by factor, from one sweep of the
`gap` profile (its runs.jsonl and original.jsonl; docs/gap.md).

For each original program (programs.PROGRAMS) whose sides the sweep ran, at each of its
configurations, every factor is a ratio "the side nearer today / the side nearer the
paper", so that the factors multiply to the whole gap (ours today / the paper's value):

- ``release``: ours, fair, on today's runtime / the same on the original's (only where they
  differ: Akka 2.6 against 2.4.12);
- ``quirks``: our port, fair / its paper variant (every quirk of the original);
  ``quirk:<knob>``: fair / that quirk alone (beside, not in the product);
- ``program``: our paper variant / the authors' original, as it printed its result; for a
  JVM original that the sweep also ran with our JVM flags (programs.OURS: the heap and stack
  flags the harness gives our programs), our paper variant / the original with our flags;
- ``jvm flags``: the original with our JVM flags / the original as the authors ran it (the
  JVM's defaults); only where the sweep ran both (sweeps before the flags were a choice ran
  the original as the authors did, and their rows are as they were: no such row, and
  ``program`` against that run);
- ``not attributed``: the original here, as the authors ran it / the paper's
  value; what is left when the factors above are taken out, which the runtime releases
  this machine cannot install (the paper's JDK 8, its Go and OTP), the machine and the year
  share;
- ``total``: ours today (fair) / the paper's value; ``product``: the product of the factors
  (gap_tables.PRODUCT, those of the configuration's rows), which should be near total;
- beside them, EXTRA rows: the same Pekko jar on JDK 25 / on JDK 17.

The value of a run: ours as the then-and-now tables compare them (the fair metric) for fair
runs; for the paper variant and its quirks, of PingPing and spawn what the variant reports
(the original printed that: spawn's `timer` times the spawn loop only), of throughput the
measured rate (its quirks change whether the count is printed, not the rate). The
original's is what it printed (side ``original`` as the authors ran it, ``original:ours``
with our JVM flags: runner.flags_of).

Two sides of one sweep are paired by round (trial k of every side ran in round k;
Hodges-Lehmann with the exact Wilcoxon signed-rank interval, analysis.statistics.paired); a
side against the paper's single value is its median with the order-statistic interval,
divided by that value. A round in which the original printed nothing has no pair
(``n_rounds`` says how many paired).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import paths
from serverbench.analysis.auditing import audit
from serverbench.analysis.reading import reference
from serverbench.analysis.reading.gap_tables import COLUMNS, FILE_NAME, JVM_FLAGS, NOT_ATTRIBUTED, PRODUCT
from serverbench.analysis.statistics import paired, stats
from serverbench.harness.planning import audit_steps
from serverbench.harness.recording.rawlog import read_lines
from serverbench.originals import programs, runner
from serverbench.rawdata.columns import Col

ORIGINAL = "original"  # the original as the authors ran it
ORIGINAL_OURS = "original:ours"  # the original with our JVM flags
ORIGINALS = (ORIGINAL, ORIGINAL_OURS)
# the configuration keys of each benchmark's rows, in the order a config text gives them
KEYS = {
    "throughput": ("cores", "pairs"),
    "pingping": ("cores", "message_bytes", "repetitions"),
    "spawn": ("cores", "processes"),
}
VALUE = {"throughput": "true_value", "pingping": "value", "spawn": "value"}
# (benchmark, today's language, factor, numerator side, denominator side, what)
EXTRA = (
    (
        "throughput",
        "scala_akka",
        "jdk 25 / 17",
        "scala_pekko_jdk25:fair",
        "scala_pekko:fair",
        "the Pekko jar: JDK 25 / JDK 17",
    ),
)


def config_text(benchmark: str, cfg: dict) -> str:
    """'cores=1, pairs=64': a configuration as the table's `config` column holds it."""
    return ", ".join(f"{k}={int(cfg[k])}" for k in KEYS[benchmark])


def point(benchmark: str, cfg: dict) -> str:
    """A configuration as a reader names it: '1 core, 64 pairs', '5 kB, R = 1,000,000',
    'N = 3,000,000' (the `point` column, the markdown's column headings)."""
    if benchmark == "throughput":
        c, p = int(cfg[Col.cores]), int(cfg[Col.pairs])
        return f"{c} core{'s' * (c != 1)}, {p} pair{'s' * (p != 1)}"
    if benchmark == "pingping":
        return f"{int(cfg[Col.message_bytes]) // 1000} kB, R = {int(cfg[Col.repetitions]):,}"
    return f"N = {int(cfg[Col.processes]):,}"


def sides(sweep_dir) -> pd.DataFrame:
    """One row per measured run: benchmark, side ('<language>:<step>', or one of ORIGINALS),
    language, the benchmark's keys (KEYS), trial (the round), value, printed."""
    keys = sorted({k for ks in KEYS.values() for k in ks})
    cols = ["benchmark", "side", "language", *keys, "trial", "value", "printed"]
    rows = []
    R = audit.load_runs(sweep_dir)
    for r in R.to_dict("records") if not R.empty else []:
        b = r[Col.benchmark]
        if b not in KEYS:
            continue
        v = r[VALUE[b]]
        rows.append(
            {
                "benchmark": b,
                "side": f"{r[Col.language]}:{r[Col.step]}",
                "language": r[Col.language],
                **{k: r.get(k) for k in KEYS[b]},
                "trial": int(r[Col.trial]),
                "value": float(v) if v is not None and not pd.isna(v) else np.nan,
                "printed": bool(r["printed"]),
            }
        )
    path = Path(sweep_dir) / runner.FILE_NAME
    bad: list[int] = []
    for rec in read_lines(path, bad):  # the gap script's own log: a corrupt line is named below and set aside
        prog = programs.find(rec[Col.benchmark], rec[Col.language])
        if prog is None:
            continue
        v = runner.value(prog, rec)
        p = {**rec[Col.params], "cores": rec[Col.cores]}
        rows.append(
            {
                "benchmark": prog.benchmark,
                "side": ORIGINAL if runner.flags_of(rec) == programs.AUTHORS else ORIGINAL_OURS,
                "language": prog.language,
                **{k: p.get(k) for k in KEYS[prog.benchmark]},
                "trial": int(rec[Col.trial]),
                "value": np.nan if v is None else v,
                "printed": v is not None,
            }
        )
    if bad:
        print(
            f"gap: {path.name}: line(s) {', '.join(map(str, bad))} not valid JSON, left out of the table",
            file=sys.stderr,
        )
    return pd.DataFrame(rows, columns=cols)


def paper_value(benchmark: str, language: str, cfg: dict) -> float:
    """The paper's value at a configuration (data/reference/), nan where its sheets have none."""
    if benchmark == "throughput":
        d = reference.fig5_median()
        d = d[(d[Col.cores] == cfg[Col.cores]) & (d[Col.pairs] == cfg[Col.pairs])]
        col = "msgs_per_min"
    elif benchmark == "pingping":
        d = reference.fig3()
        d = d[(d[Col.message_bytes] == cfg[Col.message_bytes]) & (d[Col.repetitions] == cfg[Col.repetitions])]
        col = "time_s"
    else:
        d = reference.fig4b()
        if not (d[Col.processes] == cfg[Col.processes]).any():
            d = reference.fig4a()[0]
        d = d[d[Col.processes] == cfg[Col.processes]]
        col = "time_s"
    d = d[d[Col.language] == language]
    return float(d[col].iloc[0]) if len(d) else float("nan")


def _paired(S: pd.DataFrame, num: str, den: str) -> stats.RatioCI:
    a, b = (S[(S["side"] == s) & S["value"].notna()][["trial", "value"]] for s in (num, den))
    got = paired.pairs_by_round(a, b)
    if isinstance(got, str):
        nan = float("nan")
        return stats.RatioCI(0, 0, nan, nan, nan, 0.0, paired.METHOD)
    return paired.paired_ratio_ci(*got, confidence=stats.CONFIDENCE)


def _to_paper(S: pd.DataFrame, side: str, paper_value_: float) -> stats.RatioCI:
    m = stats.median_ci(S.loc[S["side"] == side, "value"].dropna())
    pv = paper_value_
    return stats.RatioCI(m.n, 1, m.median / pv, m.lo / pv, m.hi / pv, m.level, "median")


def _row(b: str, lang: str, cfg: dict, factor: str, ci: stats.RatioCI, what: str) -> dict:
    return {
        "benchmark": b,
        "language": lang,
        "config": config_text(b, cfg),
        "point": point(b, cfg),
        "factor": factor,
        "ratio": ci.ratio,
        "lo": ci.lo,
        "hi": ci.hi,
        "level": ci.level,
        "n_rounds": ci.n_num,
        "what": what,
    }


def _program_rows(prog: programs.Program, cfg: dict, g: pd.DataFrame) -> list[dict]:
    """The factors of one original at one configuration (g: that configuration's sides)."""
    b, port, today = prog.benchmark, prog.language, prog.today
    config = cfg
    mine = g["side"].isin(ORIGINALS) & (g[Col.language] == port)
    g = pd.concat([g[~g["side"].isin(ORIGINALS)], g[mine]])
    orig, ours = (g[g["side"] == s] for s in ORIGINALS)
    TODAY, FAIR, PAPER = f"{today}:fair", f"{port}:fair", f"{port}:paper"
    pv = paper_value(b, today, cfg)
    rows = [_row(b, today, config, "total", _to_paper(g, TODAY, pv), "ours today, fair / the paper's value")]
    if today != port:
        rows.append(_row(b, today, config, "release", _paired(g, TODAY, FAIR), f"ours fair: {today} / {port}"))
    rows.append(_row(b, today, config, "quirks", _paired(g, FAIR, PAPER), f"ours on {port}: fair / paper variant"))
    if ours.empty:  # the original as the authors ran it only (every sweep before the flags were a choice)
        what = f"ours paper on {port} / the original"
        rows.append(_row(b, today, config, "program", _paired(g, PAPER, ORIGINAL), what))
    else:
        rows += [
            _row(
                b,
                today,
                config,
                "program",
                _paired(g, PAPER, ORIGINAL_OURS),
                f"ours paper on {port} / the original with our JVM flags",
            ),
            _row(
                b,
                today,
                config,
                JVM_FLAGS,
                _paired(g, ORIGINAL_OURS, ORIGINAL),
                "the original: with our JVM flags (the harness's -Xms, -Xmx, -Xss) / with the JVM's defaults, as "
                f"the authors ran it; {int((~ours['printed']).sum())} run(s) with our flags printed nothing",
            ),
        ]
    silent = int((~orig["printed"]).sum())
    what = (
        f"the original here / the paper's value; {silent} run(s) of the original printed nothing"
        if ours.empty
        else f"the original here, as the authors ran it / the paper's value; {silent} of its run(s) printed nothing"
    )
    rows.append(_row(b, today, config, NOT_ATTRIBUTED, _to_paper(g, ORIGINAL, pv), what))
    logs = [math.log(r[Col.ratio]) for r in rows if r[Col.factor] in PRODUCT and r[Col.ratio] > 0]
    wanted = sum(r[Col.factor] in PRODUCT for r in rows)
    prod = math.exp(sum(logs)) if logs and len(logs) == wanted else float("nan")
    nan = float("nan")
    rows.append(
        _row(b, today, config, "product", stats.RatioCI(0, 0, prod, nan, nan, 0.0), "the factors above multiplied")
    )
    for step in audit_steps.steps(b, port)[2:]:  # after fair, paper
        rows.append(
            _row(
                b,
                today,
                config,
                f"quirk:{step.name}",
                _paired(g, FAIR, f"{port}:{step.name}"),
                f"fair / {step.name} alone",
            )
        )
    return rows


def attribution(S: pd.DataFrame) -> pd.DataFrame:
    """The attribution table (gap_tables.COLUMNS) of every original, and every EXTRA pair,
    whose sides the sweep ran, at each configuration it ran."""
    out: list[dict] = []
    for prog in programs.PROGRAMS:
        mine = S[(S[Col.benchmark] == prog.benchmark) & S[Col.language].isin({prog.language, prog.today})]
        if not (mine[Col.language] == prog.language).any():
            continue
        keys = list(KEYS[prog.benchmark])
        for kv, g in mine.groupby(keys):
            out += _program_rows(prog, dict(zip(keys, _ints(kv))), g)
    for b, today, factor, num, den, what in EXTRA:
        mine = S[(S[Col.benchmark] == b) & S["side"].isin({num, den})]
        keys = list(KEYS[b])
        for kv, g in mine.groupby(keys):
            out.append(_row(b, today, dict(zip(keys, _ints(kv))), factor, _paired(g, num, den), what))
    return pd.DataFrame(out, columns=COLUMNS)


def _ints(kv) -> list[int]:
    return [int(x) for x in (kv if isinstance(kv, tuple) else (kv,))]


def write(sweep_dir, processed_root=None) -> Path:
    """data/processed/<sweep id>/attribution.csv (or under processed_root) from the sweep's
    raw folder."""
    sweep_dir = Path(sweep_dir)
    table = attribution(sides(sweep_dir))
    folder = (Path(processed_root) if processed_root is not None else paths.processed_dir()) / sweep_dir.name
    folder.mkdir(parents=True, exist_ok=True)
    out = folder / FILE_NAME
    table.to_csv(out, index=False, float_format="%.6g")
    return out
