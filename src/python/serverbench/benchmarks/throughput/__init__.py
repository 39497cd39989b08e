"""Throughput (Fig. 5): P pairs exchange messages for a fixed time on C cores."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=3,
    analysis=("tables", "figures", "claims", "warmup"),
    parts=("cost",),
    metric=("exchanges_per_s", False),
    figures={"fig5": "fig5_throughput"},
    columns=(
        "params.pairs",
        "params.duration_s",
        "params.report_every",
        "metrics.exchanges",
        "metrics.exchanges_per_s",
        "metrics.paper_msgs_per_min",
    ),
)
