"""The committed reports' report.json files (written beside each report.html by
pipeline.write_report_info): which sweep and profile each report was rendered from, read
here for paper/README.md's list of reports and for the links one report gives to another
(the main report's to the IM case study's and the 2026 runtimes' reports)."""

from __future__ import annotations

import json
from pathlib import Path

from serverbench import paths
from serverbench.errors import UsageError
from serverbench.rawdata.columns import Col

REPORT_INFO = "report.json"


def read(f: Path) -> dict:
    """One report.json, or a UsageError naming the file: a hand-edited or half-written file
    should say which report to render again, not end `serverbench docs` in a traceback."""
    try:
        d = json.loads(f.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise UsageError(
            f"{paths.portable(str(f))}: not valid JSON ({e.msg}, line {e.lineno}); render that report again"
        ) from e
    missing = [k for k in ("sweep_id", "profile", "verdicts", "command") if not isinstance(d, dict) or k not in d]
    if missing:
        raise UsageError(f"{paths.portable(str(f))}: lacks {', '.join(missing)}; render that report again")
    return d


def report_of(sweep_id: str, paper: Path | None = None) -> Path | None:
    """The committed report.html rendered from this sweep (a <paper>/**/report.json naming
    it), or None; a corrupt report.json is a UsageError naming it, as in reports_markdown."""
    paper = Path(paper) if paper else paths.paper_dir()
    for f in sorted(paper.rglob(REPORT_INFO)):
        if read(f)[Col.sweep_id] == sweep_id:
            return f.parent / "report.html"
    return None


def report_of_profile(profile: str, paper: Path | None = None) -> tuple[str, Path] | None:
    """(sweep, report.html) of the committed report of a profile's newest sweep (by sweep
    id), or None when no report of that profile is committed."""
    paper = Path(paper) if paper else paths.paper_dir()
    found = [(d[Col.sweep_id], f) for f in paper.rglob(REPORT_INFO) if (d := read(f))[Col.profile] == profile]
    if not found:
        return None
    sweep, f = max(found)
    return sweep, f.parent / "report.html"


def link_from_main(html: Path, paper: Path | None = None) -> str:
    """A committed report's path relative to the main report's folder (paper/): the href of
    a link from the main report, 'im/report.html'."""
    paper = Path(paper) if paper else paths.paper_dir()
    try:
        return Path(html).resolve().relative_to(paper.resolve()).as_posix()
    except ValueError:
        return paths.portable(str(html))
