"""What every lab shares: parameter checks, getting the lab's runs, self-checks.

A lab notebook calls `load(...)` once (it validates the parameters, runs the real
native programs through the harness with the `lab` profile, or reads an existing
sweep folder) and then, per exercise, `check(exercise, answer, data, solutions)`,
which prints "correct" or a hint computed from the measured data.

Bad input raises LabInputError: one sentence, shown by Jupyter without a traceback.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from math import isfinite
from pathlib import Path
from typing import Any

import pandas as pd

from serverbench import contract, paths
from serverbench.analysis import explore

PROFILE = "lab"
SAMPLE_SWEEP = "quick-20261121T134551Z"  # committed: data/raw/quick-20261121T134551Z
LANGUAGES = ("erlang", "go", "scala_akka")


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


def need_languages(languages, allowed=LANGUAGES) -> list[str]:
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
            out.append(f"{lang} ({contract.language(lang).get('build', 'scripts/build.sh')})")
    return out


@dataclass
class LabData:
    sweep: explore.Sweep
    source: str  # "ran" | "folder"
    seconds: float
    languages: list
    extra: dict = field(default_factory=dict)  # what a lab measures besides the sweep (e.g. page faults)

    @property
    def runs(self) -> pd.DataFrame:
        return self.sweep.runs

    def ok(self, table: str | None = None) -> pd.DataFrame:
        d = self.sweep.ok()
        return d if table is None else d[d["table"] == table]


def _lab_sweeps(raw: Path, lab: str) -> list[Path]:
    return sorted(p for p in raw.glob(f"{lab}-*") if (p / "runs.jsonl").exists()) if raw.is_dir() else []


def get_runs(lab: str, *, run: bool, raw_folder, languages, benchmarks, overrides) -> LabData:
    """Run this lab's tiny sweep (fresh sweep id `<lab>-<UTC time>`), or read raw_folder."""
    need_bool("run", run)
    t0 = time.monotonic()
    if raw_folder:
        s = explore.load_sweep(raw_folder)
        return LabData(s, "folder", time.monotonic() - t0, languages)
    if not run:
        # this data folder's newest, else the one committed with the package (a fresh clone)
        latest = _lab_sweeps(paths.raw_dir(), lab) or _lab_sweeps(paths.repo_root() / "data" / "raw", lab)
        if not latest:
            raise LabInputError(
                f"run=False but there is no earlier {lab} sweep under {paths.raw_dir()} (a clone has one "
                f"committed under data/raw/{lab}-*): set run=True (or raw_folder to a sweep folder)"
            )
        s = explore.load_sweep(latest[-1])
        return LabData(s, "folder", time.monotonic() - t0, languages)
    missing = missing_programs(languages)
    if missing:
        raise LabInputError(
            f"the native programs are not built: {', '.join(missing)}; run ./scripts/build.sh "
            "(or ./run_all.sh --no-run) first"
        )
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
    counts = ", ".join(f"{k} {v}" for k, v in r["status"].value_counts().items())
    how = (
        f"ran {len(r)} runs of the real programs in {data.seconds:.0f} s"
        if data.source == "ran"
        else f"read {len(r)} runs"
    )
    out = f"{how}: sweep {data.sweep.sweep_id} ({data.sweep.folder}); statuses: {counts}"
    if data.source == "folder":
        out += "\n  " + provenance(data.sweep.manifest)
    bad = r[r["status"] != "ok"]
    expected = bad["table"] == "spawn_max"  # the search fails its last steps on purpose
    for (lang, status), g in bad[~expected].groupby(["language", "status"]):
        why = str(g["status_reason"].dropna().iloc[0] if g["status_reason"].notna().any() else "")[:160]
        out += f"\n  {len(g)} {lang} run(s) {status}: {why}"
    if (~expected).any():
        out += "\n  (failed runs are left out of the tables and figures; the self-checks use the rest)"
    return out


def provenance(manifest: dict) -> str:
    """Where a sweep read from disk came from: when, which commit, a clean tree or not."""
    git = manifest.get("git") or {}
    commit = (git.get("commit") or "")[:10] or "an unknown commit"
    tree = {True: "a tree with uncommitted changes", False: "a clean tree"}.get(git.get("dirty"), "an unknown tree")
    when = manifest.get("created_utc") or "an unknown time"
    version = manifest.get("serverbench_version") or "?"
    return f"recorded {when} by serverbench {version} from commit {commit} ({tree})"


def require_ok(data: LabData, table: str) -> None:
    """One clear message when a lab has nothing to study (every run failed)."""
    if data.ok(table).empty:
        d = data.runs[data.runs["table"] == table]
        why = ""
        if len(d) and d["status_reason"].notna().any():
            why = f"; e.g. {d['language'].iloc[0]}: {str(d['status_reason'].dropna().iloc[0])[:200]}"
        raise LabInputError(
            f"sweep {data.sweep.sweep_id} has no successful {table} runs to study "
            f"({len(d)} failed{why}); rebuild with ./scripts/build.sh and run again"
        )


def sample_sweep() -> explore.Sweep | None:
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


# ---------------------------------------------------------------------------------------
@dataclass
class Exercise:
    key: str
    question: str
    solve: Callable[[Any], Any]  # data -> the right answer (from the measurements)
    judge: Callable[[Any, Any], tuple[bool, str]]  # (answer, truth) -> (correct?, hint)
    why: Callable[[Any, Any], str]  # (data, truth) -> the explanation shown with solutions
    solution: Callable[[Any], Any] | None = None  # truth -> the answer to show (default: truth itself)


def within_factor(factor: float, unit: str = "") -> Callable[[Any, Any], tuple[bool, str]]:
    def judge(answer, truth):
        if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not isfinite(answer) or answer <= 0:
            return False, f"answer with a positive number{(' in ' + unit) if unit else ''}, e.g. 12.5"
        if truth / factor <= answer <= truth * factor:
            return True, ""
        side = "too low" if answer < truth else "too high"
        return False, (
            f"{side} (more than {factor:g}x off the measurement); look again at the table above and recompute"
        )

    return judge


def within_abs(tol: float) -> Callable[[Any, Any], tuple[bool, str]]:
    def judge(answer, truth):
        if isinstance(answer, bool) or not isinstance(answer, (int, float)) or not isfinite(answer):
            return False, "answer with a number"
        if abs(answer - truth) <= tol:
            return True, ""
        return False, f"{'too low' if answer < truth else 'too high'} (off by more than {tol:g})"

    return judge


def one_of(options) -> Callable[[Any, Any], tuple[bool, str]]:
    opts = [str(o).lower() for o in options]

    def judge(answer, truth):
        a = str(answer).strip().lower()
        if a not in opts:
            return False, f"answer with one of: {', '.join(repr(o) for o in opts)}"
        good = {str(t).lower() for t in (truth if isinstance(truth, (set, list, tuple)) else [truth])}
        return (True, "") if a in good else (False, "not what the measurements say; compare the numbers again")

    return judge


def show_truth(truth) -> str:
    if isinstance(truth, (set, list, tuple)):
        return " or ".join(map(str, sorted(truth)))
    if isinstance(truth, float):
        return f"{truth:,.0f}" if abs(truth) >= 1000 else f"{truth:.3g}"
    return str(truth)


def check(exercise: Exercise, answer, data, solutions: bool = False) -> bool | None:
    """Print 'correct' or a hint. With solutions=True and no answer, use the solution."""
    try:
        truth = exercise.solve(data)
    except (KeyError, ValueError, IndexError) as e:
        print(f"cannot check {exercise.key}: the runs needed are missing ({e})")
        return None
    if truth is None or (isinstance(truth, float) and not isfinite(truth)):
        print(f"cannot check {exercise.key}: the runs needed for it are missing or failed in this sweep")
        return None
    if answer is None and solutions:
        if exercise.solution is not None:
            answer = exercise.solution(truth)
        else:
            answer = truth if not isinstance(truth, (set, list, tuple)) else sorted(truth)[0]
        print(f"solution: {show_truth(answer if exercise.solution is not None else truth)}")
    if answer is None:
        print(f"no answer yet: set the answer variable in the cell above to {exercise.question}")
        return None
    ok, hint = exercise.judge(answer, truth)
    print("correct" if ok else f"hint: {hint}")
    if solutions or ok:
        print("why: " + exercise.why(data, truth))
    return ok


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
