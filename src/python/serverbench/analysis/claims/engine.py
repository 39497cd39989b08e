"""The claims engine: one evaluator for every claim of the protocol (docs/protocol.md).
(Kept whole past ~350 lines: a claim's types and the one path that judges it are read together.)

A claim's words (sentence, source, deciding comparisons, yes region) live in
spec/protocol.json; its encoding is a `Claim` entry here (id, the data it needs, the
function that makes its deciding comparisons), declared at module level by its benchmark's
claims module and collected by analysis.reading.registry.load(); `check_all(P)` evaluates
every declared claim on a sweep's processed tables:

* supported     every deciding comparison is "yes" (its 90 % interval inside the yes region);
* contradicted  at least one is "no" (its interval inside the no region) after Holm's
  correction over the claim's comparisons (familywise.py);
* inconclusive  otherwise, with why (e.g. "too few rounds (4 pairs reach at most 87.5 %)");
* not testable on this machine   the sweep lacks what the claim needs, named;
* error         the check raised: its message, shown as such (run_all.sh exits non-zero).

Each verdict is also computed with the margin's log halved and doubled (the sensitivity
columns), and carries the protocol's version.

How a sweep is judged is one frozen `Options` value, passed down explicitly (Data.options):
the benchmarks' options (catalog: spawn's spawn_metric), whether the values are a source's
one per point, and the margin's exponent. A claim asks `data.region(cid)` for its regions,
resolved with those options.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims import regime, summaries
from serverbench.analysis.claims.options import Options
from serverbench.analysis.claims.results import (  # noqa: F401  (re-exported: claims read them here)
    CONTRADICTED,
    ERROR,
    EVIDENCE_ONLY,
    INCONCLUSIVE,
    NO,
    NOT_TESTABLE,
    SUPPORTED,
    UNCLEAR,
    VERDICTS,
    YES,
)
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS, Processed
from serverbench.analysis.statistics import stats
from serverbench.rawdata.columns import Col


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
    # (NO | UNCLEAR, interval) at another two-sided level, for Holm's correction (familywise.py)
    rejudge: Callable[[float], tuple[str, Any]] | None = field(default=None, repr=False)

    def row(self, claim_id: str) -> dict:
        c = self.ci
        nums = {} if c is None else {"ratio": c.ratio, "ci_lo": c.lo, "ci_hi": c.hi, "ci_level": round(c.level, 4)}
        nums |= {} if c is None else {"rounds": c.n_num}
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
    options: Options

    def table(self, table: str, metric: str) -> pd.DataFrame:
        return self.P.values(table, metric)

    def region(self, cid: str, key: str = "yes") -> protocol.Region:
        """The claim's region `key`, resolved with this evaluation's options."""
        return self.options.region(cid, key)


@dataclass(frozen=True)
class Claim(registry.Entry):
    """A claim's encoding; its words are the protocol's (spec/protocol.json, by id). A
    claims module declares it at module level (alone or in a tuple) for the registry."""

    id: str
    needs: Needs
    compare: Callable[[Data], list[Comparison]]  # the comparisons that decide it
    summarize: Callable[[list[Comparison]], str] | None = None  # the "numbers" column
    scope: Callable[[Data], str] | None = None  # what this sweep could test
    order: float | None = None  # position in the table (default: from the id)
    short: str | None = None  # a few words that name it beside its id, where its sentence is too long (the abstract)

    @property
    def sentence(self) -> str:
        return protocol.claim(self.id)["sentence"]

    @property
    def source(self) -> str:
        return protocol.claim(self.id)[Col.source]

    @property
    def definition(self) -> str:
        c = protocol.claim(self.id)
        # a yes by a rule of its own (IM's 'limit', 'zero') has no ratio region: its deciding text says it
        keys = [k for k in c if k.startswith("yes") and not (isinstance(c[k], dict) and "rule" in c[k])]
        regions = "; ".join(protocol.region(self.id, k).text() for k in keys)
        return f"{c['quantity']}. Deciding: {c['deciding']}." + (f" Regions: {regions}." if regions else "")

    def registry_keys(self) -> tuple[tuple[str, str], ...]:
        return (("claims", self.id),)


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
    regime_kind: str = ""  # regime.AS_SOURCE | regime.REDUCED | "" (no source regime / no runs)
    regime: str = ""  # the regime tested, in words
    comparisons: list = field(default_factory=list, repr=False)  # the Comparisons behind evidence
    sensitivity: dict = field(default_factory=dict)  # margin exponent -> verdict
    protocol: int = field(default_factory=protocol.version)  # the version in force when it was judged

    def row(self) -> dict:
        return {
            "id": self.id,
            "claim": self.claim,
            "source": self.source,
            "verdict": self.verdict,
            **{f"verdict_margin_x{e:g}": v for e, v in self.sensitivity.items()},
            "why": self.why,
            "numbers": self.summary,
            "scope": self.scope,
            "source_regime": regime.source_text(self.id),
            "regime_kind": self.regime_kind,
            "regime": self.regime,
            "protocol": self.protocol,
            "definition": self.definition,
        }


def _order(c: Claim) -> tuple:
    """The protocol's order (spec/protocol.json: the paper's claims first, then the
    write-ups' and the case study's); a claim not in it after them: the paper's claims (ids
    C...) first, by number, then other modules' claims grouped by their id prefix, by number."""
    known = protocol.claim_ids()
    if c.id in known:
        return ((-1, ""), float(known.index(c.id)), c.id)
    prefix = c.id.rstrip("0123456789ab")
    group = (0, "") if prefix == "C" else (1, prefix)
    if c.order is not None:
        return (group, c.order, c.id)
    digits = "".join(ch for ch in c.id if ch.isdigit())
    return (group, float(digits) if digits else 1e9, c.id)


def all_claims() -> list[Claim]:
    return sorted(registry.load().claims.values(), key=_order)


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


def deciding(d: pd.DataFrame) -> pd.DataFrame:
    """The rows of deciding configurations: those the sweep gave more rounds than a
    figure-only point gets (protocol design; quick: 8 against 3). A claim is judged only
    where its design put rounds, never on a figure's points."""
    if d.empty or Col.trial not in d.columns:
        return d
    keys = [c for c in d.columns if c not in ("trial", "value")]
    n = d.groupby(keys, dropna=False)[Col.trial].transform("nunique")
    return d[n > protocol.rounds_figure_only()]


def _missing(needs: Needs, d: pd.DataFrame) -> str | None:
    have = set(d[Col.language].unique()) if not d.empty else set()
    miss = [lang for lang in needs.languages if lang not in have]
    if needs.any_of and not have & set(needs.any_of):
        miss.append(" or ".join(label(x) for x in needs.any_of))
    if miss:
        return f"no ok {needs.table} runs at a deciding configuration for {', '.join(label(m) for m in miss)}"
    return None


def _judge(claim: Claim, P: Any, options: Options) -> Verdict:
    base: dict[str, Any] = dict(id=claim.id, claim=claim.sentence, source=claim.source, definition=claim.definition)
    base[Col.regime_kind], base[Col.regime] = regime.tested(claim.id, P)
    metric = claim.needs.metric.format(**dict(options.chosen))
    d = P.values(claim.needs.table, metric)
    if not options.point_values:
        d = deciding(d)
    miss = _missing(claim.needs, d)
    if miss:
        return Verdict(**base, verdict=NOT_TESTABLE, summary=miss, why=miss)
    data = Data(P, d, metric, options)
    scope = claim.scope(data) if claim.scope else ""
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
    text = (claim.summarize or summaries.default_summary)(comps)
    ev = pd.DataFrame([c.row(claim.id) for c in comps])
    why = summaries.why_unclear(comps) if verdict == INCONCLUSIVE else ""
    return Verdict(**base, verdict=verdict, summary=text, why=why, scope=scope, evidence=ev, comparisons=comps)


def evaluate(claim: Claim, P: Any, options: Options | Mapping[str, Any] | None = None) -> Verdict:
    """One claim on one sweep, with its sensitivity verdicts. Never raises: a failing check
    is the verdict `error`. P is a Processed, or anything with its interface (values(),
    info, spawn_max_limits, runs), e.g. a view of one variant of a sweep. options: an
    Options, or a mapping of Options.of's arguments (e.g. {"spawn_metric": ...}). A sweep is
    judged by the protocol version in force when it started; the sources' numbers (point
    values) by the newest."""
    opts = Options.coerce(options)  # a bad option is the caller's error, not the claim's
    version = judged_by(P, opts)
    if not in_protocol(claim.id, version):
        why = f"{claim.id} is not in protocol {version}, which judges this sweep (it came with a later version)"
        return Verdict(claim.id, claim.sentence, claim.source, "", NOT_TESTABLE, why, why, protocol=version)
    with protocol.in_force(version):
        return _evaluate(claim, P, opts)


def judged_by(P: Any, opts: Options) -> int:
    """The protocol version that judges P: the one in force when its first run started; the
    newest for a source's numbers (point values); the one the options name, if they do."""
    if opts.version is not None:
        return int(opts.version)
    if opts.point_values:
        return protocol.newest()
    return protocol.version_for((getattr(P, "info", None) or {}).get(Col.first_started_utc))


def in_protocol(claim_id: str, version: int) -> bool:
    """Whether the claim is registered in that protocol version (a later version may add
    claims: IM1-IM5 came with protocol 3, so a sweep judged by an earlier one has none)."""
    with protocol.in_force(version):
        try:
            protocol.claim(claim_id)
        except KeyError:
            return False
        return True


def _evaluate(claim: Claim, P: Any, opts: Options) -> Verdict:
    try:
        v = _judge(claim, P, opts)
        for e in protocol.sensitivity_exponents():
            v.sensitivity[e] = _judge(claim, P, opts.scaled(e)).verdict
        return v
    except Exception as e:  # a bug in one check must not hide the others; it is shown as an error
        msg = f"{type(e).__name__}: {e}"
        return Verdict(
            id=claim.id,
            claim=protocol.claim(claim.id).get("sentence", ""),
            source="",
            definition="",
            verdict=ERROR,
            summary=f"the check failed: {msg}",
            why=msg,
        )


def check_all(
    P: Any, options: Options | None = None, *, ids=None, point_values: bool = False, **chosen: Any
) -> list[Verdict]:
    """Every registered claim (those in ids, when given) that the protocol judging the sweep
    has, judged with `options`, or with Options.of(point_values, **chosen): the benchmarks'
    options by name (spawn_metric=...)."""
    if options is not None and not isinstance(options, Options):
        raise TypeError(f"options must be an engine.Options, not {options!r}: give a benchmark's option by name")
    opts = options or Options.of(point_values=point_values, **chosen)
    return [evaluate(c, P, opts) for c in claims_for(P, opts) if ids is None or c.id in ids]


def claims_for(P: Any, options: Options | None = None) -> list[Claim]:
    """The registered claims that the protocol judging P has (a claim a later version added
    is left out of an older sweep's table, not shown as an error)."""
    version = judged_by(P, Options.coerce(options))
    return [c for c in all_claims() if in_protocol(c.id, version)]


def check(P: Processed, claim_id: str, options: Options | None = None, **chosen: Any) -> Verdict:
    """One registered claim, by id, on a sweep."""
    by_id = {c.id: c for c in all_claims()}
    if claim_id not in by_id:
        raise KeyError(f"no claim {claim_id!r}; registered: {', '.join(by_id)}")
    return evaluate(by_id[claim_id], P, options or Options.of(**chosen))
