"""Figures 3-5 from synthetic processed data: files, panels, reference switch, notes."""

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402

from serverbench.analysis import figures, synthetic  # noqa: E402


@pytest.fixture(scope="module")
def P(tmp_path_factory):
    d = tmp_path_factory.mktemp("fig")
    recs = synthetic.paper_like_sweep(trials=3)
    return synthetic.processed_from(recs, d, {"profile": {"name": "quick"}, "not_runnable": [
        {"benchmark": "throughput", "cores": c, "reason": "2 CPUs"} for c in (4, 8, 16, 32)]})


def _texts(fig):
    out = [t.get_text() for t in fig.texts]
    for ax in fig.axes:
        out += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()] + [t.get_text() for t in ax.texts]
    return "\n".join(out)


def test_fig3(P):
    fig = figures.fig3_pingping(P)
    assert len(fig.axes) == 3
    t = _texts(fig)
    assert "(b) PingPing, 5 kB" in t and "(d) PingPing, 50 kB" in t and "Time (s)" in t
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes)
    n_ref = sum(len(ax.lines) for ax in fig.axes)
    n_noref = sum(len(ax.lines) for ax in figures.fig3_pingping(P, show_reference=False).axes)
    assert n_ref > n_noref  # the paper's values are extra lines


def test_fig4_marks_failures(P):
    fig = figures.fig4_spawn(P)
    t = _texts(fig)
    assert "fails at 400,000" in t  # Go's first failing N in the synthetic search
    assert "(b) Spawn up to 100,000" in t and "all_ready_s" in t
    t2 = _texts(figures.fig4_spawn(P, metric="spawn_call_s", show_reference=False))
    assert "spawn_call_s" in t2
    with pytest.raises(ValueError):
        figures.fig4_spawn(P, metric="nope")


def test_fig5_unrunnable_panels_say_so(P):
    fig = figures.fig5_throughput(P)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 6
    t = _texts(fig)
    assert t.count("not runnable on this machine") == 4
    assert "(a) 1 core" in t and "(f) 32 cores" in t and "Exchanges per minute" in t


def test_save_png_and_pdf(P, tmp_path):
    out = figures.draw_all(P, tmp_path, show_reference=False)
    for key in ("fig3", "fig4", "fig5"):
        for ext in ("png", "pdf"):
            p = out[key][ext]
            assert p.exists() and p.stat().st_size > 5000


def test_figures_with_missing_benchmarks(tmp_path):
    recs = synthetic.pingping_runs({"go": [1.0, 1.1, 0.9], "erlang": [1.2, 1.1, 1.0]})
    P = synthetic.processed_from(recs, tmp_path)
    out = figures.draw_all(P, tmp_path / "figs", languages=("erlang", "go"))
    assert all(out[k]["png"].exists() for k in out)
    t = _texts(figures.fig4_spawn(P))
    assert "no max-processes search in this sweep" in t and "no fixed-N spawn runs" in t
    t5 = _texts(figures.fig5_throughput(P))
    assert "not measured in this sweep" in t5 and "not runnable on this machine" in t5
