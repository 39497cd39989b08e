"""The claims engine: one evaluator for every claim entry (docs/statistics.md, "Claims").

A claim is a `Claim` entry (id, the paper's sentence and where it is, the data it needs,
the comparison that decides it, a definition a reader can check). `register(claim)` adds
it; `check_all(P)` evaluates every registered claim on a sweep's processed tables and
turns the comparisons' results into a verdict:

* supported     every comparison came out "yes": its interval inside the claim's yes region
  at >= 95 % achieved confidence (90 % for "inside [lo, hi]": two one-sided tests);
* contradicted  at least one came out "no" (its interval in the no region, a gap beyond the
  yes region: claims.decision) at >= 95 % achieved confidence, after Holm's correction over
  the claim's comparisons (familywise.py);
* inconclusive  otherwise, with why (e.g. "too few trials (3 vs 3 reaches at most 90 %)");
* not testable on this machine   the sweep lacks what the claim needs (languages,
  core counts, configurations), with what is missing;
* error         the check raised: its message, shown as such (run_all.sh exits non-zero).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from serverbench.analysis import paired, stats
from serverbench.analysis.claims import decision, regime
from serverbench.analysis.claims.results import (  # noqa: F401  (re-exported: claims read them here)
    CONTRADICTED,
    ERROR,
    EVIDENCE_ONLY,
    INCONCLUSIVE,
    MIN_CONFIDENCE,
    NO,
    NOT_TESTABLE,
    SUPPORTED,
    UNCLEAR,
    VERDICTS,
    YES,
)
from serverbench.analysis.process import LANGUAGE_LABELS, Processed

SPAWN_METRIC = "{spawn_metric}"  # Needs.metric placeholder: the spawn metric chosen for the sweep


class NotTestable(Exception):
    """Raised by a comparison when the sweep lacks what it needs (the message says what)."""


def label(lang: str) -> str:
    return LANGUAGE_LABELS.get(lang, lang)


@dataclass(frozen=True)
class Needs:
    """The processed data a claim reads: one table and metric, the languages that must
    all have ok runs in it (`languages`) and those of which at least one must (`any_of`)."""

    table: str
    metric: str
    languages: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()


@dataclass
class Comparison:
    """One comparison behind a verdict (a row of claims_evidence.csv)."""

    label: str  # what is compared, e.g. "Go/Scala/Akka time"
    config: str  # where, e.g. "message_bytes=5000, repetitions=100000"
    expected: str  # e.g. "< 1"
    result: str  # YES / NO / UNCLEAR
    ci: stats.RatioCI | None = None
    why: str = ""  # for UNCLEAR: why it does not decide
    extra: dict[str, Any] = field(default_factory=dict)
    # (result, why, ci) at another confidence, for Holm's correction (familywise.py); None: fixed
    rejudge: Callable[[float, float], tuple[str, str, Any]] | None = field(default=None, repr=False)
    # the trials it read, as (row label of the processed runs, language): where the second
    # stage would add rounds (analysis/second_stage.py); factories pass it as extra["_sources"]
    sources: tuple = field(default=(), repr=False)

    def __post_init__(self) -> None:
        if "_sources" in self.extra:
            self.extra = dict(self.extra)
            self.sources = tuple(self.sources) + tuple(self.extra.pop("_sources"))

    def row(self, claim_id: str) -> dict:
        c = self.ci
        nums = (
            {
                "ratio": c.ratio,
                "ci_lo": c.lo,
                "ci_hi": c.hi,
                "ci_level": round(c.level, 4),
                "n_num": c.n_num,
                "n_den": c.n_den,
                "strata": c.strata,
                "method": paired.kind(c),
            }
            if c is not None
            else {}
        )
        return {
            "claim": claim_id,
            "comparison": self.label,
            "config": self.config,
            **nums,
            **self.extra,
            "expected": self.expected,
            "result": self.result,
            "why": self.why,
        }


@dataclass
class Data:
    """What a claim's comparison function gets: the processed sweep, the values its Needs
    name (language, configuration keys, value), and the options of this evaluation."""

    P: Processed
    values: pd.DataFrame
    metric: str
    options: dict[str, Any]

    def table(self, table: str, metric: str) -> pd.DataFrame:
        return self.P.values(table, metric)


@dataclass(frozen=True)
class Claim:
    id: str
    sentence: str  # the paper's sentence (or a faithful paraphrase, marked so)
    source: str  # where in the paper, e.g. "Sec. 4.1, p. 4"
    needs: Needs
    compare: Callable[[Data], list[Comparison]]  # the comparisons that decide it
    definition: str  # exactly what is computed and what decides, for a reader to check
    summarize: Callable[[list[Comparison]], str] | None = None  # the "numbers" column
    scope: Callable[[Data], str] | None = None  # what this sweep could test
    order: float | None = None  # position in the table (default: from the id)


@dataclass
class Verdict:
    id: str
    claim: str
    source: str
    definition: str
    verdict: str
    summary: str
    why: str = ""
    scope: str = ""
    evidence: pd.DataFrame = field(default_factory=pd.DataFrame)
    spread_log: float | None = None  # the between-sweep sd its decision regions were set for
    regime_kind: str = ""  # regime.AS_SOURCE | regime.REDUCED | "" (no source regime / no runs)
    regime: str = ""  # the regime tested, in words
    comparisons: list = field(default_factory=list, repr=False)  # the Comparisons behind evidence

    def row(self) -> dict:
        return {
            "id": self.id,
            "claim": self.claim,
            "source": self.source,
            "verdict": self.verdict,
            "why": self.why,
            "numbers": self.summary,
            "scope": self.scope,
            "source_regime": regime.source_text(self.id),
            "regime_kind": self.regime_kind,
            "regime": self.regime,
            "spread_log": self.spread_log,
            "definition": self.definition,
        }


_CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add (or replace, by id) a claim. Call it at import time of a provider module
    (serverbench.analysis.*_claims, see registry.py)."""
    _CLAIMS[claim.id] = claim
    return claim


def _order(c: Claim) -> tuple:
    """The paper's claims (ids C...) first, by number; then other modules' claims grouped
    by their id prefix (e.g. T... for TCP, E... for echo), by number."""
    prefix = c.id.rstrip("0123456789ab")
    group = (0, "") if prefix == "C" else (1, prefix)
    if c.order is not None:
        return (group, c.order, c.id)
    digits = "".join(ch for ch in c.id if ch.isdigit())
    return (group, float(digits) if digits else 1e9, c.id)


def all_claims() -> list[Claim]:
    from serverbench.analysis import registry

    registry.load()
    return sorted(_CLAIMS.values(), key=_order)


def combine(results: list[str]) -> str:
    """Per-comparison results -> verdict: any 'no' contradicts, all 'yes' supports
    (EVIDENCE_ONLY rows do not count)."""
    results = [r for r in results if r in (YES, NO, UNCLEAR)]
    if not results:
        return NOT_TESTABLE
    if NO in results:
        return CONTRADICTED
    if all(r == YES for r in results):
        return SUPPORTED
    return INCONCLUSIVE


def _missing(needs: Needs, d: pd.DataFrame) -> str | None:
    have = set(d["language"].unique()) if not d.empty else set()
    miss = [lang for lang in needs.languages if lang not in have]
    if needs.any_of and not have & set(needs.any_of):
        miss.append(" or ".join(label(x) for x in needs.any_of))
    if miss:
        return f"no ok {needs.table} runs for {', '.join(label(m) for m in miss)} in this sweep"
    return None


def _why(comparisons: list[Comparison]) -> str:
    seen: list[str] = []
    for c in comparisons:
        if c.result == UNCLEAR and c.why and c.why not in seen:
            seen.append(c.why)
    return "; ".join(seen[:3]) + (f"; ... ({len(seen) - 3} more)" if len(seen) > 3 else "")


def default_summary(comparisons: list[Comparison], limit: int = 6) -> str:
    """The comparisons against the claim first, then the undecided, then the rest."""
    rank = {NO: 0, UNCLEAR: 1, YES: 2}
    comparisons = sorted(comparisons, key=lambda c: rank.get(c.result, 3))
    parts = [
        f"{c.label} at {c.config}: {fmt_ci(c.ci)}" if c.ci is not None else f"{c.label} at {c.config}"
        for c in comparisons[:limit]
    ]
    counts = ", ".join(
        f"{sum(c.result == k for c in comparisons)} {k}"
        for k in (YES, NO, UNCLEAR)
        if any(c.result == k for c in comparisons)
    )
    more = f" ... ({len(comparisons)} comparisons: {counts})" if len(comparisons) > limit else f" ({counts})"
    return "; ".join(parts) + more


def fmt_ci(ci: stats.RatioCI | None) -> str:
    """'2.10 [1.82, 2.44] at 90 %'."""
    if ci is None or not pd.notna(ci.ratio):
        return "n/a"
    if not pd.notna(ci.lo):
        return f"{ci.ratio:.3g} (no interval)"
    return f"{ci.ratio:.3g} [{ci.lo:.3g}, {ci.hi:.3g}] at {ci.level:.0%}"


def evaluate(claim: Claim, P: Any, options: dict[str, Any] | None = None) -> Verdict:
    """One claim on one sweep. Never raises: a failing check is the verdict `error`.
    P is a Processed, or anything with its interface (values(), info, spawn_max_limits),
    e.g. a view of one variant of a sweep."""
    options = dict(options or {})
    base: dict[str, Any] = dict(id=claim.id, claim=claim.sentence, source=claim.source, definition=claim.definition)
    try:
        base["regime_kind"], base["regime"] = regime.tested(claim.id, P)
        metric = claim.needs.metric.format(**{"spawn_metric": options.get("spawn_metric", "all_ready_s")})
        d = P.values(claim.needs.table, metric)
        miss = _missing(claim.needs, d)
        if miss:
            return Verdict(**base, verdict=NOT_TESTABLE, summary=miss, why=miss)
        data = Data(P, d, metric, options)
        scope = claim.scope(data) if claim.scope else ""
        spread = decision.spread_for(claim.needs.table, options.get("spreads"))
        base["spread_log"] = round(spread, 4)
        with decision.using(spread):
            try:
                comps = claim.compare(data)
            except NotTestable as e:
                return Verdict(**base, verdict=NOT_TESTABLE, summary=str(e), why=str(e), scope=scope)
            from serverbench.analysis.claims.familywise import holm

            holm(comps)  # a "no" among several comparisons must survive Holm's correction
        verdict = combine([c.result for c in comps])
        if verdict == NOT_TESTABLE:
            why = "no comparison could be made on this sweep"
            return Verdict(**base, verdict=verdict, summary=why, why=why, scope=scope)
        summary = (claim.summarize or default_summary)(comps)
        ev = pd.DataFrame([c.row(claim.id) for c in comps])
        why = _why(comps) if verdict == INCONCLUSIVE else ""
        return Verdict(**base, verdict=verdict, summary=summary, why=why, scope=scope, evidence=ev, comparisons=comps)
    except Exception as e:  # a bug in one check must not hide the others; it is shown as an error
        msg = f"{type(e).__name__}: {e}"
        return Verdict(**base, verdict=ERROR, summary=f"the check failed: {msg}", why=msg)


def options_for(
    spawn_metric: str = "all_ready_s", spreads: dict[str, float] | None = None, P: Any = None
) -> dict[str, Any]:
    """An evaluation's options: the spawn metric and the between-sweep spreads that set the
    decision regions (default: the committed table's rows for the kind of machine sweep P
    ran on, claims.decision.load_spreads; none there, or no P: the default spread)."""
    if spreads is None:
        spreads = decision.load_spreads(machine=decision.machine_of(P))
    return {"spawn_metric": spawn_metric, "spreads": spreads}


def check_all(P: Any, spawn_metric: str = "all_ready_s", ids=None, spreads=None) -> list[Verdict]:
    opts = options_for(spawn_metric, spreads, P)
    return [evaluate(c, P, opts) for c in all_claims() if ids is None or c.id in ids]


def check(P: Processed, claim_id: str, spawn_metric: str = "all_ready_s") -> Verdict:
    """One registered claim, by id, on a sweep."""
    by_id = {c.id: c for c in all_claims()}
    if claim_id not in by_id:
        raise KeyError(f"no claim {claim_id!r}; registered: {', '.join(by_id)}")
    return evaluate(by_id[claim_id], P, options_for(spawn_metric, P=P))


def claims_table(verdicts: list[Verdict]) -> pd.DataFrame:
    return pd.DataFrame(
        [v.row() for v in verdicts],
        columns=[
            "id",
            "claim",
            "source",
            "verdict",
            "why",
            "numbers",
            "scope",
            "source_regime",
            "regime_kind",
            "regime",
            "spread_log",
            "definition",
        ],
    )


def evidence_table(verdicts: list[Verdict]) -> pd.DataFrame:
    frames = [v.evidence for v in verdicts if v.evidence is not None and not v.evidence.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def write_claims(P: Processed, out_dir=None, spawn_metric: str = "all_ready_s", spreads=None) -> dict:
    """claims.csv (one row per claim, its verdict) and claims_evidence.csv (every comparison)."""
    out = Path(out_dir) if out_dir else P.folder
    v = check_all(P, spawn_metric, spreads=spreads)
    paths = {"claims": out / "claims.csv", "claims_evidence": out / "claims_evidence.csv"}
    claims_table(v).to_csv(paths["claims"], index=False)
    evidence_table(v).to_csv(paths["claims_evidence"], index=False)
    return paths
