"""`python -m serverbench run`: a sweep in up to two stages (docs/statistics.md, "The
second stage").

Stage 1 is the profile's plan (harness.sweep). When the profile has a [second_stage]
table, the claims are then decided on stage 1's trials alone (analysis), and the
undecided comparisons of inconclusive claims, ranked by how likely more rounds are to
decide them (analysis.second_stage), get `rounds` more rounds of every language of their
configuration, within `budget_fraction` of stage 1's measured time and what stage 1 left
of `deadline_s` (harness again, the records marked stage 2). The choice depends only on stage 1's records, so resuming a
sweep makes the same choice. This module sits above the harness and the analysis: neither
imports the other.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from serverbench.harness import cli as harness_cli
from serverbench.harness import rawlog, sweep
from serverbench.harness import second_stage as harness_second_stage
from serverbench.harness.plan import estimate_task_s, make_plan
from serverbench.harness.profiles import ProfileError, load_profile
from serverbench.harness.sweep import read_lines


def register(subparsers) -> None:
    r = subparsers.add_parser(
        "run",
        help="run (or resume) a sweep of native runs into data/raw/<sweep-id>/",
        description="Run a sweep: every run a fresh, pinned, capped process; every result appended to "
        "data/raw/<sweep-id>/runs.jsonl. Starting the same --sweep-id again resumes it. A profile with a "
        "[second_stage] table then gives extra rounds to the comparisons still undecided (stage 2).",
    )
    harness_cli.add_run_arguments(r)
    r.set_defaults(func=_cmd_run)


def _cmd_run(args, stdout, stderr) -> int:
    req = harness_cli.run_request(args)
    try:
        sweep_dir = sweep.run_sweep(**req)  # looked up at call time: tests replace it
        harness_cli.print_session(sweep_dir, req["shard"], stdout)
        extra = second_stage_request(sweep_dir, req)
    except ProfileError as e:
        raise harness_cli._usage(e) from None
    if extra is None:
        return 0
    print(f"second stage: {describe(extra)}", file=stdout)
    for c in extra["chosen"]:
        print(f"  {c['claim']}: {c['comparison']} (P(decide) {c['p_decide']:.2f})", file=stdout)
    if extra["config_ids"]:
        try:
            sweep.run_sweep(**{**req, "sweep_id": sweep_dir.name}, extra=extra)
        except ProfileError as e:
            raise harness_cli._usage(e) from None
        harness_cli.print_session(sweep_dir, None, stdout)
    return 0


def describe(extra: dict) -> str:
    n = len(extra["chosen"])
    capped = ""
    if extra.get("deadline_s") is not None and extra.get("stage1_s") is not None:
        capped = f"; stage 1 took {extra['stage1_s']:.0f} s of the {extra['deadline_s']:.0f} s deadline"
    return (
        f"{n} undecided comparison(s) of {extra['candidates']} get {extra['rounds']} more round(s) "
        f"(~{extra['estimated_s']:.0f} s of a {extra['budget_s']:.0f} s budget{capped})"
    )


def second_stage_request(sweep_dir: Path, req: dict) -> dict | None:
    """The second stage's request for run_sweep(extra=...), or None when the profile has
    none (or this is a shard: the second stage needs the whole sweep's trials)."""
    prof = load_profile(req["profile"], req["overrides"])
    st = prof["second_stage"]
    if not st["enabled"] or req.get("shard") is not None:
        return None
    plan = make_plan(prof, req["languages"], req["benchmarks"], req["oversubscribe"])
    stage1 = [r for r in read_lines(Path(sweep_dir) / rawlog.names(None)["runs"]) if int(r.get("stage") or 1) == 1]
    stage1_s = stage1_seconds(Path(sweep_dir))
    budget = harness_second_stage.budget_s(st, stage1_s)
    rounds = st["rounds"]
    ranked = _ranked(Path(sweep_dir), rounds)
    in_plan = {t.config_id for t in plan.tasks}
    ranked = [c for c in ranked if set(c.config_ids) <= in_plan]
    wall = _measured_wall(stage1)

    def cost_s(config_ids: set[str]) -> float:
        if not config_ids:
            return 0.0
        tasks = plan.extra_rounds(config_ids, rounds).tasks
        return sum(wall.get(t.config_id, estimate_task_s(t)) + harness_second_stage.OVERHEAD_S for t in tasks)

    from serverbench.analysis import second_stage

    chosen, spent = second_stage.choose(ranked, cost_s, budget)
    ids = sorted({i for c in chosen for i in c.config_ids})
    return {
        "config_ids": ids,
        "rounds": rounds,
        "budget_s": round(budget, 1),
        "stage1_s": round(stage1_s, 1),
        "deadline_s": st.get("deadline_s"),
        "estimated_s": round(spent, 1),
        "candidates": len(ranked),
        "chosen": [c.as_dict() for c in chosen],
    }


def stage1_seconds(sweep_dir: Path) -> float:
    """Wall time of the sweep's stage-1 sessions (analysis.sweepinfo reads it the same way)."""
    from serverbench.analysis.sweepinfo import stage1_seconds as from_sessions

    return from_sessions(read_lines(sweep_dir / rawlog.names(None)["sessions"])) or 0.0


def _measured_wall(records: list[dict]) -> dict[str, float]:
    """Mean wall time per configuration over its stage-1 attempts that ran."""
    sums: dict[str, list[float]] = {}
    for r in records:
        if r.get("wall_s") is not None and not r.get("warmup"):
            sums.setdefault(r["config_id"], []).append(float(r["wall_s"]))
    return {k: sum(v) / len(v) for k, v in sums.items()}


def _ranked(sweep_dir: Path, rounds: int):
    """Stage 1's verdicts and their ranked candidates (analysis.second_stage)."""
    from serverbench.analysis import process, second_stage
    from serverbench.analysis.claims import engine

    with tempfile.TemporaryDirectory(prefix="serverbench-stage1-") as tmp:
        process.process_sweep(sweep_dir, out_dir=tmp, skip_bad=True)
        P = process.Processed(tmp)
        if "stage" in P.runs.columns:
            P.runs = P.runs[P.runs["stage"].fillna(1).astype(int) <= 1]
        verdicts = engine.check_all(P)
        return second_stage.candidates(verdicts, P.runs, rounds)
