"""Distribution-free statistics of benchmark trials: medians, their intervals, and the ratio
paired by round that every verdict uses (docs/statistics.md). The bottom wing: it imports no
other part of the analysis."""
