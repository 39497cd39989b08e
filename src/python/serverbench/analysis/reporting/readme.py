"""README's generated findings blocks (docsgen): the abstract, the then-and-now tables and
what the quick sweeps found, in the shared vocabulary (vocabulary.py), every claim with its
full text, the scope of each statement said (the paper's scale or the quick profile's
reduced one) and where the two scales disagree, with the reason's link.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis.claims import replication
from serverbench.analysis.reporting import abstract, paperscale, thenandnow, vocabulary
from serverbench.rawdata.columns import Col

DIMENSIONING = "docs/dimensioning.md"  # what the quick profile's reductions change, measured


def abstract_block(processed_dir: Path | None = None) -> str:
    return "**Abstract.** " + abstract.text(processed_dir)


def then_and_now_block(processed_dir: Path | None = None) -> str:
    return thenandnow.markdown(thenandnow.rows(processed_dir))


def _newest_why(processed_dir: Path | None) -> dict[str, str]:
    """{claim: why} of the newest quick sweep, to name a not-testable claim's reason."""
    sweeps = replication.sweeps("quick", processed_dir)
    if not sweeps:
        return {}
    c = pd.read_csv(sweeps[-1] / "claims.csv")
    return {str(i): (w if isinstance(w, str) else "") for i, w in zip(c[Col.id], c[Col.why])}


def _paper_scale(processed_dir: Path | None) -> dict[str, str]:
    """{claim: its verdict at the paper's scale} over every committed sweep of its pieces (the
    verdict that stands, as the report's paper-scale table gives it), in the vocabulary's words."""
    return {c.id: vocabulary.word(c.verdict) for c in paperscale.at_scale(processed_dir)}


def findings_block(rec: pd.DataFrame | None = None, processed_dir: Path | None = None) -> str:
    """What the quick sweeps found (replication.readme_findings: grouped by the verdict of
    the newest protocol's confirmation sweeps, every committed sweep accounted for), each
    not-testable claim with its reason, then the claims whose quick and paper-scale verdicts
    disagree, with the measured reason's link."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    why = _newest_why(root)
    committed = rec is None
    rec = replication.load("quick", processed_dir) if rec is None else rec
    text = replication.readme_findings(
        None if committed else rec, not_testable_reason=lambda cid: vocabulary.reason(why.get(cid))
    )
    return "\n".join([text, *_disagreements(rec, _paper_scale(root), root)])


def _disagreements(rec: pd.DataFrame, paper: dict[str, str], root: Path | None = None) -> list[str]:
    """The claims supported in some quick sweeps and contradicted at the paper's scale, or
    the reverse, each with the dimension sweep's numbers that show why where it has them: the
    scale changes what is compared (docs/dimensioning.md measures how)."""
    out = []
    opposite = {vocabulary.SUPPORTED: vocabulary.CONTRADICTED, vocabulary.CONTRADICTED: vocabulary.SUPPORTED}
    for cid, at_paper in paper.items():
        quick = rec.loc[rec[Col.id] == cid, "verdict"].map(vocabulary.word)
        other = opposite.get(at_paper)
        k = int((quick == other).sum()) if other else 0
        if k:
            why = _scale_numbers(cid, root)
            out.append(
                f"{cid}: {other} in {k} of {len(quick)} quick sweeps, {at_paper} at the paper's scale"
                + (f" ({why})" if why else "")
            )
    if not out:
        return []
    return [
        "",
        "Where the quick sweeps and the paper's scale disagree: "
        + "; ".join(out)
        + f". The quick profile's reductions change what is compared; [{DIMENSIONING}]({DIMENSIONING}) measures by "
        "how much.",
    ]


def _scale_numbers(cid: str, root: Path | None) -> str:
    """For a PingPing or spawn claim: each language's time per unit over Akka's at the quick
    profile's largest size and at the dimension sweep's largest (its dimension_scaling.csv),
    e.g. 'Erlang/Akka per message 0.69 at R = 100,000, 1.74 at R = 1,000,000'."""
    from serverbench.analysis.claims import engine as claims_engine
    from serverbench.analysis.reading.process import LANGUAGE_LABELS
    from serverbench.analysis.reporting import dimension
    from serverbench.analysis.reporting.cells import sig

    claim = next((c for c in claims_engine.all_claims() if c.id == cid), None)
    bench = getattr(getattr(claim, "needs", None), "table", None)
    units = {"pingping": ("per message", "R", "repetitions"), "spawn": ("per process", "N", "processes")}
    folder = dimension.latest(root)
    quick = replication.sweeps("quick", root)
    if bench not in units or folder is None or not quick:
        return ""
    unit, letter, key = units[bench]
    scale = pd.read_csv(folder / "dimension_scaling.csv")
    scale = scale[(scale[Col.benchmark] == bench) & (scale[Col.language] != dimension.BASELINE)]
    q = pd.read_csv(quick[-1] / "summary.csv")
    q = q[q[Col.table] == bench]
    if scale.empty or q.empty or key not in q:
        return ""
    small, large = int(q[key].max()), int(scale["size"].max())
    parts = []
    for lang, g in scale.groupby("language"):
        at = g.set_index("size")[Col.ratio_to_akka]
        if small in at.index and large in at.index and small != large:
            parts.append(
                f"{LANGUAGE_LABELS.get(lang, lang)}/Akka {unit} {sig(at[small], 2)} at {letter} = {small:,}, "
                f"{sig(at[large], 2)} at {letter} = {large:,}"
            )
    return "; ".join(parts) + (f", dimension sweep `{folder.name}`" if parts else "")
