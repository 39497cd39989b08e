"""IM (the paper's case study, docs/im.md): an IRC-subset instant-messaging server in each
language, loaded by the one open-loop generator (language im_loadgen)."""

from serverbench import plugins

# the title of its report section (report.py), which its profile's sub-report opens with
TITLE = "Does the paper's advice hold for a whole server?"
# what the package declares, once (the fields: serverbench.plugins.Declared)
DECLARED = plugins.Declared(
    order=6,
    analysis=("tables", "claims", "figures", "report", "report_v5"),
    parts=("cost", "search", "sockets"),
    metric=("latency_p99_s", True),
    notebook="im",
    subject=(TITLE,),
)
