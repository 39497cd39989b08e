"""The forest plot of the report's decisions looks the same whatever the process drew
before it: matplotlib's rcParams are global, and the figure modules set the figures' style
there, so a forest drawn after Fig. 3 and one drawn first differed in font size (the
committed forest-*.png changed with the order in which a report drew its figures)."""

from __future__ import annotations

from types import SimpleNamespace

import matplotlib.pyplot as plt
import pandas as pd

from serverbench.analysis.plotting import forest


def _verdicts():
    e = pd.DataFrame(
        {
            "comparison": ["go / erlang, time", "go / akka, time"],
            "config": ["size=100", "size=1000"],
            "ratio": [0.5, 1.7],
            "ci_lo": [0.4, 1.2],
            "ci_hi": [0.6, 2.4],
            "yes_lo": [0.0, 0.0],
            "yes_hi": [0.9, 0.9],
            "no_below": [float("nan")] * 2,
            "no_above": [1.1, 1.1],
            "result": ["yes", "no"],
        }
    )
    return [SimpleNamespace(id="C1", verdict="contradicted", evidence=e)]


def test_a_forest_drawn_after_other_styles_is_the_same_picture(tmp_path):
    plt.rcdefaults()
    (first,) = forest.draw(_verdicts(), tmp_path / "a")
    plt.rcParams.update({"font.size": 16, "axes.titlesize": 20})  # what another figure may leave
    (second,) = forest.draw(_verdicts(), tmp_path / "b")
    plt.rcdefaults()
    assert first.read_bytes() == second.read_bytes()
