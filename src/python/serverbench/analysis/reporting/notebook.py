"""What the notebooks call: find the sweep, process it, hand back the tables. Keeps the
notebooks thin and analysis-only (parameters, one call, a figure, a table); sweeps are
run by `python -m serverbench run`, never from a notebook."""

from __future__ import annotations

import hashlib
from pathlib import Path

from serverbench import paths
from serverbench.analysis import claims as claims_mod
from serverbench.analysis.claims.options import Options
from serverbench.analysis.reading import process
from serverbench.rawdata.columns import Col


class NoSweepError(FileNotFoundError):
    pass


def resolve_sweep(profile: str = "quick", sweep_id: str | None = None, raw_folder: str | None = None) -> Path:
    """The raw sweep folder to analyse: raw_folder if given, else sweep_id under
    data/raw/, else the newest sweep of the profile."""
    if raw_folder:
        p = Path(raw_folder)
        if not p.is_dir():
            raise NoSweepError(f"raw folder {p} does not exist")
        return p
    if sweep_id:
        p = paths.raw_dir() / sweep_id
        if not p.is_dir():
            raise NoSweepError(f"no sweep {sweep_id!r} under data/raw/")
        return p
    from serverbench import harness

    p = harness.latest_sweep(profile)
    if p is None:
        raise NoSweepError(
            f"no sweep of profile {profile!r} under data/raw/; run one first "
            f"(python -m serverbench run --profile {profile})"
        )
    return Path(p)


def ran_a_piece(profile: str, sweep_dir: Path) -> bool:
    """Whether the sweep ran only a piece of its profile: every `paper` sweep (a piece is one
    benchmark at one core count), and any sweep a session of which was started with --piece
    (an `im` piece runs some of the case study's parts). A claim such a sweep could not judge
    is not testable because the piece did not run it, not because the profile did not."""
    from serverbench.analysis.reporting import paperscale
    from serverbench.rawdata import sweepfiles

    argv = [a for s in sweepfiles.read_sessions(sweep_dir) for a in (s.get("argv") or [])]
    return profile == paperscale.PROFILE or any(a == "--piece" or str(a).startswith("--piece=") for a in argv)


def _fingerprint(sweep_dir: Path, options: Options) -> str:
    """What the processed tables and verdicts were made from: the raw files' names and
    contents, the benchmarks' options, and the code and data that turn them into tables and
    verdicts (the package's source, spec/, data/reference/). No paths or times, so it is
    the same in every checkout."""
    h = hashlib.sha256("\0".join(value for _, value in options.chosen).encode())
    for p in sorted(q for q in Path(sweep_dir).iterdir() if q.is_file() and not q.name.startswith(".")):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    h.update(_code_fingerprint().encode())
    return h.hexdigest()


_CODE_SUFFIXES = {".py", ".json", ".toml", ".csv"}


def _code_fingerprint() -> str:
    """The analysis's inputs besides the raw files, hashed (a few ms): a change to any of them
    re-processes the sweep, as a change to its raw files does."""
    import serverbench

    h = hashlib.sha256()
    roots = [Path(serverbench.__file__).parent, paths.repo_root() / "spec", paths.reference_dir()]
    for root in filter(Path.is_dir, roots):
        for q in sorted(q for q in root.rglob("*") if q.is_file() and q.suffix in _CODE_SUFFIXES):
            h.update(str(q.relative_to(root)).encode())
            h.update(q.read_bytes())
    return h.hexdigest()


def prepare(sweep_dir, options: Options | None = None, force: bool = False) -> process.Processed:
    """Process the sweep into data/processed/<sweep-id>/ (tables and claims) and load them.
    Skips both when they were made from the same raw files by the same code (stamp
    .processed_from, untracked): a render's four notebooks process and judge a sweep once."""
    sweep_dir = Path(sweep_dir)
    out = paths.processed_dir() / sweep_dir.name
    stamp = out / ".processed_from"
    options = Options.coerce(options)
    fp = _fingerprint(sweep_dir, options)
    if not force and stamp.exists() and (out / "claims.csv").exists() and stamp.read_text(encoding="utf-8") == fp:
        return process.Processed(out)
    written = process.process_sweep(sweep_dir)
    out = written[Col.runs].parent
    P = process.Processed(out)
    claims_mod.write_claims(P, options=options)
    stamp.write_text(fp, encoding="utf-8")
    return P


def load(
    profile: str = "quick",
    sweep_id: str | None = None,
    raw_folder: str | None = None,
    options: Options | None = None,
) -> process.Processed:
    """resolve_sweep + prepare: the processed tables of the sweep a notebook analyses, judged
    with the benchmarks' options (None: their defaults)."""
    return prepare(resolve_sweep(profile, sweep_id, raw_folder), options=options)


def claims_table(P: process.Processed, ids, options: Options | None = None):
    """The claims table restricted to some ids (for a figure notebook)."""
    V = claims_mod.check_all(P, Options.coerce(options), ids=set(ids))  # only the figure's claims
    return claims_mod.claims_table(V)[["id", "claim", "verdict", "why", "numbers"]]


def figures_dir(paper_dir=None) -> Path:
    return Path(paper_dir) / "figures" if paper_dir else paths.figures_dir()


def stat_table(P, table: str, metric: str, cols: list[str]):
    """A figure notebook's summary table: the rows of one table and metric, the columns asked
    for that it has. A sweep without this benchmark (e.g. a socket-only `servers` sweep)
    gives an empty table and says so, instead of failing the notebook."""
    s = P.stat(table, metric)
    if s.empty:
        print(f"this sweep has no {table} runs")
        return s
    return s[[c for c in cols if c in s]]


def figure_html(png, caption: str, heading: bool = False) -> str:
    """One figure as HTML: its caption (bold, or an h3 heading) and the image, in one
    <figure> that a printed page never splits, the image as wide as the page, its alt text the
    caption. Why one output: a caption displayed apart from its image was printed at the
    foot of one page and the image on the next; and nbconvert gives an image without alt
    text 'No description has been provided for this image'."""
    import base64
    import html
    import re

    text = html.escape(caption)
    shown = re.sub(r"`([^`]+)`", r"<code>\1</code>", text)  # the caption's Markdown code spans
    alt = html.escape(re.sub(r"`([^`]+)`", r"\1", caption), quote=True)
    data = base64.b64encode(Path(png).read_bytes()).decode("ascii")
    cap = f"<h3>{shown}</h3>" if heading else f"<figcaption><strong>{shown}</strong></figcaption>"
    return f'<figure class="serverbench-figure">{cap}<img alt="{alt}" src="data:image/png;base64,{data}"></figure>'


def show_figure(png, caption: str, heading: bool = False) -> None:
    """Display figure_html in the report notebook."""
    from IPython.display import HTML, display

    display(HTML(figure_html(png, caption, heading)))
