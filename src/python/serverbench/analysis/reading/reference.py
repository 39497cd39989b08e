"""The paper's own values, read from data/reference/ (extracted from the authors'
spreadsheets; see data/reference/README.md). Nothing here is typed in by hand.

Which table feeds which overlay:
* Fig. 3: paper_fig3_pingping.csv (one value per point; single run or summary unknown).
* Fig. 4 (a): paper_fig4_spawn_summary.csv, rows plotted in the sheet's chart (MEANS, not
  medians) plus the first failing N per language.
* Fig. 4 (b): paper_fig4b_spawn.csv.
* Fig. 5: medians of the three runs recomputed from paper_fig5_throughput.csv. The sheet's
  own median block has one broken cell (Erlang, 1 core, 4 pairs points at another cell);
  fig5_median(as_plotted=True) returns the sheet's block, error included.
"""

from __future__ import annotations

import pandas as pd

from serverbench.paths import reference_dir
from serverbench.rawdata.columns import Col

FILES = {
    "fig3": "paper_fig3_pingping.csv",
    "fig4_runs": "paper_fig4_spawn.csv",
    "fig4a": "paper_fig4_spawn_summary.csv",
    "fig4b": "paper_fig4b_spawn.csv",
    "fig5_runs": "paper_fig5_throughput.csv",
    "fig5_median": "paper_fig5_throughput_median.csv",
}
# The TCP write-up's server names -> ours, where they differ (data/reference/README.md).
ECHO_SERVER_LANGUAGE = {"scale_stack_cpp": "c", "go_v2": "go"}


def echo_server_language(name: str) -> str:
    """Our language for a server the TCP write-up names (its go_v1 has no counterpart)."""
    return ECHO_SERVER_LANGUAGE.get(name, name)


def load(name: str) -> pd.DataFrame:
    path = reference_dir() / FILES[name]
    if not path.exists():
        raise FileNotFoundError(f"reference table {path} is missing (copy data/reference/ from the repository)")
    return pd.read_csv(path)


def fig3() -> pd.DataFrame:
    return load("fig3")[["language", "message_bytes", "repetitions", "time_s"]]


def fig4a() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(points, failures): the 'Average' block as plotted in the sheet's chart, and per
    language the smallest N recorded as failing (status not ok)."""
    d = load("fig4a")
    pts = d[(d[Col.status] == "ok") & (d["plotted_in_sheet_chart"].astype(str) == "True")]
    pts = pts[["language", "processes", "time_s", "n_runs_recorded"]].copy()
    fails = d[d[Col.status] != "ok"].sort_values("processes").groupby("language", as_index=False).first()
    return pts.reset_index(drop=True), fails[["language", "processes", "status", "status_raw"]]


def fig4b() -> pd.DataFrame:
    return load("fig4b")[["language", "processes", "time_s"]]


def fig5_median(as_plotted: bool = False) -> pd.DataFrame:
    """Per (language, cores, pairs) the paper's exchanges per minute. Default: the median
    of the three recorded runs (recomputed; fixes the sheet's one broken cell). With
    as_plotted=True: the sheet's median block exactly as its chart plots it."""
    if as_plotted:
        d = load("fig5_median")
        return d[["language", "cores", "pairs", "messages_per_min"]].rename(
            columns={"messages_per_min": "msgs_per_min"}
        )
    d = load("fig5_runs")
    g = d.groupby(["language", "cores", "pairs"], as_index=False)["messages_per_min"].median()
    return g.rename(columns={"messages_per_min": "msgs_per_min"})


def fig5_runs() -> pd.DataFrame:
    return load("fig5_runs")[["language", "cores", "pairs", "run", "messages_per_min"]]
