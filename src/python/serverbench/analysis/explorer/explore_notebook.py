"""What notebooks/explore.ipynb calls: parameter checks, the comparison views, and the
ipywidgets dropdowns for JupyterLab (under papermill the parameters do the choosing)."""

from __future__ import annotations

import matplotlib.pyplot as plt

from serverbench import paths
from serverbench.analysis.explorer import explore, explore_plots
from serverbench.analysis.explorer.explore import SweepInputError
from serverbench.rawdata.columns import Col

SAMPLE = "quick-20261121T134551Z"


def _md(text):
    from IPython.display import Markdown

    return Markdown(text)


def default_pair(sweep_a=None, sweep_b=None) -> tuple[str, str]:
    ids = explore.sweep_ids()
    if sweep_a is None:
        if not ids:
            raise SweepInputError(
                f"there are no sweeps under {paths.raw_dir()}: run one "
                "(python -m serverbench run --profile smoke) or set sweep_a to a folder"
            )
        sweep_a = SAMPLE if SAMPLE in ids else ids[-1]
    if sweep_b is None:
        others = [
            s
            for s in explore.list_sweeps().sort_values("created_utc", na_position="first")[Col.sweep_id]
            if s != str(sweep_a) and s != explore.sweep_folder(sweep_a).name
        ]
        if not others:
            raise SweepInputError(
                f"only one sweep under {paths.raw_dir()}: set sweep_b to compare "
                "(or compare a sweep with itself: sweep_b = sweep_a)"
            )
        sweep_b = others[-1]
    return str(sweep_a), str(sweep_b)


def pick(sweep_a=None, sweep_b=None, table=None, metric=None, kind="strip"):
    """Check the parameters and load both sweeps (one clear message if anything is wrong);
    table: any registered table (every benchmark's, explore.tables()), default the first."""
    tables = explore.tables()
    table = tables[0] if table is None else table
    if table not in tables:
        raise SweepInputError(f"parameter table={table!r}: choose one of {', '.join(tables)}")
    if kind not in explore_plots.KINDS:
        raise SweepInputError(f"parameter kind={kind!r}: choose one of {', '.join(explore_plots.KINDS)}")
    if metric is not None and not isinstance(metric, str):
        raise SweepInputError(f"parameter metric={metric!r}: a column name such as 'ns_per_message', or None")
    a, b = default_pair(sweep_a, sweep_b)
    A, B = explore.load_sweep(a), explore.load_sweep(b)
    for s in (A, B):
        has = (s.runs[Col.table] == table).any()
        print(
            f"{s.sweep_id}: {len(s.runs)} runs, {int((s.runs[Col.status] == 'ok').sum())} ok; "
            f"{table}: {'yes' if has else 'none'}"
            + (f"; {s.skipped_lines} unreadable line(s) skipped" if s.skipped_lines else "")
        )
    if metric is not None:
        for s in (A, B):
            if (s.runs[Col.table] == table).any() and metric not in s.runs:
                raise SweepInputError(f"parameter metric={metric!r}: sweep {s.sweep_id} has no such column for {table}")
    return A, B


def list_sweeps():
    return explore.list_sweeps()


def overlay(A, B, table, metric=None):
    fig = explore_plots.overlay([A, B], table, metric)
    return fig


def compare(A, B, table, metric=None):
    c = explore.compare(A, B, table, metric)
    if c.empty:
        return _md(
            f"No `{table}` configuration was measured (ok) in both `{A.sweep_id}` and `{B.sweep_id}`: "
            "nothing to put side by side. Pick another table or sweep."
        )
    method = c["method"].iloc[0]
    parts = c[Col.config].str.split("/", n=3, expand=True)
    c = c.drop(columns=["config", "method"])
    c.insert(0, "language", parts[0])
    c.insert(1, "variant", parts[1])
    c.insert(2, "cores", parts[2].str.lstrip("c"))
    c.insert(3, "parameters", parts[3])
    c = c.rename(columns={"median_a": "median A", "median_b": "median B", "ratio": "B / A"})
    print(f"A = {A.sweep_id}, B = {B.sweep_id}; interval: {method}, at the level it reaches (ci_level)")
    return c.round(4)


def distributions(A, B, table, metric=None, kind="strip"):
    figs = []
    for s in (A, B):
        fig, ax = plt.subplots(figsize=(9, 4), layout="constrained")
        explore_plots.trial_distributions(
            s.runs, table, metric, kind=kind, ax=ax, title=f"{s.sweep_id}: {table}, every trial"
        )
        figs.append(fig)
    return figs


def environment_diff(A, B):
    """The two sweeps' environments side by side, after one sentence saying whether they ran
    on the same machine (fingerprints), since a difference between machines is not one
    between languages or commits."""
    from IPython.display import display

    display(_md(explore.same_machine(A, B)))
    d = explore.environment_diff(A, B)
    return d.style.apply(lambda r: ["background-color: #fff3cd" if r["differs"] else "" for _ in r], axis=1)


def widgets():
    """Dropdowns for sweep A, sweep B, table and plot kind (JupyterLab)."""
    try:
        import ipywidgets as w
    except ImportError:
        return _md(
            "ipywidgets is not installed: set the parameters in the first cell instead "
            "(./scripts/setup.sh installs it)."
        )
    from IPython.display import display

    ids = explore.sweep_ids()
    if not ids:
        return _md(f"No sweeps under {paths.raw_dir()}.")
    a0, b0 = default_pair() if len(ids) > 1 else (ids[0], ids[0])
    da = w.Dropdown(options=ids, value=a0, description="sweep A")
    db = w.Dropdown(options=ids, value=b0, description="sweep B")
    dt = w.Dropdown(options=explore.tables(), value=explore.tables()[0], description="table")
    dk = w.Dropdown(options=list(explore_plots.KINDS), value="strip", description="plot")
    out = w.Output()

    def redraw(_=None):
        out.clear_output()
        with out:
            try:
                A, B = pick(da.value, db.value, dt.value, None, dk.value)
                overlay(A, B, dt.value)
                plt.show()
                display(compare(A, B, dt.value))
                distributions(A, B, dt.value, None, dk.value)
                plt.show()
                display(environment_diff(A, B))
            except SweepInputError as e:
                print(e)

    for d in (da, db, dt, dk):
        d.observe(redraw, names="value")
    ui = w.VBox([w.HBox([da, db]), w.HBox([dt, dk]), out])
    with out:  # the cells above already show the parameters' choice; draw on the first change
        print("Choose sweeps, table or plot kind: the comparison is redrawn here.")
    return ui


__all__ = ["pick", "list_sweeps", "overlay", "compare", "distributions", "environment_diff", "widgets"]
