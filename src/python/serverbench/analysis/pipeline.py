"""Run the notebooks with papermill and render the report (run_all.sh and the e2e test
call run_notebooks)."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path

from serverbench import paths

FIGURE_NOTEBOOKS = ("fig3_pingping", "fig4_spawn", "fig5_throughput")
REPORT_NOTEBOOK = "report"


def notebooks_dir() -> Path:
    # The notebooks belong to the code, like spec/: never relocated with SERVERBENCH_ROOT.
    return Path(__file__).resolve().parents[4] / "notebooks"


def default_kernel() -> str:
    try:
        from jupyter_client.kernelspec import KernelSpecManager

        if "serverbench" in KernelSpecManager().find_kernel_specs():
            return "serverbench"
    except Exception:  # pragma: no cover - no jupyter_client: papermill will say so
        pass
    return "python3"


def new_sweep_id(profile: str) -> str:
    return f"{profile}-{datetime.now(timezone.utc).strftime('%Y%m%dT%H%M%SZ')}"


def _latest(profile: str) -> Path | None:
    from serverbench import harness

    return harness.latest_sweep(profile)


def run_notebooks(profile: str = "quick", sweep_id: str | None = None, run: bool = True, languages=None,
                  show_reference: bool = True, out_paper=None, kernel_name: str | None = None,
                  spawn_metric: str = "all_ready_s", progress: bool = False, log=None) -> dict:
    """Execute the three figure notebooks and the report with papermill (executed copies
    in <paper>/executed/), then render <paper>/report.html with nbconvert (code hidden).

    run=True: the figure notebooks run the harness (one sweep id shared by all, new if
    sweep_id is None). run=False: analyse sweep_id, or the newest sweep of the profile.
    Returns {name: path} for the executed notebooks, figures, processed folder and report."""
    import papermill as pm

    paper = Path(out_paper) if out_paper else paths.paper_dir()
    if run:
        sweep_id = sweep_id or new_sweep_id(profile)
    elif sweep_id is None:
        latest = _latest(profile)
        if latest is None:
            raise FileNotFoundError(f"no sweep of profile {profile!r} under {paths.raw_dir()} to analyse "
                                    f"(run one, or call with run=True)")
        sweep_id = latest.name
    elif not (paths.raw_dir() / sweep_id).is_dir():
        raise FileNotFoundError(f"no sweep {sweep_id!r} under {paths.raw_dir()}")
    kernel = kernel_name or default_kernel()
    executed = paper / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    common = {"profile": profile, "sweep_id": sweep_id, "languages": list(languages) if languages else None,
              "show_reference": bool(show_reference), "paper_dir": str(paper)}
    out: dict = {"sweep_id": sweep_id, "timings_s": {}}
    src = notebooks_dir()
    for name in FIGURE_NOTEBOOKS + (REPORT_NOTEBOOK,):
        params = dict(common, run_sweep=bool(run) and name != REPORT_NOTEBOOK)
        if name in ("fig4_spawn", REPORT_NOTEBOOK):
            params["spawn_metric"] = spawn_metric
        t0 = time.perf_counter()
        if log:
            log(f"papermill {name}.ipynb ({'sweep + analysis' if params['run_sweep'] else 'analysis'}) ...")
        pm.execute_notebook(str(src / f"{name}.ipynb"), str(executed / f"{name}.ipynb"), parameters=params,
                            kernel_name=kernel, progress_bar=progress, cwd=str(src))
        out["timings_s"][name] = round(time.perf_counter() - t0, 2)
        out[name] = executed / f"{name}.ipynb"
    out["report_html"] = render_html(executed / f"{REPORT_NOTEBOOK}.ipynb", paper / "report.html")
    figs = paper / "figures"
    out["figures"] = sorted(figs.glob("fig*.png")) + sorted(figs.glob("fig*.pdf"))
    out["processed"] = paths.processed_dir() / sweep_id
    out["raw"] = paths.raw_dir() / sweep_id
    return out


def _number_styler_ids(html: str) -> str:
    """Replace each pandas Styler uuid (T_xxxxx) by T_tN in order of first appearance."""
    import re

    seen: dict[str, str] = {}

    def sub(m):
        return seen.setdefault(m.group(1), f"T_t{len(seen)}")

    return re.sub(r"\b(T_[0-9a-f]{5})(?=[_\"\s])", sub, html)


def render_html(notebook, html_path) -> Path:
    """nbconvert to HTML with every code cell's input hidden (as `--no-input`)."""
    import nbformat
    from nbconvert import HTMLExporter

    nb = nbformat.read(str(notebook), as_version=4)
    # Cell ids (papermill's injected cell) and pandas Styler table ids are random per
    # execution; numbering them makes the same raw logs render to the same bytes.
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    exporter = HTMLExporter(exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True)
    body, _ = exporter.from_notebook_node(nb)
    body = _number_styler_ids(body)
    html_path = Path(html_path)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    html_path.write_text(body, encoding="utf-8")
    return html_path
