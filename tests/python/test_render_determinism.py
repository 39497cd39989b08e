"""The same raw logs render to the same bytes: figures and the HTML report."""

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import nbformat
import pandas as pd

from serverbench.analysis.plotting import figures
from serverbench.analysis.reporting import render


def _figure():
    fig, ax = plt.subplots()
    ax.plot([1, 2, 3], [3, 1, 2])
    return fig


def test_saved_figures_are_byte_identical(tmp_path):
    fig = _figure()
    a = figures.save(fig, "f", tmp_path / "a")
    b = figures.save(fig, "f", tmp_path / "b")
    plt.close(fig)
    for ext in ("png", "pdf"):
        assert a[ext].read_bytes() == b[ext].read_bytes(), ext
    # two saves within one second would match anyway: check the date is really absent
    assert b"/CreationDate" not in a["pdf"].read_bytes()


def _log_axis_figure(nudge: float):
    fig, ax = plt.subplots()
    ax.set_yscale("log")
    ax.scatter([0.2, 1.7, 2.9], [0.731, 1.0625, 3.3 * (1 + nudge)])
    return fig


def test_a_figures_pdf_does_not_carry_a_cpus_last_bits(tmp_path):
    """Two CPUs can differ in a drawn value's last bits (a log axis's transform); the PDF is
    written at a stated precision, so both write the same bytes. Control: matplotlib's own
    10 decimals show the nudge."""
    nudge = 3e-12  # a few ulps of a log-scale transform, what moved a marker between two CPUs
    a, b = (_log_axis_figure(n) for n in (0.0, nudge))
    assert (
        figures.save(a, "f", tmp_path / "a")["pdf"].read_bytes()
        == figures.save(b, "f", tmp_path / "b")["pdf"].read_bytes()
    )
    a.savefig(tmp_path / "raw-a.pdf", metadata={"CreationDate": None})
    b.savefig(tmp_path / "raw-b.pdf", metadata={"CreationDate": None})
    assert (tmp_path / "raw-a.pdf").read_bytes() != (tmp_path / "raw-b.pdf").read_bytes()
    plt.close(a)
    plt.close(b)


def _executed_notebook(path, seed):
    # What an execution leaves behind: a random cell id and a Styler table with a random uuid.
    html = pd.DataFrame({"x": [1, 2]}).style.set_uuid(f"{seed:05x}").to_html()
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("df.style")
    cell["id"] = f"random{seed}"
    cell.outputs = [nbformat.v4.new_output("display_data", data={"text/html": html})]
    nb.cells = [nbformat.v4.new_markdown_cell("# Report"), cell]
    nbformat.write(nb, str(path))
    return path


def test_report_html_does_not_depend_on_random_ids(tmp_path):
    a = render.render_html(_executed_notebook(tmp_path / "a.ipynb", 0xA1B2C), tmp_path / "a.html").read_text()
    b = render.render_html(_executed_notebook(tmp_path / "b.ipynb", 0x3D4E5), tmp_path / "b.html").read_text()
    assert "T_a1b2c" not in a and "T_t0" in a
    assert a == b


@pytest.mark.slow
def test_processed_tables_do_not_depend_on_the_hash_seed(tmp_path):
    """Processing one raw sweep under three PYTHONHASHSEEDs writes the same bytes (runs.csv's
    search_* columns once came out in set order, so a fresh clone could dirty the tree): two
    fresh interpreters with fixed seeds, and this one, whose seed is neither of theirs (a
    random one, or the PYTHONHASHSEED it was started with, which the two avoid); the same
    `serverbench process` command line each time. This process's run saves a third
    interpreter's start-up (~4 CPU-s of ~8 a run on a slow host: its imports)."""
    import io
    import os
    import subprocess
    import sys

    import synthetic_sweeps
    from serverbench import cli
    from serverbench.analysis.reading import synthetic as S

    steps = {"go": [(2000, 0.2), (4000, "over_memory_budget")]}
    recs = synthetic_sweeps.spawn_runs({("go", 1000): [0.1, 0.11, 0.12]}) + synthetic_sweeps.search_runs(steps)
    raw = S.write_sweep(tmp_path / "raw" / recs[0]["sweep_id"], recs, {"profile": {"name": "synthetic"}})
    seeds = [s for s in ("1", "2", "3") if s != os.environ.get("PYTHONHASHSEED")][:2]  # not this process's
    out = {}
    for seed in [*seeds, "this process"]:
        dest = tmp_path / f"p{seed.replace(' ', '-')}"
        args = ["process", str(raw), "--out", str(dest)]
        if seed == "this process":
            err = io.StringIO()
            assert cli.run(args, io.StringIO(), err) == 0, err.getvalue()
        else:
            env = {**os.environ, "PYTHONHASHSEED": seed}
            subprocess.run([sys.executable, "-m", "serverbench", *args], env=env, check=True, capture_output=True)
        out[seed] = {p.name: p.read_bytes() for p in sorted(dest.glob("*.csv"))}
    a, b, c = out.values()
    assert a.keys() == b.keys() == c.keys() and "runs.csv" in a
    for name in a:
        assert a[name] == b[name] == c[name], name


_FEATURES = (
    "import runpy, sys\n"
    "sys.argv = ['serverbench', '--version']\n"
    "if {entry}:\n"
    "    try:\n"
    "        runpy.run_module('serverbench', run_name='__main__')\n"
    "    except SystemExit:\n"
    "        pass\n"
    "from numpy._core._multiarray_umath import __cpu_features__ as f\n"
    "print(' '.join(k for k in ('X86_V4', 'AVX512_ICL', 'AVX512_SPR') if f.get(k)))\n"
)


def _avx512_kernels(entry: bool) -> str:
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NPY_DISABLE_CPU_FEATURES"}
    code = _FEATURES.format(entry=entry)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    return out.splitlines()[-1]  # after what `--version` printed


def test_the_cli_runs_numpy_on_the_kernels_of_every_cpu():
    """`python -m serverbench` (and the notebook kernels it starts) leaves numpy's AVX-512
    kernels aside, whose last bits moved a pixel of a committed figure on an Intel Xeon. The
    control: numpy imported without the entry point uses them on this CPU."""
    control = _avx512_kernels(entry=False)
    if not control:
        pytest.skip("this CPU has no AVX-512: numpy uses its AVX2 kernels anyway")
    assert _avx512_kernels(entry=True) == ""


def _printed(when: str) -> bytes:
    """A PDF as a printer leaves it: stamped with the moment it printed."""
    import datetime
    import io

    stamp = datetime.datetime.strptime(when, "%Y%m%d%H%M%S").replace(tzinfo=datetime.UTC)
    fig = _figure()
    buf = io.BytesIO()
    fig.savefig(buf, format="pdf", metadata={"Title": "report", "CreationDate": stamp, "ModDate": stamp})
    plt.close(fig)
    return buf.getvalue()


def test_a_printed_report_does_not_carry_the_moment_it_was_printed(tmp_path):
    import io

    from pypdf import PdfReader

    a, b = _printed("20261205073827"), _printed("20261205091602")
    assert a != b  # control: the stamp is all that differs
    fixed = render.without_print_date(a)
    assert fixed == render.without_print_date(b) and len(fixed) == len(a)
    meta = PdfReader(io.BytesIO(fixed)).metadata  # the cross-reference table still holds
    assert meta.title == "report" and meta["/CreationDate"].startswith("D:19800101000000")
