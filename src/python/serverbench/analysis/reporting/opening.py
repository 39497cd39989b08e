"""The report's first screen in the notebook (notebooks/report.ipynb): its own module, since
it shows the registered sections (sections.py), which draw figures through notebook.py."""

from __future__ import annotations

from pathlib import Path

from serverbench.analysis.reading import gap_tables
from serverbench.analysis.reporting import (
    abstract,
    cells,
    layout,
    notebook,
    paperscale,
    report,
    sections,
    thenandnow,
)


def show_opening(profile: str, P, V, extra, lead: list[str], figdir: Path, show_reference: bool) -> None:
    """The report's first screen, in the notebook: its title; for the main report the abstract
    (at most 150 words, every number from committed data), the contents list (so that the
    first screen finds every section), the introduction and the paper-scale section
    (deciding ratios, verdicts over every sweep of each piece, then-and-now tables followed
    by the attribution of the gaps where measured, where the pieces ran, Figs. 3-5); for a
    sub-report its introduction, contents and its own sections first."""
    from IPython.display import Markdown, display

    display(Markdown(layout.heading(profile, lead)))
    figs = bool(sections.figures_shown(P, profile, extra))
    contents = "**Contents**\n\n" + layout.toc([title for title, _ in extra], profile=profile, figures=figs)
    if not layout.is_main(profile):  # a sub-report opens with its own subject
        display(Markdown(layout.intro(profile, P.info, lead)))
        display(Markdown(contents))
        for title, blocks in extra:
            if title in lead:
                sections.show(title, blocks, P, figdir)
        return
    display(Markdown("**Abstract.** " + abstract.text()))
    display(Markdown(contents))  # on the first screen: where every section is, before the first of them
    display(Markdown(layout.intro(profile, P.info, lead)))
    display(Markdown(f"## {layout.PAPER_SCALE}"))
    display(Markdown(f"### {layout.DECIDING}"))
    display(Markdown(abstract.deciding_markdown()))
    display(Markdown(paperscale.section({v.id: v.verdict for v in V})))
    display(Markdown(f"### {layout.THEN_AND_NOW}"))
    display(Markdown(thenandnow.markdown()))
    gap = abstract.gap_attribution()
    if gap is not None:
        display(
            Markdown(
                f"Why ours differ from the paper's values (`{gap[0]}`, docs/gap.md): each factor's ratio with its "
                "interval, per benchmark and language.\n\n" + gap_tables.markdown(gap[1])
            )
        )
    display(
        Markdown(
            "**Where the pieces ran**, as each sweep recorded it (the paper's machines: the appendix's set-up table):"
        )
    )
    display(cells.style(report.pieces_machine_table()))
    for caption, png in paperscale.draw_figures(figdir, show_reference):
        notebook.show_figure(png, caption)
