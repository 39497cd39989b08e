"""Recovery (the paper's future work): throughput while workers crash and are restarted."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=5,
    analysis=("figures", "report"),
    parts=("cost",),
    metric=("exchanges_per_s", False),
)
