"""The IM table: one row per generator run, `server_language` the server it loaded (one
of ours, ngircd or InspIRCd), and the reading of its records that every IM figure and
claim uses (`runs`): which runs the generator limited and which lost messages without
chaos (the server's failure, kept and marked, never dropped)."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.reading import registry

TABLE = "im"
KEYS = (
    "variant",
    "server_language",
    "placement",
    "mode",
    "clients",
    "rate_per_s",
    "schedule",
    "channel_size",
    "payload_bytes",
    "duration_s",
)
registry.table(
    registry.TableSpec(
        name=TABLE,
        benchmark="im",
        keys=KEYS,
        metrics=(
            "latency_p99_s",
            "latency_p50_s",
            "latency_p999_s",
            "deliveries_per_s",
            "login_s",
            "clients_registered",
            "messages_lost",
            "client_cpu_share",
            "schedule_slip_p99_s",
        ),
        ratio_metric="latency_p99_s",
        explore_x="rate_per_s",
    )
)
# the server's own record, flattened into the run's columns (absent for ngircd and InspIRCd)
SERVER_CHAOS = "server.record.params.chaos_interval_ms"
SERVER_KILLED = "server.record.metrics.sessions_killed"
# the generator's two reasons for an invalid run (src/im_loadgen/src/record.rs), carried
# into the run's status_reason by the harness (classify: "...validation failed: <reason>")
GENERATOR_LIMITED = r"\bgenerator (?:CPU share|schedule slip)"


def runs(P, mode: str | None = None) -> pd.DataFrame:
    """Selected, non-warm-up IM runs (of one mode, if given) with two columns added:
    `generator_limited` (the generator's record says it was the bottleneck: one of its two
    reasons in the run's status_reason) and `server_failed` (messages lost while
    the server ran without chaos). Runs the generator limited are kept so a figure can
    show them hollow; the analysis never counts them as the server's result."""
    r = P.runs
    if r is None or r.empty or "table" not in r:
        return pd.DataFrame()
    d = r[(r["table"] == TABLE) & r["selected"] & ~r["warmup"].astype(bool)].copy()
    if d.empty:
        return d
    if mode is not None:
        d = d[d["mode"] == mode]
    return mark(d)


def mark(d: pd.DataFrame) -> pd.DataFrame:
    """The two judgements of a run, from its own columns (see runs)."""
    d = d.copy()
    reason = d["status_reason"] if "status_reason" in d else pd.Series(None, index=d.index, dtype=object)
    d["generator_limited"] = reason.fillna("").astype(str).str.contains(GENERATOR_LIMITED)
    chaos = pd.to_numeric(d[SERVER_CHAOS], errors="coerce").fillna(0) if SERVER_CHAOS in d else 0
    lost = pd.to_numeric(d["messages_lost"], errors="coerce").fillna(0) if "messages_lost" in d else 0
    d["server_failed"] = (lost > 0) & (chaos == 0)
    return d
