"""Report section "Language or original code?" (docs/spec.md "The paper variant")."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.auditing import audit
from serverbench.analysis.reading import registry
from serverbench.rawdata.columns import Col


@registry.report_section("Language or original code?", order=90)
def language_or_code(P) -> list:
    if P.info.get(Col.profile) not in ("audit", None):
        # the audit's tables and figure take pages; a report of another sweep names its report
        return [
            "Which differences come from the language and which from the original programs' code "
            "(the paper variant against fair, quirk by quirk) is the `audit` profile's question: its "
            "report is rendered from the newest committed audit sweep into `paper/audit/report.html` "
            "(`paper/README.md` lists every report with its sweep and machine)."
        ]
    runs = audit.audit_runs(P)
    if runs.empty or not (runs[Col.step] == "paper").any():
        return []
    R = audit.ratios(runs)
    D = audit.decomposition(R)
    h = P.info.get(Col.host, {}) or {}
    machine = ", ".join(str(x) for x in (h.get(Col.cpu_model), f"{h.get(Col.logical_cpus)} logical CPUs") if x)
    m = (P.info.get(Col.manifest) or {}).get(Col.machine)
    fp = m.get(Col.fingerprint) if isinstance(m, dict) else None
    blocks: list = [
        f"From sweep {P.info.get(Col.sweep_id)} (profile {P.info.get(Col.profile)}) on {machine}"
        + (f", machine fingerprint {fp}" if fp else "")
        + ": the audit's ratios hold for that machine and sweep.",
        "Every benchmark and language was run in the fair variant, in the paper variant (the "
        "original programs' quirks, each a knob in spec/cli.json) and with each quirk alone. "
        "Ratios are paper (or one quirk) over fair of the value the program reports — what the "
        "original would have printed for paper — as Hodges-Lehmann ratios with intervals at the "
        "confidence the trial counts reach. Times: above 1 = the original reported slower; "
        "throughput: above 1 = the original reported more messages per minute. Where the original "
        "would have printed nothing in every run of a step (Akka's exit race, lost), there is no "
        "reported value to compare: that row gives the ratio of what the runs measured, and says so.",
        registry.FigureRef("audit"),
    ]
    if not D.empty:
        t = D.assign(
            paper_fair=[
                f"{r:.3g} [{lo:.3g}, {hi:.3g}] @{lev * 100:.0f}%" + ("" if basis == "reported" else f" ({basis})")
                for r, lo, hi, lev, basis in zip(
                    D[Col.paper_ratio], D[Col.paper_lo], D[Col.paper_hi], D[Col.paper_level], D[Col.paper_basis]
                )
            ]
        )
        cols = ["benchmark", "language", "paper_fair", "dominant_quirk", "dominant_ratio", "interaction", "not_printed"]
        blocks += [
            "Paper/fair per benchmark and language, and the quirk that accounts for most of it:",
            t[[c for c in cols if c in t]].round(3),
        ]
    C = audit.claims_side_by_side(P, runs)
    if not C.empty:
        blocks += [
            "Every claim under the fair and the paper variant (the paper column judges the values the "
            "original programs would have printed):",
            C[["id", "claim", "fair", "paper", "quirks_that_flip"]],
            "\n".join(f"* {audit.sentence(r)}" for _, r in C.iterrows()),
        ]
    return blocks


def tables(P) -> dict[str, pd.DataFrame]:
    """The audit's processed tables (written beside the sweep's others by the notebook)."""
    runs = audit.audit_runs(P)
    R = audit.ratios(runs)
    return {
        "audit_ratios": R,
        "audit_decomposition": audit.decomposition(R),
        "audit_claims": audit.claims_side_by_side(P, runs),
    }
