"""Figures drawn like the paper's, from processed tables (and data/reference for the
paper's own values). Each figure is drawn by one registered function (registry.figure)
in its benchmark's package (serverbench/benchmarks/<id>/figures.py). draw(name, P) is what notebooks, the report and
`python -m serverbench figures` call; save() writes PNG and PDF to paper/figures/."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from serverbench import catalog, paths
from serverbench.analysis.claims.options import Options
from serverbench.analysis.plotting.figstyle import COLORS, MARKERS, SPAWN_METRICS, color, marker  # noqa: F401
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import Processed

PDF_DECIMALS = 3  # of a PDF point (1/72 inch): 1/72,000 inch, far below what a printer draws


@contextmanager
def _pdf_at_precision() -> Iterator[None]:
    """While a PDF is written, its numbers at PDF_DECIMALS decimals instead of matplotlib's 10:
    a drawn value passes through log scales and transforms whose last bits differ between CPUs
    (a log axis on an Intel Xeon and an AMD EPYC moved a marker in the 10th decimal), and a
    committed figure must not change with the CPU that re-renders it (as csvout for tables).
    matplotlib has no setting for it, so its one number writer is wrapped for the call."""
    from matplotlib.backends import backend_pdf

    exact = backend_pdf.pdfRepr

    def rounded(obj):
        if isinstance(obj, (float, np.floating)) and np.isfinite(obj):
            obj = round(float(obj), PDF_DECIMALS) + 0.0  # + 0.0: no "-0" from a rounded tiny negative
        return exact(obj)

    backend_pdf.pdfRepr = rounded
    try:
        yield
    finally:
        backend_pdf.pdfRepr = exact


def save(fig, name: str, out_dir=None) -> dict:
    out = Path(out_dir) if out_dir else paths.figures_dir()
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for ext in ("png", "pdf"):
        p = out / f"{name}.{ext}"
        # No creation date: the same raw logs give byte-identical figures.
        meta = {"CreationDate": None} if ext == "pdf" else {"Software": None}
        if ext == "pdf":
            with _pdf_at_precision():
                fig.savefig(p, bbox_inches="tight", metadata=meta)
        else:
            fig.savefig(p, bbox_inches="tight", metadata=meta)
        written[ext] = p
    return written


def registered(reg: registry.Registry | None = None) -> dict[str, registry.FigureSpec]:
    """Every figure of `reg`, by file name: by default the benchmark packages' (registry.load());
    the report passes its own registry, which adds the report's figure (the audit:
    reporting.sections.analysis())."""
    return dict((reg or registry.load()).figures)


def ordered(reg: registry.Registry | None = None) -> list[registry.FigureSpec]:
    """registered(reg), by order then name."""
    return sorted(registered(reg).values(), key=lambda f: (f.order, f.name))


def draw(
    name: str,
    P: Processed,
    languages=None,
    show_reference: bool = True,
    options: Options | None = None,
    out_dir=None,
    save_files: bool = True,
    reg: registry.Registry | None = None,
    **figure_args,
):
    """Draw the registered figure `name` (e.g. "fig3_pingping") and save it (PNG + PDF);
    the benchmarks' options (None: their defaults; spawn's metric) and figure_args (e.g.
    cores=[1, 2] for Fig. 5) go to the figure function by name. Returns the Figure,
    or None when the sweep has nothing for it (nothing is saved, and a stale file of that
    name is removed)."""
    # a paper's short name (fig3) names the figure its benchmark's package answers it with
    spec = registered(reg).get(catalog.figure_names().get(name, name))
    if spec is None:
        raise KeyError(f"no figure {name!r}; registered: {', '.join(f.name for f in ordered(reg))}")
    chosen = dict(Options.coerce(options).chosen)
    fig = spec.draw(P, languages=languages, show_reference=show_reference, **chosen, **figure_args)
    out = Path(out_dir) if out_dir else paths.figures_dir()
    if save_files:
        if fig is None:
            for ext in ("png", "pdf"):
                (out / f"{spec.name}.{ext}").unlink(missing_ok=True)
        else:
            save(fig, spec.name, out)
    return fig


def draw_all(
    P: Processed,
    out_dir=None,
    show_reference=True,
    languages=None,
    options: Options | None = None,
    reg: registry.Registry | None = None,
) -> dict:
    """Every figure of `reg` (registered()): {name: {"png": path, "pdf": path}} for those drawn."""
    out = {}
    for spec in ordered(reg):
        fig = draw(spec.name, P, languages, show_reference, options, out_dir, reg=reg)
        if fig is not None:
            d = Path(out_dir) if out_dir else paths.figures_dir()
            out[spec.name] = {ext: d / f"{spec.name}.{ext}" for ext in ("png", "pdf")}
            plt.close(fig)
    return out
