"""The report's registered sections (registry.report_section: the benchmark packages' and
the report's own, 2026 runtimes and the audit), rendered once per sweep so that the contents list and the body
agree: a section with nothing to show for this sweep (its render returns no blocks) is left
out of both, heading included, so that a report of a `runtimes` or `audit` sweep does not
carry empty headings of benchmarks it never ran."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from serverbench.analysis.auditing import audit_figures, audit_report
from serverbench.analysis.claims.options import Options
from serverbench.analysis.plotting import figures
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import Processed
from serverbench.analysis.reporting import cells, layout, report, runtimes_report


def analysis() -> registry.Registry:
    """The report's registry: the benchmark packages' (registry.load()) and the report's own
    figure and sections (the audit, 2026 runtimes), which live in the wings above the
    plug-ins'."""
    return registry.load().with_modules(audit_figures, audit_report, runtimes_report)


def registered() -> list[registry.SectionSpec]:
    """Every report section of analysis(), by order then title."""
    return sorted(analysis().sections.values(), key=lambda s: (s.order, s.title))


def render(P: Processed, profile: str | None = None) -> list[tuple[str, list]]:
    """(title, blocks) of every registered section that has something to show for this sweep,
    in the registry's order; a sub-report (profile with a layout.subject) renders only its
    subject's sections, not the others' (another benchmark's committed data, or a line
    saying this sweep ran none of it). A section that raises is kept, its error as its one
    block: shown, not hidden."""
    about = layout.subject(profile) if profile is not None else None
    out = []
    for section in registered():
        if about and not section.title.startswith(about):
            continue
        try:
            blocks = list(section.render(P) or [])
        except Exception as e:
            blocks = [f"**error** in this section: `{type(e).__name__}: {e}`"]
        if blocks:
            out.append((section.title, blocks))
    return out


def show(title: str, blocks: list, P: Processed, figdir) -> None:
    """Display one rendered section in the report notebook: Markdown strings, DataFrames,
    registry.FigureRef (a registered figure's PNG, drawn here if its notebook did not) and
    matplotlib Figures."""
    from IPython.display import Markdown, display

    from serverbench.analysis.reporting import notebook

    display(Markdown(f"## {title}"))
    for b in blocks:
        if isinstance(b, str):
            display(Markdown(b))
        elif isinstance(b, pd.DataFrame):
            display(cells.style(b))
        elif isinstance(b, registry.FigureRef):
            png = Path(figdir) / f"{b.name}.png"
            if not png.exists():
                fig = figures.draw(b.name, P, out_dir=figdir, reg=analysis())
                if fig is not None:
                    figures.plt.close(fig)
            if png.exists():  # captioned by the figure's registered title (its alt text too)
                spec = figures.registered(analysis()).get(b.name)
                notebook.show_figure(png, spec.title if spec else b.name)
        elif hasattr(b, "savefig"):  # a matplotlib Figure: shown once, then closed
            display(b)
            figures.plt.close(b)
        else:
            display(b)


def figures_shown(P: Processed, profile: str, extra: list[tuple[str, list]]) -> list[registry.FigureSpec]:
    """The registered figures the report's Figures section shows: every one in the main
    report (and a profile without a listed subject); in a sub-report only those drawn from
    the tables this sweep ran, less those its own sections already showed (the audit
    figure, drawn from the committed audit sweep, is not the IM report's)."""
    specs = figures.ordered(analysis())
    if layout.subject(profile) is None:
        return specs
    shown = {b.name for _, blocks in extra for b in blocks if isinstance(b, registry.FigureRef)}
    ran = report.tables_run(P)
    return [s for s in specs if s.name not in shown and set(s.tables) & ran]


PAPER_FIGURE = re.compile(r"^fig\d")  # the paper's numbered figures (fig3_..., fig5_...), drawn with its values


def show_figures(
    P: Processed, profile: str, extra, figdir, languages=None, show_reference=True, options: Options | None = None
) -> None:
    """The Figures section (its heading only when a figure is drawn, layout.CODE_HEADINGS):
    figures_shown, each drawn here if its notebook did not, captioned by its title; then the
    notes on the paper's values when one of the paper's figures is among them."""
    from IPython.display import Markdown, display

    from serverbench.analysis.reporting import notebook

    drawn = []
    for spec in figures_shown(P, profile, extra):
        png = Path(figdir) / f"{spec.name}.png"
        if not png.exists():  # its notebook was not run: the same function draws it here
            fig = figures.draw(spec.name, P, languages, show_reference, options, out_dir=figdir, reg=analysis())
            if fig is not None:
                figures.plt.close(fig)
        if png.exists():
            drawn.append((png, spec))
    if not drawn:  # no heading over nothing (a figure with no data of this sweep draws none)
        return
    display(Markdown(f"## {layout.FIGURES}"))
    for png, spec in drawn:
        notebook.show_figure(png, spec.title, heading=True)
    if any(PAPER_FIGURE.match(s.name) for _, s in drawn):
        notes = "\n".join("* " + n for n in report.reference_notes())
        display(Markdown("**About the paper's values drawn in the figures.**\n\n" + notes))
