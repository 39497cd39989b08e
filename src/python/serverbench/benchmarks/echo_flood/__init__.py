"""Echo flood (docs/sockets.md): N connections each send D bytes to an echo server over loopback."""

from serverbench import plugins

# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=4,
    analysis=("figures", "claims", "report"),
    parts=("cost", "sockets"),
    metric=("elapsed_s", True),
)
