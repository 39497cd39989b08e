"""What every lab shares: parameter checks, getting the lab's runs, and (from checks.py)
the self-checks.

A lab notebook calls `load(...)` once (it validates the parameters, runs the real
native programs through the harness with the `lab` profile, or reads an existing
sweep folder) and then, per exercise, `check(exercise, answer, data, solutions,
prediction)`, which prints "correct" or a hint computed from the measured data and sets
the prediction the student wrote before the runs beside the measurement.

Bad input raises LabInputError: one sentence, shown by Jupyter without a traceback.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from math import isfinite
from pathlib import Path

import pandas as pd

from serverbench import catalog, contract, paths
from serverbench.analysis.explorer import explore
from serverbench.rawdata import sweepfiles
from serverbench.rawdata.columns import Col
from serverbench.teaching.checks import Exercise as Exercise  # the labs reach the self-checks through common
from serverbench.teaching.checks import check as check
from serverbench.teaching.checks import choice as choice
from serverbench.teaching.checks import human as human
from serverbench.teaching.checks import one_of as one_of
from serverbench.teaching.checks import show_truth as show_truth
from serverbench.teaching.checks import within_abs as within_abs
from serverbench.teaching.checks import within_factor as within_factor

PROFILE = "lab"
SAMPLE_SWEEP = "quick-20261121T134551Z"  # committed: data/raw/quick-20261121T134551Z


class LabInputError(explore.SweepInputError):
    """A lab parameter or input folder that cannot be used (one clear sentence)."""


# ---------------------------------------------------------------------------------------
def need_int(name: str, value, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise LabInputError(f"parameter {name}={value!r} is out of range: use a whole number from {lo} to {hi}")
    return value


def need_number(name: str, value, lo: float, hi: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not isfinite(value) or not lo <= value <= hi:
        raise LabInputError(f"parameter {name}={value!r} is out of range: use a number from {lo} to {hi}")
    return float(value)


def need_ints(name: str, values, lo: int, hi: int, max_len: int) -> list[int]:
    if not isinstance(values, (list, tuple)) or not 1 <= len(values) <= max_len:
        raise LabInputError(f"parameter {name}={values!r}: give a list of 1 to {max_len} whole numbers")
    return sorted({need_int(name, v, lo, hi) for v in values})


def need_bool(name: str, value) -> bool:
    if not isinstance(value, bool):
        raise LabInputError(f"parameter {name}={value!r}: use True or False")
    return value


def need_languages(languages, allowed=None) -> list[str]:
    allowed = catalog.paper_languages() if allowed is None else allowed  # what the labs compare: the paper's three
    if languages is None:
        return list(allowed)
    if isinstance(languages, str):
        languages = [x.strip() for x in languages.split(",") if x.strip()]
    bad = [x for x in languages if x not in allowed]
    if not languages or bad:
        raise LabInputError(f"parameter languages={languages!r}: choose from {', '.join(allowed)}")
    return list(dict.fromkeys(languages))


def missing_programs(languages) -> list[str]:
    out = []
    for lang in languages:
        try:
            exe = contract.executable(lang)
        except KeyError:
            out.append(lang)
            continue
        if not Path(exe).exists():
            out.append(f"{lang} ({catalog.language(lang).build})")
    return out


@dataclass
class LabData:
    sweep: explore.SweepView
    source: str  # "ran" | "folder"
    seconds: float
    languages: list
    extra: dict = field(default_factory=dict)  # what a lab measures besides the sweep (e.g. page faults)

    @property
    def runs(self) -> pd.DataFrame:
        return self.sweep.runs

    def ok(self, table: str | None = None) -> pd.DataFrame:
        d = self.sweep.ok()
        return d if table is None else d[d[Col.table] == table]


def _lab_sweeps(raw: Path, lab: str) -> list[Path]:
    return sorted(p for p in raw.glob(f"{lab}-*") if sweepfiles.is_sweep(p)) if raw.is_dir() else []


def get_runs(lab: str, *, run: bool, raw_folder, languages, benchmarks, overrides) -> LabData:
    """Run this lab's tiny sweep (fresh sweep id `<lab>-<UTC time>`), or read raw_folder."""
    need_bool("run", run)
    t0 = time.monotonic()
    if raw_folder:
        s = explore.load_sweep(raw_folder)
        return LabData(s, "folder", time.monotonic() - t0, languages)
    missing = missing_programs(languages) if run else []
    if not run or missing:
        # this data folder's newest, else the one committed with the package (a fresh clone)
        latest = _lab_sweeps(paths.raw_dir(), lab) or _lab_sweeps(paths.repo_root() / "data" / "raw", lab)
        if not latest:
            if missing:
                raise LabInputError(
                    f"the native programs are not built: {', '.join(missing)}, and no earlier {lab} sweep "
                    "is here to read; run ./scripts/build.sh (or ./run_all.sh --no-run) first"
                )
            raise LabInputError(
                f"run=False but there is no earlier {lab} sweep under {paths.raw_dir()} (a clone has one "
                f"committed under data/raw/{lab}-*): set run=True (or raw_folder to a sweep folder)"
            )
        if missing:
            # a classroom server (Binder, JupyterHub) without the native programs: the lab
            # still runs, on the runs recorded with the package, and says so in one line
            print(
                f"Note: the native programs are not built here ({', '.join(missing)}), so this lab reads "
                f"the recorded sweep {latest[-1].name} instead of running; ./scripts/build.sh makes it run its own."
            )
        s = explore.load_sweep(latest[-1])
        return LabData(s, "folder", time.monotonic() - t0, languages)
    from serverbench import harness

    sid = f"{lab}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    try:
        folder = harness.run_sweep(
            PROFILE, sweep_id=sid, benchmarks=benchmarks, languages=languages, overrides=overrides, progress=False
        )
    except harness.ProfileError as e:
        raise LabInputError(f"the lab's sweep cannot run: {e}") from None
    s = explore.load_sweep(folder)
    return LabData(s, "ran", time.monotonic() - t0, languages)


def describe(data: LabData) -> str:
    r = data.runs
    counts = ", ".join(f"{k} {v}" for k, v in r[Col.status].value_counts().items())
    how = (
        f"ran {len(r)} runs of the real programs in {data.seconds:.0f} s"
        if data.source == "ran"
        else f"read {len(r)} runs"
    )
    out = f"{how}: sweep {data.sweep.sweep_id} ({data.sweep.folder}); statuses: {counts}"
    if data.source == "folder":
        out += "\n  " + provenance(data.sweep.manifest)
    bad = r[r[Col.status] != "ok"]
    expected = bad[Col.table] == "spawn_max"  # the search fails its last steps on purpose
    for (lang, status), g in bad[~expected].groupby(["language", "status"]):
        why = str(g[Col.status_reason].dropna().iloc[0] if g[Col.status_reason].notna().any() else "")[:160]
        out += f"\n  {len(g)} {lang} run(s) {status}: {why}"
    if (~expected).any():
        out += "\n  (failed runs are left out of the tables and figures; the self-checks use the rest)"
    return out


def provenance(manifest: dict) -> str:
    """Where a sweep read from disk came from: when, which commit, a clean tree or not."""
    git = manifest.get(Col.git) or {}
    commit = (git.get(Col.commit) or "")[:10] or "an unknown commit"
    tree = {True: "a tree with uncommitted changes", False: "a clean tree"}.get(git.get(Col.dirty), "an unknown tree")
    when = manifest.get(Col.created_utc) or "an unknown time"
    version = manifest.get(Col.serverbench_version) or "?"
    return f"recorded {when} by serverbench {version} from commit {commit} ({tree})"


def require_ok(data: LabData, table: str) -> None:
    """One clear message when a lab has nothing to study (every run failed)."""
    if data.ok(table).empty:
        d = data.runs[data.runs[Col.table] == table]
        why = ""
        if len(d) and d[Col.status_reason].notna().any():
            why = f"; e.g. {d[Col.language].iloc[0]}: {str(d[Col.status_reason].dropna().iloc[0])[:200]}"
        raise LabInputError(
            f"sweep {data.sweep.sweep_id} has no successful {table} runs to study "
            f"({len(d)} failed{why}); rebuild with ./scripts/build.sh and run again"
        )


def sample_sweep() -> explore.SweepView | None:
    """The committed quick sweep (for citing its numbers); None if it is not there."""
    try:
        return explore.load_sweep(paths.raw_dir() / SAMPLE_SWEEP)
    except explore.SweepInputError:
        try:
            return explore.load_sweep(paths.repo_root() / "data" / "raw" / SAMPLE_SWEEP)
        except explore.SweepInputError:
            return None


def median(d: pd.DataFrame, metric: str, **where) -> float:
    for k, v in where.items():
        d = d[d[k] == v]
    vals = d[metric].dropna()
    return float(vals.median()) if len(vals) else float("nan")


def md(text: str):
    """Markdown for a notebook (plain text elsewhere)."""
    try:
        from IPython.display import Markdown

        return Markdown(text)
    except ImportError:  # pragma: no cover
        return text


def reveal(solutions: bool, text: str):
    return md(
        text
        if solutions
        else "*(The explanation is hidden: answer the exercise first; a teacher's copy "
        "is run with `-p solutions True`.)*"
    )
