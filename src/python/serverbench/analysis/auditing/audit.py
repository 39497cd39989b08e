"""The audit (docs/spec.md "The paper variant"): does a conclusion come from the language or
from the original code?

From an audit sweep's raw log: per benchmark, language and configuration, the value each
run *reports* — fair: the fair metric; paper and mixed: what the original program would
have printed (``reported_*``) — and the ratio of every step (paper, or one knob alone) to
fair, as a Hodges-Lehmann ratio with its interval at the achieved confidence
(``stats.ratio_ci``). ``claims_side_by_side`` evaluates every registered claim once on the
fair runs and once on the paper runs' reported values.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from serverbench import catalog
from serverbench.analysis.reading import registry
from serverbench.analysis.statistics import stats
from serverbench.harness.planning import audit_steps
from serverbench.rawdata import records, sweepfiles
from serverbench.rawdata.columns import Col


def specs() -> dict[str, registry.AuditSpec]:
    """benchmark -> how the audit reads it (its package's TableSpec.audit), in table order."""
    return {t.benchmark: t.audit for t in registry.tables().values() if t.audit is not None and not t.search_steps}


def languages() -> list[str]:
    """The audited languages: the paper's three (their paper variant is the audit's
    subject), in the spec's order."""
    return [x.id for x in catalog.languages() if x.paper]


def raw_dir(P_or_path) -> Path:
    """The raw sweep folder of a Processed (data/raw/<sweep_id> beside data/processed)."""
    if isinstance(P_or_path, (str, Path)):
        return Path(P_or_path)
    sid = P_or_path.info.get(Col.sweep_id)
    return Path(P_or_path.folder).resolve().parents[1] / "raw" / sid


def audit_runs(P) -> pd.DataFrame:
    """The audit runs for a report on P: P's own sweep when it has paper-variant runs, else
    the newest audit sweep under data/raw/ (so that rendering the quick sweep still shows
    the committed audit). Empty when there is none."""
    try:
        runs = load_runs(raw_dir(P))
    except (FileNotFoundError, KeyError, TypeError):
        runs = pd.DataFrame()
    if not runs.empty and (runs[Col.step] == "paper").any():
        return runs
    try:
        root = raw_dir(P).parent
    except (KeyError, TypeError):
        return pd.DataFrame()
    for d in sorted(root.glob("audit-*"), reverse=True):
        runs = load_runs(d)
        if not runs.empty and (runs[Col.step] == "paper").any():
            return runs
    return pd.DataFrame()


def load_runs(sweep_dir) -> pd.DataFrame:
    """One row per ok, non-warm-up run of the audited benchmarks (their TableSpec.audit).

    A configuration's trial run twice (an ok run flagged `interfered` and its re-run, or a
    resumed sweep's repeat) counts once: the later ok attempt, the one the processed tables
    select (reading.process.runs_table; docs/protocol.md "Re-runs on interference"). Both
    copies would leave a round twice, which a paired ratio cannot pair."""
    audited = specs()
    rows = []
    # Each raw log read as the processed tables read it: a corrupt or schema-violating line
    # raises records.RawLogError naming its file and line, instead of leaving a run out
    # unseen. Only the harness's logs (sweep_logs): a gap sweep's original.jsonl is not one.
    for r in (rec for f in sweepfiles.sweep_logs(sweep_dir) for rec in records.parse_raw_file(f)):
        b = r.get(Col.benchmark)
        if b not in audited or r.get(Col.warmup) or r.get(Col.status) != "ok" or not r.get(Col.metrics):
            continue
        m, p = r[Col.metrics], r.get(Col.params) or {}
        fair_m, rep_m = audited[b].fair_metric, audited[b].reported_metric
        variant = r.get(Col.variant, "fair")
        knobs = r.get(Col.knobs) or {k: v for k, v in p.items() if v != "variant"}
        value = m.get(fair_m) if variant == "fair" else m.get(rep_m)
        rows.append(
            {
                "benchmark": b,
                "language": r[Col.language],
                "variant": variant,
                "step": audit_steps.step_of(variant, knobs, b, r[Col.language]),
                **{k: (r.get(Col.cores) if k == "cores" else p.get(k)) for k in audited[b].config},
                "value": value if value is not None else np.nan,
                "true_value": m.get(fair_m),
                "printed": m.get(Col.reported_printed, True) if variant != "fair" else True,
                "trial": r.get(Col.trial),
                "sweep_id": r.get(Col.sweep_id),
                "_key": (r.get(Col.sweep_id), r.get(Col.config_id), r.get(Col.trial)),
                "_started": str(r.get(Col.started_utc) or ""),
            }
        )
    if not rows:
        return pd.DataFrame()
    df = pd.DataFrame(rows)
    df["_order"] = np.arange(len(df))
    df = df.sort_values(["_started", "_order"], kind="stable").drop_duplicates("_key", keep="last")
    return df.sort_values("_order").drop(columns=["_key", "_started", "_order"]).reset_index(drop=True)


def ratios(runs: pd.DataFrame) -> pd.DataFrame:
    """Every step / fair per benchmark, language and configuration, with its interval."""
    out = []
    if runs.empty:
        return pd.DataFrame()
    for b, keys in ((b, a.config) for b, a in specs().items()):
        d = runs[runs[Col.benchmark] == b]
        if d.empty:
            continue
        for kv, g in d.groupby(["language", *keys], dropna=False):
            fair = g[g[Col.step] == "fair"]["value"].dropna().to_numpy(float)
            cfg = dict(zip(["language", *keys], kv))
            for step, s in g.groupby("step"):
                if step == "fair":
                    continue
                ci, basis = _step_ratio(s, fair)
                out.append(
                    {
                        "benchmark": b,
                        **cfg,
                        "step": step,
                        "ratio": ci.ratio,
                        "ci_lo": ci.lo,
                        "ci_hi": ci.hi,
                        "ci_level": ci.level,
                        "n_step": ci.n_num,
                        "n_fair": ci.n_den,
                        "not_printed": int((~s["printed"].astype(bool)).sum()),
                        "basis": basis,
                        "true_ratio": stats.ratio_ci(s["true_value"].dropna().to_numpy(float), fair).ratio,
                    }
                )
    return pd.DataFrame(out)


def _step_ratio(s: pd.DataFrame, fair: np.ndarray) -> tuple[stats.RatioCI, str]:
    """A step's ratio to fair and what it is of: the reported values ("reported"), or,
    when no run of the step would have printed anything (Akka's exit race lost in every
    run: the reported values are all null, and a ratio of none is nan), the values the
    step's runs measured all the same ("measured: printed nothing in n of n")."""
    reported = s["value"].dropna().to_numpy(float)
    if len(reported) or not len(s):
        return stats.ratio_ci(reported, fair), "reported"
    measured = s["true_value"].dropna().to_numpy(float)
    return stats.ratio_ci(measured, fair), f"measured: printed nothing in {len(s)} of {len(s)}"


def decomposition(R: pd.DataFrame) -> pd.DataFrame:
    """Per benchmark, language, configuration: paper/fair, each knob's own ratio, the
    interaction (paper / product of the single-knob ratios) and the dominant quirk."""
    rows = []
    if R.empty:
        return pd.DataFrame()
    for b, keys in ((b, a.config) for b, a in specs().items()):
        d = R[R[Col.benchmark] == b]
        if d.empty:
            continue
        for kv, g in d.groupby(["language", *keys], dropna=False):
            paper = g[g[Col.step] == "paper"]
            singles = g[(g[Col.step] != "paper") & g[Col.ratio].notna()]
            if paper.empty:
                continue
            pr = float(paper[Col.ratio].iloc[0])
            logs = {s: math.log(r) for s, r in zip(singles[Col.step], singles[Col.ratio]) if r > 0}
            dom = max(logs, key=lambda s: abs(logs[s])) if logs else None
            inter = math.exp(math.log(pr) - sum(logs.values())) if pr > 0 and not math.isnan(pr) else float("nan")
            rows.append(
                {
                    "benchmark": b,
                    **dict(zip(["language", *keys], kv)),
                    "paper_ratio": pr,
                    "paper_lo": float(paper[Col.ci_lo].iloc[0]),
                    "paper_hi": float(paper[Col.ci_hi].iloc[0]),
                    "paper_level": float(paper[Col.ci_level].iloc[0]),
                    "not_printed": int(paper[Col.not_printed].iloc[0]),
                    "paper_basis": paper["basis"].iloc[0] if "basis" in paper else "reported",
                    "dominant_quirk": dom,
                    "dominant_ratio": math.exp(logs[dom]) if dom else float("nan"),
                    "interaction": inter,
                }
            )
    return pd.DataFrame(rows)


# ---- claims under fair and under paper ------------------------------------------------


class _VariantView:
    """A Processed whose runs are one step's: fair as measured, or the paper runs' reported
    values put in the fair metric's column (labelled variant fair so the claims' groups
    line up)."""

    def __init__(self, P, runs: pd.DataFrame, step: str):
        self._P = P
        self.info = P.info
        self.spawn_max = getattr(P, "spawn_max", pd.DataFrame())
        self.spawn_max_limits = getattr(P, "spawn_max_limits", pd.DataFrame())
        self._d = runs[runs[Col.step] == step]

    def values(self, table: str, metric: str) -> pd.DataFrame:
        d = self._d[self._d[Col.benchmark] == table]
        spec = specs().get(table)
        if d.empty or spec is None or spec.fair_metric != metric:
            return pd.DataFrame(columns=["language", "variant", "value"])
        # trial stays: the claims pair two languages by round (trial k ran in round k)
        d = d.assign(variant="fair").drop(columns=["benchmark", "step", "true_value", "printed"])
        return d[d["value"].notna()].reset_index(drop=True)

    def __getattr__(self, name):
        return getattr(self._P, name)


def claims_side_by_side(P, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every registered claim's verdict on the fair runs and on the paper runs (reported
    values), and which single quirk, if any, flips the fair verdict on its own."""
    from serverbench.analysis.claims import engine  # the registry imports claims lazily

    runs = audit_runs(P) if runs is None else runs
    if runs.empty:
        return pd.DataFrame()
    steps = [s for s in runs[Col.step].unique() if s not in ("fair", "paper")]
    rows = []
    for claim in engine.claims_for(P):
        fair = engine.evaluate(claim, _VariantView(P, runs, "fair"))
        paper = engine.evaluate(claim, _VariantView(P, runs, "paper"))
        flips = []
        if fair.verdict != paper.verdict:
            for s in sorted(steps):
                v = engine.evaluate(claim, _VariantView(P, _with_fair_as(runs, s), s))
                if v.verdict == paper.verdict:
                    flips.append(s)
        rows.append(
            {
                "id": claim.id,
                "claim": claim.sentence,
                "fair": fair.verdict,
                "paper": paper.verdict,
                "fair_numbers": fair.summary,
                "paper_numbers": paper.summary,
                "quirks_that_flip": ", ".join(flips),
            }
        )
    return pd.DataFrame(rows)


def _with_fair_as(runs: pd.DataFrame, step: str) -> pd.DataFrame:
    """Runs where a benchmark and language without `step` use their fair runs for that step:
    a knob only one language has still changes a comparison between languages, and a knob
    of one benchmark (Erlang pingping's message shape) leaves that language's other
    benchmarks as they are (before, its throughput had no runs in the step, and the claims
    on throughput read "not testable", as the paper variant's exit race does)."""
    key = ["benchmark", "language"] if Col.benchmark in runs.columns else ["language"]
    have = set(map(tuple, runs.loc[runs[Col.step] == step, key].drop_duplicates().to_numpy()))
    fair = runs[runs[Col.step] == "fair"]
    missing = [tuple(k) not in have for k in fair[key].to_numpy()]
    extra = fair[missing].assign(step=step)
    return pd.concat([runs, extra], ignore_index=True)


def sentence(row) -> str:
    """One sentence per claim: which quirk changes the verdict (from the measured numbers)."""
    if row[Col.fair] == row[Col.paper]:
        return f"{row[Col.id]}: the same verdict under both variants ({row[Col.fair]}): the language, not the code."
    q = row[Col.quirks_that_flip]
    head = f"{row[Col.id]}: {row[Col.fair]} under fair, {row[Col.paper]} under paper;"
    if q:
        return f"{head} the quirk(s) {q} alone give the paper verdict."
    return f"{head} no single quirk does it alone (their combination does)."
