"""PingPing (Fig. 3): two processes pass one message back and forth R times."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=1,
    analysis=("tables", "figures", "claims", "c10"),
    parts=("cost",),
    metric=("elapsed_s", True),
    figures={"fig3": "fig3_pingping"},
    columns=(
        "params.message_bytes",
        "params.repetitions",
        "params.payload",
        "metrics.elapsed_s",
        "metrics.ns_per_message",
    ),
)
