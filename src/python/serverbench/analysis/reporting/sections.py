"""The report's registered sections (registry.report_section: the socket benchmarks, faults,
2026 runtimes, the audit), rendered once per sweep so that the contents list and the body
agree: a section with nothing to show for this sweep (its render returns no blocks) is left
out of both, heading included, so that a report of a `runtimes` or `audit` sweep does not
carry empty headings of benchmarks it never ran."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from serverbench.analysis.auditing import audit_report  # noqa: F401  (registers its report section)
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import Processed
from serverbench.analysis.reporting import (
    cells,
    runtimes_report,  # noqa: F401  (registers its report section)
)


def render(P: Processed) -> list[tuple[str, list]]:
    """(title, blocks) of every registered section that has something to show for this sweep,
    in the registry's order. A section that raises is kept, its error as its one block:
    shown, not hidden."""
    out = []
    for section in registry.sections():
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

    from serverbench.analysis.plotting import figures
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
                fig = figures.draw(b.name, P, out_dir=figdir)
                if fig is not None:
                    figures.plt.close(fig)
            if png.exists():  # captioned by the figure's registered title (its alt text too)
                spec = registry.load().figures.get(b.name)
                notebook.show_figure(png, spec.title if spec else b.name)
        elif hasattr(b, "savefig"):  # a matplotlib Figure: shown once, then closed
            display(b)
            figures.plt.close(b)
        else:
            display(b)
