"""Running a replicated search (planning.search.Search with a kind: IM's capacity, rate,
chaos, fan-out and memory-cap searches; protocol 5's im.search and im.memory).

The walks are pure (`rate_walk`, `doubling_walk`): they ask `step(value, phase, runs)` for
"pass" | "fail" | "censored" and return the result. A rate search: the scout (one run a
step, climbing by scout_factor) until a run does not pass; replicated steps of step_runs
runs on the grid from the scout's last pass (the grid's start when none), up while a step
passes or down while one fails, until a pass lies one grid step below a failure; then
geometric bisection until failed / passed <= bisect_ratio. A doubling search (memory):
one run a probe from the start, doubling until a probe fails or the maximum, then the same
bisection. A censored step stops either: the value is at least the last pass.

`run_replicated` drives a walk with real runs: every run is attempted until the
benchmark's re-run rule (its part's rerun_reason) lets it be, at most 1 + reruns times;
every attempt is appended to the raw log with its search fields (phase, step, run,
attempt, rerun_reason, rerun_of, final, run_verdict, why_not; the step's verdict on its
last record); a resumed sweep reuses every attempt already in the log. `run_attempts` runs
a plain grid run of a benchmark that declares a rule for them (plugins.SearchHooks.grid_rerun:
IM's grid follows its searches' rule) the same way, its attempts marked with the same fields."""

from __future__ import annotations

from collections.abc import Callable

from serverbench import catalog, plugins
from serverbench.harness.planning import walks
from serverbench.harness.planning.search import Search
from serverbench.rawdata.columns import Col

PASS, FAIL, CENSORED = walks.PASS, walks.FAIL, walks.CENSORED


def marks(why: str | None, attempt: int, prev: str | None, reruns: int) -> dict:
    """One attempt's re-run fields (raw `search`): its number, why it is re-run (None: it is
    not), the reason of the attempt it repeats, and whether it is the run's (`final`: not
    re-run, or the last of 1 + reruns attempts)."""
    return {"attempt": attempt, "rerun_reason": why, "rerun_of": prev, "final": why is None or attempt > reruns}


def grid_rule(benchmark: str) -> plugins.SearchHooks | None:
    """The benchmark's own re-run rule of its grid runs (its search module's HOOKS.grid_rerun:
    IM's), or None: the harness's own rule then (recording.sweep)."""
    hooks = catalog.benchmark(benchmark).search_hooks
    return hooks if hooks is not None and hooks.grid_rerun is not None else None


def run_attempts(run_once: Callable, rule: plugins.SearchHooks, before: dict | None = None) -> dict:
    """One grid run by its benchmark's re-run rule (grid_rule): attempted until
    rule.grid_rerun(record) is None, at most 1 + rule.grid_reruns times, every attempt marked
    in its raw `search` as a search run's are (marks; no name: not a search step); the last
    attempt is the run's; an attempt that repeats one flagged interfered also says so as the
    harness's own re-run does (rerun_of_interfered). run_once(finish) runs ONE attempt and
    returns its record as logged (finish completes it before it is written); `before` is the
    run's last attempt already in the log (a resumed sweep): an unfinished chain goes on from it."""
    got = (before or {}).get(Col.search) or {}
    going_on = got.get("final") is False
    attempt, prev = (got[Col.attempt] + 1, got.get("rerun_reason")) if going_on else (1, None)
    flagged = going_on and (before or {}).get(Col.interfered) is True
    while True:

        def finish(r, attempt=attempt, prev=prev, flagged=flagged):
            r[Col.search] = marks(rule.grid_rerun(r), attempt, prev, rule.grid_reruns)
            if flagged:
                r[Col.rerun_of_interfered] = True

        rec = run_once(finish)
        got = rec[Col.search]
        if got["final"]:
            return rec
        attempt, prev, flagged = attempt + 1, got["rerun_reason"], rec.get(Col.interfered) is True


def _prior(seen: dict, task) -> dict | None:
    want = {k: task.search[k] for k in ("name", "step", "run", "attempt")}
    for r in seen.get(task.config_id, []):
        got = r.get(Col.search) or {}
        if all(got.get(k) == v for k, v in want.items()):
            return r
    return None


def run_replicated(s: Search, seen: dict, execute, skipped_step=None) -> dict:
    """Run (or resume) one replicated search and its follow-up runs (IM: the chaos loss
    runs); its outcome for the session log. execute(task, finish) -> record runs ONE
    attempt (finish completes the record before it is written)."""
    part, cfg = s.declared.part, s.settings
    step_count = run_count = 0  # steps walked; runs (attempts) of the search itself
    reruns: list[dict] = []

    def attempt_run(task_of, run: int, before: list[dict], last_of_step: bool, judge_step: bool = True) -> dict:
        nonlocal run_count
        rec, prev_reason = {}, None
        for attempt in range(1, cfg[Col.reruns] + 2):
            task = task_of(run, attempt)

            def finish(r, attempt=attempt, prev=prev_reason):
                marked = marks(part.rerun_reason(r, s.kind), attempt, prev, cfg[Col.reruns])
                final = marked["final"]
                verdict, why_not = part.judge_run(r, s.kind, cfg)
                r[Col.search] = {**r[Col.search], **marked, "run_verdict": verdict, "why_not": why_not}
                if final and last_of_step and judge_step:
                    v = part.judge_step([*before, r], s.kind, cfg)
                    ok = v["outcome"] == PASS
                    r[Col.search].update(passed=ok, establishes=v["outcome"] == FAIL, step_verdict=v)
                    r[Col.search]["why_not"] = v["why_not"]

            rec = _prior(seen, task)
            if rec is not None:
                if skipped_step:
                    skipped_step()
            else:
                rec = execute(task, finish)
                seen.setdefault(task.config_id, []).append(rec)
            run_count += 1
            got = rec.get(Col.search) or {}
            if got.get("final", True):
                return rec
            prev_reason = got.get("rerun_reason")
            reruns.append({"config_id": task.config_id, "step": got.get(Col.step), "run": run, "reason": prev_reason})
        return rec

    def step(value, phase: str, runs: int) -> str:
        nonlocal step_count
        k = step_count
        step_count += 1
        final: list[dict] = []
        for run in range(1, runs + 1):
            rec = attempt_run(lambda r, a: s.run_task(value, k, phase, r, a), run, final, run == runs)
            final.append(rec)
        got = final[-1].get(Col.search) or {}
        verdict = got.get("step_verdict") or part.judge_step(final, s.kind, cfg)
        return verdict["outcome"]

    result = walks.walk(s, step)
    search_runs = run_count
    loss = []
    for i, run in enumerate(part.loss_runs(cfg, s.kind, s.server, result)):

        def task_of(r, a, i=i, run=run):
            return s.loss_task(run, i, a)

        rec = attempt_run(task_of, run.run, [], False, judge_step=False)
        loss.append({"config_id": rec.get(Col.config_id), "trial": rec.get(Col.trial), "status": rec.get(Col.status)})
    return {
        "key": s.key,
        "name": s.name,
        "kind": s.kind,
        "language": s.language,
        "server_language": s.server,
        "server_settings": dict(s.options.server_settings) if s.options else {},
        "cores": s.cores,
        "budget_bytes": s.budget,
        "result": result,
        "steps": search_runs,  # runs (attempts) of the search itself; the loss runs are "stage"
        "step_count": step_count,
        "reruns": reruns,
        "stage": loss,
        "refused": None,
    }
