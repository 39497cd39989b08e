"""The instructor guide's generated block (docs/instructor.md, `python -m serverbench docs`):
per lab, each exercise's expected value, the range one student with one trial might see,
and the answer key.

Every value is computed with the exercise's own `solve` and `why` (the producer a lab's
solutions switch and self-checks use) on the lab sweep committed with the package, which
is also what a lab reads when it does not run (run=False, or no native programs). The
range is the lowest and highest answer over the sweep's single trials (trial 1 alone,
trial 2 alone, ...): what a student who ran one trial per configuration could get. An
exercise whose answer does not depend on the runs (arithmetic, a mechanism) says "fixed".

The sweeps are named here rather than found as "the newest", so that running a lab (which
writes a newer lab sweep into data/raw) does not change the committed guide; a newly
committed lab sweep is entered in SWEEPS."""

from __future__ import annotations

from serverbench import paths
from serverbench.analysis.explorer import explore
from serverbench.rawdata.columns import Col
from serverbench.teaching import common, lab1, lab2, lab3, lab4, lab4_paper, lab4_tcp
from serverbench.teaching.checks import Exercise, human, missing, shown_answer
from serverbench.teaching.common import LabData

SWEEPS = {
    "lab1": "lab1-20261124T213949Z",
    "lab2": "lab2-20261124T214040Z",
    "lab3": "lab3-20261124T214159Z",
    "lab4": "lab4-20261124T214304Z",
}
LABS = {
    "lab1": (lab1, "Lab 1: What does a message cost?"),
    "lab2": (lab2, "Lab 2: Processes are memory"),
    "lab3": (lab3, "Lab 3: Throughput vs cores"),
    "lab4": (lab4, "Lab 4: Benchmarking pitfalls"),
}
# why an exercise has no value on its lab's committed sweep
NOT_RECORDED = {
    ("lab4", "paper"): f"the recorded paper-variant runs (sweep {lab4_paper.RECORDED_PAPER}) are not in this checkout",
    ("lab4", "tcp"): f"the recorded TCP runs (sweep {lab4_tcp.RECORDED_TCP}) are not in this checkout",
}
ERRORS = (KeyError, ValueError, IndexError, TypeError, ZeroDivisionError)


def lab_data(lab: str) -> LabData:
    """The committed sweep of a lab as the lab itself would read it, with what its
    exercises need besides the sweep (lab 2's page faults, lab 4's recorded TCP runs)."""
    s = explore.load_sweep(paths.repo_root() / "data" / "raw" / SWEEPS[lab])
    data = LabData(s, "folder", 0.0, sorted(set(s.runs[Col.language].dropna())))
    if lab == "lab4":
        tcp = lab4_tcp.recorded_tcp()
        if tcp is not None:
            data.extra["tcp"] = tcp
        paper = lab4_paper.recorded_paper()
        if paper is not None:
            data.extra[Col.paper] = paper
    _derive(lab, data)
    return data


def _derive(lab: str, data: LabData) -> None:
    if lab == "lab2":
        data.extra["faults"] = lab2.faults_from_runs(data)


def trials(data: LabData) -> list[int]:
    r = data.runs[~data.runs[Col.warmup]]
    return sorted(int(t) for t in r[Col.trial].dropna().unique() if t >= 1)


def one_trial(lab: str, data: LabData, k: int) -> LabData:
    """Only trial k of every configuration (the search steps of lab 2, run once, stay)."""
    r = data.runs
    keep = (r[Col.trial] == k) | (r[Col.table] == "spawn_max")
    sub = LabData(explore.SweepView(data.sweep.folder, r[keep], data.sweep.manifest), "folder", 0.0, data.languages)
    for name, s in data.extra.items():
        if isinstance(s, explore.SweepView):
            sub.extra[name] = explore.SweepView(s.folder, s.runs[s.runs[Col.trial] == k], s.manifest)
    _derive(lab, sub)
    return sub


def answer_of(ex: Exercise, data: LabData):
    """The exercise's answer on data, in the form a student gives it; None if missing."""
    try:
        truth = ex.solve(data)
    except ERRORS:
        return None
    return None if missing(truth) else shown_answer(ex, truth)


def show(v, ex: Exercise) -> str:
    if isinstance(v, (set, list, tuple)):
        return " or ".join(f"'{x}'" for x in sorted(v))
    if isinstance(v, str):
        return f"'{v}'"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    return human(v)


def spread(lab: str, ex: Exercise, data: LabData) -> str:
    """What one student with one trial per configuration might get."""
    if ex.fixed:
        return "fixed"
    ks = trials(data)
    vals = [v for v in (answer_of(ex, one_trial(lab, data, k)) for k in ks) if v is not None]
    if not vals:
        return "no single trial answers it (it compares trials)"
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        lo, hi = human(min(vals)), human(max(vals))
        one = lo if lo == hi else f"{lo} to {hi}"
    else:
        counts: dict[str, int] = {}
        for v in vals:
            counts[show(v, ex)] = counts.get(show(v, ex), 0) + 1
        if len(counts) > 1:
            ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
            return ", ".join(f"{k} in {n} of {len(ks)} trials" for k, n in ranked)
        one = next(iter(counts))
    if len(vals) < len(ks):
        return f"{one} (only {len(vals)} of {len(ks)} trials have these runs)"
    return one if " to " in one else f"{one} in every trial"


def _cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def lab_markdown(lab: str) -> str:
    mod, title = LABS[lab]
    data = lab_data(lab)
    s = data.sweep
    ks = trials(data)
    out = [
        f"### {title}",
        "",
        f"Sweep `{s.sweep_id}` ({len(s.runs)} runs, trials {ks[0]} to {ks[-1]}): {common.provenance(s.manifest)}.",
    ]
    if lab == "lab4" and "tcp" in data.extra:
        out.append(
            f"The `tcp` row uses the TCP runs recorded in `{lab4_tcp.RECORDED_TCP}` at the configuration lab 4 "
            f"runs (a client against a server of its own language on separate CPUs, {lab4_tcp.CONNECTIONS} "
            f"connections x {lab4_tcp.ROUND_TRIPS} round trips), through the function lab 4's self-check uses; "
            "lab 4 shows the same runs when it studies an existing sweep."
        )
    if lab == "lab4" and Col.paper in data.extra:
        out.append(
            f"The `paper` row uses the paper-variant throughput runs recorded in `{lab4_paper.RECORDED_PAPER}` "
            "(8 pairs, 1 s, batches of "
            f"{lab4_paper.REPORT_EVERY:,}); lab 4 shows the same runs when it studies an existing sweep, and makes "
            f"its own ({lab4_paper.PAIRS} pairs, a shorter run, so a smaller fraction) when it runs."
        )
    out += [
        "",
        "| exercise | the student gives | expected on this sweep | one trial alone |",
        "|---|---|---|---|",
    ]
    key = []
    for k, ex in mod.EXERCISES.items():
        v = answer_of(ex, data)
        if v is None:
            reason = NOT_RECORDED.get((lab, k), "the committed sweep has no runs for it")
            out.append(f"| `{k}` | {_cell(ex.question)} | not in this sweep | {_cell(reason)} |")
            key.append(f"- **`{k}`**: no value here: {reason}.")
            continue
        out.append(f"| `{k}` | {_cell(ex.question)} | {_cell(show(v, ex))} | {_cell(spread(lab, ex, data))} |")
        why = ex.why(data, ex.solve(data))
        if ex.options:
            opts = "; ".join(f"{x}) {t}" for x, t in ex.options.items())
            why = f"{why} (The options: {opts}.)"
        key.append(f"- **`{k}`**: {why}")
    return "\n".join(out + ["", "Answer key (each exercise's own explanation on this sweep):", "", *key])


def markdown() -> str:
    """The generated block of docs/instructor.md: every lab's table and answer key."""
    return "\n\n".join(lab_markdown(lab) for lab in LABS)
