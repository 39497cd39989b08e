"""Raw logs -> processed tables, statistics, the paper's claims, figures and the report."""

from __future__ import annotations


def verdicts_for_sweep(sweep_dir, spawn_metric: str = "all_ready_s") -> dict[str, str]:
    """{claim id: verdict} for a raw sweep folder, processed into a temporary folder
    (nothing under data/processed is written). For the stability command."""
    import tempfile
    from pathlib import Path

    from serverbench.analysis import claims, process

    with tempfile.TemporaryDirectory(prefix="serverbench-verdicts-") as tmp:
        process.process_sweep(Path(sweep_dir), Path(tmp))
        return {v.id: v.verdict for v in claims.check_all(process.Processed(Path(tmp)), spawn_metric)}
