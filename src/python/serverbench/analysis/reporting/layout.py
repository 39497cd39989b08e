"""The report's layout: its title and sections (the main report's and a sub-report's), the
opening paragraph, and the table of contents with the anchors nbconvert gives headings.
The main report (the `quick`, `paper` or `smoke` profile) opens with the paper-scale
sections; a sub-report (another profile) with its own subject, the registered sections
its profile is about (subjects())."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from urllib.parse import quote

from serverbench import plugins
from serverbench.rawdata.columns import Col

TITLE = "Reproducing Valkov, Chechina & Trinder (SAC 2018): findings"

# The report's sections, in order (notebooks/report.ipynb's "## " and "### " headings, but
# CODE_HEADINGS, which its code displays; tests/python/test_findings.py checks the rest). The
# sections other modules register (registry.sections) are inserted before EVIDENCE in the
# main report; a sub-report (another profile's) opens with them instead. The main report
# opens with PAPER_SCALE_SECTIONS, displayed by code (a sub-report has none of them).
FINDINGS = "Findings"
GLOSSARY = "Glossary"
EVIDENCE = "Evidence behind the verdicts"
FIGURES = "Figures"
PAPER_SCALE = "At the paper's scale on this machine"
DECIDING = "Every deciding ratio at the paper's scale"
THEN_AND_NOW = "Then and now: the paper's values beside ours"
APPENDIX = "Appendix: machine, runtimes, set-up differences, contention, failures, time"
PAPER_SCALE_SECTIONS: list[tuple[int, str]] = [(2, PAPER_SCALE), (3, DECIDING), (3, THEN_AND_NOW)]
SECTIONS: list[tuple[int, str]] = [
    (2, FINDINGS),
    (2, GLOSSARY),
    (2, "The claims, checked"),
    (3, "The decisions, drawn"),
    (3, "The regimes: where each source measured, where this sweep tested"),
    (2, FIGURES),
    (2, EVIDENCE),
    (2, APPENDIX),
    (3, "Machine and runtimes"),
    (3, "What differs from the paper's set-up"),
    (3, "Contention on the shared machine"),
    (3, "Runs that were invalid or failed, and why"),
    (3, "Where the time went"),
]
# The sections whose heading the report's code displays, only when it has something to show
# (a sub-report whose figures are all in its own section has no Figures section).
CODE_HEADINGS = (FIGURES,)
# The profiles whose report is the main one (paper/report.html): the paper's claims at the
# paper's scale and at the quick profile's. Any other profile's report is a sub-report that
# opens with its own subject: the registered sections that have something to show for it.
MAIN_PROFILES = ("quick", "paper", "smoke")
# A sub-report's subject: the registered sections (registry.report_section titles, matched
# by their start) it opens with; the others it renders keep their place after the figures.
# tests/python/test_findings.py checks that each names a registered section.
SUBJECTS = {
    "runtimes": ("The conclusions on 2026 runtimes",),
    "audit": ("Language or original code?",),
    "servers": ("Socket benchmarks",),
}


def subjects() -> dict[str, tuple[str, ...]]:
    """Every sub-report's subject by profile: SUBJECTS, and each benchmark package's own
    (DECLARED.subject: its profile is named by its id, as IM's), so that this module names
    no benchmark."""
    out: dict[str, tuple[str, ...]] = dict(SUBJECTS)
    for bench in plugins.ids():
        d = plugins.declaration(plugins.package(bench))
        if d.subject:
            out[bench] = d.subject
    return out


def subject(profile: str) -> tuple[str, ...] | None:
    """The registered sections a sub-report is about (subjects()), the only ones it renders;
    None for the main report and a profile without a listed subject (every section)."""
    return None if is_main(profile) else subjects().get(Path(str(profile)).stem)


def lead_sections(profile: str, titles: Iterable[str]) -> list[str]:
    """The titles, of those rendered for the sweep, that a sub-report opens with: its
    profile's subject (all of them when the profile has none listed); none in the main report."""
    titles = list(titles)
    if is_main(profile):
        return []
    subject = subjects().get(Path(str(profile)).stem)
    if not subject:
        return titles
    return [t for t in titles if t.startswith(subject)] or titles


def is_main(profile: str) -> bool:
    return Path(str(profile)).stem in MAIN_PROFILES


def report_title(profile: str, lead: Iterable[str] = ()) -> str:
    """The report's title: TITLE for the main report; a sub-report's subject (its lead
    sections' titles) first, then the paper it belongs to."""
    lead = list(lead)
    if is_main(profile) or not lead:
        return TITLE
    return f"{lead[0]} \u2014 re-running Valkov, Chechina & Trinder (SAC 2018)"


def opening(profile: str, info: dict, lead: Iterable[str] = ()) -> str:
    """The report's H1 and the paragraph under it (heading + intro)."""
    return f"{heading(profile, lead)}\n\n{intro(profile, info, lead)}"


def heading(profile: str, lead: Iterable[str] = ()) -> str:
    """The report's H1: its title (report_title)."""
    return f"# {report_title(profile, lead)}"


def intro(profile: str, info: dict, lead: Iterable[str] = ()) -> str:
    """What the report is about and where its numbers come from; a sub-report names its
    sweep and points to the main report. The main report shows it after its abstract."""
    lead = list(lead)
    sid = info.get(Col.sweep_id, "?")
    source = (
        "Every number comes from the sweep's raw log (`data/raw/<sweep>/runs.jsonl`, or `runs.jsonl.gz` once "
        "sealed) through "
        "`data/processed/<sweep>/`, or, for the sources' own values, from `data/reference/` (provenance in "
        "`data/reference/PROVENANCE.md`)."
    )
    if is_main(profile) or not lead:
        return (
            "This report re-runs the experiments of *Comparing Languages for Engineering Server Software: Erlang, "
            "Go, and Scala with Akka* (SAC 2018) and of the echo-flood and TCP ping-pong write-ups, and judges each "
            "of their claims by the frozen protocol of `docs/protocol.md`: first at the paper's own scale (the "
            f"`paper` profile's pieces), then on the `{profile}` sweep `{sid}`. {source}"
        )
    subject = ", ".join(f"\u201c{t}\u201d" for t in lead)
    return (
        f"This report is rendered from one sweep of the `{Path(str(profile)).stem}` profile, `{sid}`, and opens "
        f"with its subject: {subject}. The paper's claims at the paper's own scale, with the then-and-now "
        f"tables, are in the main report (`paper/report.html`). {source}"
    )


def anchor(heading: str) -> str:
    """The id nbconvert gives a Markdown heading (nbconvert.filters.strings.add_anchor)."""
    return quote(heading.replace(" ", "-"), safe="?/:@!$&'()*+,;=")


def toc(
    extra: Iterable[str] = (),
    sections: list[tuple[int, str]] | None = None,
    profile: str = "quick",
    figures: bool = True,
) -> str:
    """The report's table of contents (Markdown links to the headings' anchors): the main
    report's PAPER_SCALE_SECTIONS, then SECTIONS with the `extra` level-2 sections
    (registry.sections' titles) before the evidence; a sub-report's lead sections
    (lead_sections) first, as it opens with them, the rest of `extra` before the evidence.
    figures=False: the report has no Figures section (sections.figures_shown is empty)."""
    rows = [r for r in (SECTIONS if sections is None else sections) if figures or r[1] != FIGURES]
    extra = list(extra)
    lead = lead_sections(profile, extra)
    at = next((i for i, (_, t) in enumerate(rows) if t == EVIDENCE), len(rows))
    rows[at:at] = [(2, t) for t in extra if t not in lead]
    rows = (PAPER_SCALE_SECTIONS if is_main(profile) else [(2, t) for t in lead]) + rows
    return "\n".join(f"{'  ' * (level - 2)}* [{t}](#{anchor(t)})" for level, t in rows)
