"""Run the notebooks with papermill and render the report, HTML and PDF (run_all.sh and
the e2e test call run_notebooks)."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

from serverbench import catalog, paths
from serverbench.analysis.claims.options import Options
from serverbench.analysis.reporting import reportinfo
from serverbench.analysis.reporting.render import print_pdf, render_html
from serverbench.analysis.reporting.reportinfo import REPORT_INFO, report_of  # noqa: F401  (read here before)
from serverbench.harness.running.fingerprint import cpu_name
from serverbench.paths import notebooks_dir
from serverbench.rawdata.columns import Col

FIGURE_NOTEBOOKS = ("fig3_pingping", "fig4_spawn", "fig5_throughput")
# Notebooks that only a sweep of their own profile feeds (the audit's paper/fair steps).
PROFILE_NOTEBOOKS = {"audit": ("audit",)}
REPORT_NOTEBOOK = "report"


# a paper-profile report cell takes minutes; a kernel that hangs must fail, not stall run_all.sh
CELL_TIMEOUT_S = 1800


def benchmark_notebooks(sweep_id: str) -> tuple[str, ...]:
    """The notebooks of the benchmarks the sweep ran (its manifests' `benchmarks`, every
    shard's) whose package declares one of its own (NOTEBOOK), in the benchmarks' order."""
    ran: set[str] = set()
    for m in sorted((paths.raw_dir() / sweep_id).rglob("manifest.json")):
        try:
            ran.update(json.loads(m.read_text(encoding="utf-8")).get(Col.benchmarks) or ())
        except (OSError, ValueError):
            continue  # an unreadable manifest adds nothing; the sweep's own checks name it
    return tuple(b.notebook for b in catalog.benchmarks() if b.notebook and b.id in ran)


def remove_figures(figdir: Path) -> list[Path]:
    """Delete every registered figure's PNG/PDF before a render. Why: the report draws a
    registered figure only when its file is missing, so a file left by an earlier sweep
    would be shown as this sweep's (a figure this sweep has no data for is then left out).
    The report's own figure (the audit) is among them: the report draws it too."""
    from serverbench.analysis.plotting import figures
    from serverbench.analysis.reporting import sections

    gone = []
    for spec in figures.ordered(sections.analysis()):
        for ext in ("png", "pdf"):
            f = Path(figdir) / f"{spec.name}.{ext}"
            if f.exists():
                f.unlink()
                gone.append(f)
    return gone


KERNEL_NAME = "serverbench"  # scripts/setup.sh registers it; every notebook's kernelspec names it


def new_sweep_id(profile: str) -> str:
    return f"{profile}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"


def _latest(profile: str) -> Path | None:
    from serverbench import harness

    return harness.latest_sweep(profile)


def run_notebooks(
    profile: str = "quick",
    sweep_id: str | None = None,
    languages=None,
    show_reference: bool = True,
    out_paper=None,
    kernel_name: str | None = None,
    options: Options | None = None,
    log=None,
    pdf: bool = True,
) -> dict:
    """Analysis only (a sweep is run by `python -m serverbench run`, the one way into the
    harness): execute the figure notebooks and the report with papermill on sweep_id, or
    the newest sweep of the profile (executed copies in <paper>/executed/), render
    <paper>/report.html with nbconvert (code hidden) and, if pdf, print it to
    <paper>/report.pdf with headless chromium (render.ChromiumNotFound when it is missing, after
    the HTML is written; pdf=False removes a report.pdf left by an earlier render).
    A `dimension` sweep also gets its dimensioning tables and figure (dimension.write).
    Returns {name: path} for the executed notebooks, figures, processed folder and report."""
    import papermill as pm

    # absolute: the notebooks run in notebooks/, so a relative --paper-dir would land there
    paper = Path(out_paper).resolve() if out_paper else paths.paper_dir()
    if sweep_id is None:
        latest = _latest(profile)
        if latest is None:
            raise FileNotFoundError(
                f"no sweep of profile {profile!r} under data/raw/ to analyse (run one: python -m serverbench run)"
            )
        sweep_id = latest.name
    elif not (paths.raw_dir() / sweep_id).is_dir():
        raise FileNotFoundError(f"no sweep {sweep_id!r} under data/raw/")
    executed = paper / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    common = {
        "profile": profile,
        "sweep_id": sweep_id,
        "languages": list(languages) if languages else None,
        "show_reference": bool(show_reference),
        "paper_dir": str(paper),
        **dict(Options.coerce(options).chosen),  # each benchmark option, a parameter by its name
    }
    out: dict = {"sweep_id": sweep_id, "timings_s": {}}
    out["removed_stale"] = remove_figures(paper / "figures")
    if Path(profile).stem == "dimension":
        # its tables feed docs/dimensioning.md (`serverbench docs`); no notebook draws them
        from serverbench.analysis.reporting import dimension

        for name, path in dimension.write(sweep_id, figures_dir=paper / "figures").items():
            out[name.replace("figure.", "dimensioning.")] = path
    src = notebooks_dir()
    own = PROFILE_NOTEBOOKS.get(profile, ()) + benchmark_notebooks(sweep_id)
    for name in FIGURE_NOTEBOOKS + own + (REPORT_NOTEBOOK,):
        t0 = time.perf_counter()
        if log:
            log(f"papermill {name}.ipynb ...")
        pm.execute_notebook(
            str(src / f"{name}.ipynb"),
            str(executed / f"{name}.ipynb"),
            parameters=common,
            kernel_name=kernel_name,
            progress_bar=False,
            cwd=str(src),
            execution_timeout=CELL_TIMEOUT_S,
        )
        out["timings_s"][name] = round(time.perf_counter() - t0, 2)
        out[name] = portable_notebook(executed / f"{name}.ipynb")
    out["report_html"] = render_html(executed / f"{REPORT_NOTEBOOK}.ipynb", paper / "report.html")
    out["report_json"] = write_report_info(paper, profile, sweep_id, pdf)
    if pdf:
        out["report_pdf"] = print_pdf(out["report_html"], paper / "report.pdf")
    elif (paper / "report.pdf").exists():
        # a PDF printed from an earlier render would be taken for this sweep's
        (paper / "report.pdf").unlink()
        out["removed_stale"].append(paper / "report.pdf")
    figs = paper / "figures"
    out["figures"] = sorted(figs.glob("fig*.png")) + sorted(figs.glob("fig*.pdf"))
    out["processed"] = paths.processed_dir() / sweep_id
    out["raw"] = paths.raw_dir() / sweep_id
    return out


def write_report_info(paper: Path, profile: str, sweep_id: str, pdf: bool) -> Path:
    """<paper>/report.json: which sweep the report beside it was rendered from, on what
    machine, what its claims came to, and the command that renders it again; paper/README.md's
    list of reports is generated from these files (docsgen, `paper-reports`)."""
    processed = paths.processed_dir() / sweep_id
    try:
        info = json.loads((processed / "sweep.json").read_text(encoding="utf-8"))
    except FileNotFoundError:  # a report that did not process its sweep: the machine unknown
        info = {}
    verdicts: dict[str, int] = {}
    claims = processed / "claims.csv"
    if claims.is_file():
        import pandas as pd

        for v in pd.read_csv(claims)[Col.verdict].fillna("").astype(str):
            if v and not v.startswith("not testable"):
                verdicts[v] = verdicts.get(v, 0) + 1
    rel = paths.portable(str(paper.resolve()))
    command = ["python", "-m", "serverbench", "notebooks", "--no-run", "--profile", profile, "--sweep-id", sweep_id]
    command += [] if rel in (".", "paper") else ["--paper-dir", rel]
    command += [] if pdf else ["--no-pdf"]
    doc = {
        "sweep_id": sweep_id,
        "profile": profile,
        "cpu_model": (info.get(Col.host) or {}).get(Col.cpu_model),
        "logical_cpus": (info.get(Col.host) or {}).get(Col.logical_cpus),
        "verdicts": dict(sorted(verdicts.items())),
        "pdf": bool(pdf),
        "command": " ".join(command),
    }
    out = paper / REPORT_INFO
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out


def reports_markdown(paper: Path | None = None) -> str:
    """paper/README.md's list of the committed reports (a generated block): one row per
    <paper>/**/report.json, the main report first."""
    paper = Path(paper) if paper else paths.paper_dir()
    rows = []
    for f in sorted(paper.rglob(REPORT_INFO), key=lambda f: (f.parent != paper, str(f))):
        d = reportinfo.read(f)
        here = f.parent.relative_to(paper).as_posix()
        link = "report.html" if here == "." else f"{here}/report.html"
        files = f"[{link}]({link})" + (f", [PDF]({link[:-4]}pdf)" if d.get("pdf") else "")
        counts = ", ".join(f"{n} {v}" for v, n in sorted(d["verdicts"].items(), key=lambda x: -x[1])) or "none"
        machine = f"{cpu_name(d.get(Col.cpu_model))}, {d.get(Col.logical_cpus)} CPUs"
        rows.append([files, f"`{d[Col.profile]}`", f"`{d[Col.sweep_id]}`", machine, counts, f"`{d[Col.command]}`"])
    head = ["report", "profile", "sweep (data/raw/)", "machine", "claims judged there", "rendered again by"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def portable_notebook(path: Path) -> Path:
    """Rewrite an executed notebook without machine paths (papermill records its input,
    output and parameters, paper_dir among them, as absolute paths): metadata, cell
    sources and text outputs go through paths.portable; images are left alone."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    nb.metadata = nbformat.from_dict(paths.portable(nb.metadata))
    for cell in nb.cells:
        cell.source = paths.portable(cell.source)
        cell.metadata = nbformat.from_dict(paths.portable(cell.metadata))
        for o in cell.get("outputs", []):
            if "text" in o:
                o["text"] = paths.portable(o["text"])
            for mime in [m for m in o.get("data", {}) if m.startswith("text/")]:
                o["data"][mime] = paths.portable(o["data"][mime])
    nbformat.write(nb, str(path))
    return path
