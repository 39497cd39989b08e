"""TCP ping-pong (docs/sockets.md): a client and a server exchange round trips over loopback."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=6,
    analysis=("figures", "claims", "report"),
    parts=("cost", "sockets"),
    metric=("true_us_per_round_trip", True),
)
