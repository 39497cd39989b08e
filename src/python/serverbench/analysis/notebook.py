"""What the notebooks call: find or run the sweep, process it, hand back the tables.
Keeps the notebooks thin (parameters, one call, a figure, a table)."""

from __future__ import annotations

from pathlib import Path

from serverbench import paths
from serverbench.analysis import claims as claims_mod
from serverbench.analysis import process

# notebook benchmark names -> harness benchmark names
FIGURE_BENCHMARKS = {"fig3": ["pingping"], "fig4": ["spawn", "spawn_max"], "fig5": ["throughput"]}


class NoSweepError(FileNotFoundError):
    pass


def resolve_sweep(profile: str = "quick", sweep_id: str | None = None, raw_folder: str | None = None,
                  run_sweep: bool = False, benchmarks=None, languages=None, overrides=None) -> Path:
    """The raw sweep folder to analyse. raw_folder wins; run_sweep runs (or resumes) the
    harness for these benchmarks; otherwise sweep_id under data/raw/, or the newest sweep
    of the profile."""
    if raw_folder:
        p = Path(raw_folder)
        if not p.is_dir():
            raise NoSweepError(f"raw folder {p} does not exist")
        return p
    if run_sweep:
        from serverbench import harness

        return Path(harness.run_sweep(profile, sweep_id=sweep_id, benchmarks=benchmarks, languages=languages,
                                      overrides=overrides, progress=False))
    if sweep_id:
        p = paths.raw_dir() / sweep_id
        if not p.is_dir():
            raise NoSweepError(f"no sweep {sweep_id!r} under {paths.raw_dir()}")
        return p
    from serverbench import harness

    p = harness.latest_sweep(profile)
    if p is None:
        raise NoSweepError(f"no sweep of profile {profile!r} under {paths.raw_dir()}; run one first "
                           f"(python -m serverbench run --profile {profile}) or pass run_sweep=True")
    return Path(p)


def _up_to_date(sweep_dir: Path, out: Path, spawn_metric: str) -> bool:
    """The processed tables are newer than every raw file of the sweep (and made with
    the same spawn metric): the notebooks after the first reuse them."""
    stamp = out / ".processed_from"
    if not stamp.exists() or not (out / "claims.csv").exists():
        return False
    raw_files = [p for p in Path(sweep_dir).iterdir() if p.is_file()]
    newest = max((p.stat().st_mtime_ns for p in raw_files), default=0)
    return stamp.read_text(encoding="utf-8") == f"{Path(sweep_dir).resolve()}|{newest}|{spawn_metric}"


def prepare(sweep_dir, spawn_metric: str = "all_ready_s", force: bool = False) -> process.Processed:
    """Process the sweep into data/processed/<sweep-id>/ (tables and claims) and load them.
    Skips the work when the tables are already up to date with the raw files."""
    sweep_dir = Path(sweep_dir)
    out = paths.processed_dir() / sweep_dir.name
    if not force and _up_to_date(sweep_dir, out, spawn_metric):
        return process.Processed(out)
    written = process.process_sweep(sweep_dir)
    out = written["runs"].parent
    P = process.Processed(out)
    claims_mod.write_claims(P, spawn_metric=spawn_metric)
    newest = max((p.stat().st_mtime_ns for p in sweep_dir.iterdir() if p.is_file()), default=0)
    (out / ".processed_from").write_text(f"{sweep_dir.resolve()}|{newest}|{spawn_metric}", encoding="utf-8")
    return P


def figures_dir(paper_dir=None) -> Path:
    return Path(paper_dir) / "figures" if paper_dir else paths.figures_dir()
