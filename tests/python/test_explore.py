"""The explorer (notebooks/explore.ipynb, analysis/explorer/explore*.py) on every benchmark's table:
its defaults come from the benchmark's package, and each table of a committed quick sweep
can be compared and drawn (the socket tables once named fields their records lack)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from serverbench.analysis.explorer import explore, explore_notebook, explore_plots  # noqa: E402

SWEEP = "quick-20261125T064728Z"  # committed; it ran every benchmark


@pytest.fixture(scope="module")
def sweep():
    return explore.load_sweep(SWEEP)


@pytest.mark.slow
@pytest.mark.parametrize("table", explore.tables())
def test_every_table_can_be_explored(sweep, table):
    if table not in set(sweep.runs["table"]):
        pytest.skip(f"{table}: no committed quick sweep has run it yet (the im benchmark has no profile part)")
    metric = explore.default_metric(table)
    assert metric in sweep.runs.columns, f"{table}: default metric {metric!r} is not a column of its runs"
    assert explore.x_axis(table) in sweep.runs.columns
    ok = sweep.ok()
    keys = set(explore.config_key(ok[ok["table"] == table], table))
    c = explore.compare(sweep, sweep, table)
    assert len(c) == len(keys) > 0 and (c["ratio"] == 1.0).all()
    fig = explore_plots.overlay([sweep, sweep], table)
    assert fig.axes[0].lines


def test_a_socket_clients_port_is_not_part_of_a_configuration(sweep):
    d = sweep.ok()
    d = d[d["table"] == "tcp_pingpong"]
    assert "port" in d.columns and "port" not in explore.param_columns(d, "tcp_pingpong")


def test_an_unknown_table_is_refused_by_name():
    with pytest.raises(explore.SweepInputError, match="choose one of"):
        explore_notebook.pick(SWEEP, SWEEP, "nope")


def test_the_dropdowns_offer_every_sweep_and_table_and_redraw_on_a_change(monkeypatch, capsys):
    """The last cell's widgets (JupyterLab), built in this process (papermill runs the notebook
    with widgets=False): the four dropdowns, and a change of any one redraws with all four."""
    ui = explore_notebook.widgets()
    (da, db), (dt, dk) = (h.children for h in ui.children[:2])
    assert [d.description for d in (da, db, dt, dk)] == ["sweep A", "sweep B", "table", "plot"]
    assert SWEEP in da.options and tuple(da.options) == tuple(db.options) == tuple(explore.sweep_ids())
    assert tuple(dt.options) == tuple(explore.tables()) and "violin" in dk.options
    picked = []

    def pick(*args):
        picked.append(args)
        raise explore.SweepInputError(f"picked {args}")

    monkeypatch.setattr(explore_notebook, "pick", pick)
    dk.value = "violin"
    assert picked == [(da.value, db.value, dt.value, None, "violin")]
    assert "picked" in capsys.readouterr().out  # the redraw's error is shown, not raised
