"""The generated docs blocks that read committed data: README's findings, the paper reports'
index, the instructor guide's answer key, the gap and dimensioning tables (docsgen.BLOCKS
names them). Each imports its layer when called, so that `serverbench docs --check` on the
spec's blocks does not load the analysis."""

from __future__ import annotations

from serverbench.docsgen.markdown import ROOT
from serverbench.rawdata.columns import Col


def paper_reports() -> str:
    from serverbench.analysis.reporting import pipeline

    return pipeline.reports_markdown(ROOT / "paper")


def instructor_guide() -> str:
    from serverbench.teaching import guide

    return guide.markdown()


def readme_abstract() -> str:
    from serverbench.analysis.reporting import readme

    return readme.abstract_block()


def readme_then_and_now() -> str:
    from serverbench.analysis.reporting import readme

    return readme.then_and_now_block()


def readme_findings() -> str:
    from serverbench.analysis.reporting import readme

    return readme.findings_block()


def readme_paper_scale() -> str:
    from serverbench.analysis.reporting import paperscale

    return paperscale.readme_lines()


def readme_im() -> str:
    from serverbench.benchmarks.im import report

    return report.readme_block()


def gap_table() -> str:
    """The attribution of the gap to the paper's values, combined from every committed gap sweep."""
    from serverbench.analysis.reading import gap_tables

    tables = gap_tables.committed()
    if not tables:
        return "No gap sweep is committed: the decomposition has not been measured yet."
    t = gap_tables.combine(tables)
    used = sorted(set(t.loc[t[Col.ratio].notna(), "sweep"]))
    return f"From {', '.join(f'`{s}`' for s in used) or 'no measured row'}:\n\n" + gap_tables.markdown(t).rstrip("\n")


def dimension_tables() -> str:
    from serverbench.analysis.reporting import dimension

    return dimension.markdown()
