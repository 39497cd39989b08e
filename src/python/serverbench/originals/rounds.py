"""A piece of the `gap` profile (profiles/gap.toml, docs/gap.md): the harness's runs and the
originals' interleaved round by round, so that drift hits every side alike and each factor
can be paired by round.

A piece runs one benchmark. Its languages that have an original of that benchmark
(programs.find) run with the audit's knob steps (fair, paper and each quirk alone); the
others run fair. A piece whose profile variant is not fair (throughput-flags: `variant =
"paper"`) runs its ports in that variant only, no knob steps. Round k holds trial k of
everything, in three blocks: the originals (per configuration of the port, one run each
way the original runs: a JVM original as the authors ran it and with our JVM flags, back to
back, the way that goes first rotating with k; programs.Program.flag_sets), our ports, and
the fair-only languages; the block that goes first rotates with k. A piece without a port
runs neither the ports nor any original. The two harness blocks are two invocations of the
harness into the one sweep (a per-language table cannot set `steps`). Everything is
resumable: what a round already holds is skipped, and the harness refuses to resume a
sweep on another machine.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from serverbench.errors import UsageError
from serverbench.originals import programs, runner
from serverbench.rawdata.columns import Col

PROFILE = "gap"
ORDER = ("original", "knobs", "fair")


def split(languages, benchmark: str) -> tuple[list[str], list[str]]:
    """(the ports: languages with an original of `benchmark`, the fair-only languages)."""
    ports = [x for x in languages if programs.find(benchmark, x)]
    return ports, [x for x in languages if x not in ports]


def present_blocks(languages, benchmark: str) -> tuple[str, ...]:
    """The blocks a piece with these languages runs."""
    ports, fair = split(languages, benchmark)
    on = {"original": bool(ports), "knobs": bool(ports), "fair": bool(fair)}
    return tuple(b for b in ORDER if on[b])


def blocks(k: int, present=ORDER) -> list[str]:
    """Round k's blocks in the order they run, the first rotating with k; only those present."""
    s = (k - 1) % len(ORDER)
    return [b for b in ORDER[s:] + ORDER[:s] if b in present]


def flag_order(prog: programs.Program, k: int) -> list[str]:
    """The ways round k runs an original (programs.Program.flag_sets), the first rotating with k."""
    ways = list(prog.flag_sets())
    s = (k - 1) % len(ways)
    return ways[s:] + ways[:s]


def configs(sets: dict, benchmark: str, ports: list[str]) -> list:
    """(program, task) of every configuration the originals run: the tasks of the ports in
    the piece's variant (trial 1), one per language, core count and parameters."""
    from serverbench.harness import load_profile, make_plan

    prof = load_profile(PROFILE, {**sets, "defaults.trials": 1})
    plan = make_plan(prof, ports, [benchmark], False)
    seen: dict[str, tuple] = {}
    for t in plan.tasks:
        if t.variant == prof.variant and t.benchmark == benchmark and not t.warmup:
            prog = programs.find(benchmark, t.language)
            seen.setdefault(runner.config_id(prog, t.cores, t.params), (prog, t))
    return list(seen.values())


def done(path: Path) -> set[tuple[str, int]]:
    """(config_id, trial) of the originals' runs already in the file (a resumed sweep)."""
    from serverbench.harness.recording.rawlog import read_lines

    return {(r[Col.config_id], r[Col.trial]) for r in read_lines(path) if r.get(Col.status) != "failed_to_start"}


def run_rounds(piece_name: str, sweep_id: str | None = None, raw_root=None, log=print, overrides=None) -> Path:
    """The piece's rounds 1..trials into data/raw/<sweep id> (or under raw_root). Overrides
    on top of the piece's (`run --set`'s, e.g. shorter runs) make it a trial of the
    pipeline, not the piece: its default sweep id is gap-pilot-<piece>-<time>, which the
    tables leave out (gap_tables.is_pilot)."""
    from serverbench.harness import load_profile, run_sweep
    from serverbench.harness.planning.pieces import Piece, piece
    from serverbench.harness.running import limits

    p = piece(PROFILE, piece_name)
    if overrides:
        p = Piece(p.name, p.benchmarks, {**p.sets, **overrides})
        load_profile(PROFILE, p.sets)  # an override the profile refuses is refused before anything runs
    if len(p.benchmarks) != 1:
        raise UsageError(f"{PROFILE} piece {p.name}: one benchmark a piece, got {', '.join(p.benchmarks)}")
    bench = p.benchmarks[0]
    prof = load_profile(PROFILE, p.sets)
    rounds = int(prof.defaults[Col.trials])
    ports, fair = split(prof.languages, bench)
    present = present_blocks(prof.languages, bench)
    cfgs = configs(p.sets, bench, ports) if ports else []
    for prog, _ in cfgs:
        prog.path()  # every original built before anything runs
    mode, parent, _ = limits.detect_enforcement(prof.defaults[Col.memory_enforcement]) if cfgs else ("none", None, "")
    label = f"pilot-{p.name}" if overrides else p.name
    sweep_id = sweep_id or f"{PROFILE}-{label}-{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}"
    root = Path(raw_root) if raw_root else _raw_dir()
    sweep_dir = root / sweep_id
    for k in range(1, rounds + 1):
        for block in blocks(k, present):
            if block == "original":
                sweep_dir.mkdir(parents=True, exist_ok=True)  # the first round may start here
                _originals(cfgs, k, sweep_dir, (mode, parent), log)
                continue
            over = {**p.sets, "defaults.trials": k}
            if block == "knobs" and prof.variant == "fair":
                over[f"{bench}.steps"] = "knobs"
            langs = ports if block == "knobs" else fair
            run_sweep(
                PROFILE,
                sweep_id=sweep_id,
                overrides=over,
                languages=langs,
                benchmarks=[bench],
                raw_root=raw_root,
                progress=False,
            )
            name = block if block == "fair" or prof.variant == "fair" else prof.variant
            log(f"round {k}: {name} block done ({', '.join(langs)})")
    return sweep_dir


def _originals(cfgs: list, k: int, sweep_dir: Path, enforcement: tuple, log) -> None:
    """Round k's block of the originals: each configuration each way (flag_order) that the
    sweep's original.jsonl does not hold yet, appended to it."""
    from serverbench.harness import host_info
    from serverbench.harness.recording.rawlog import append_json

    path = sweep_dir / runner.FILE_NAME
    have = done(path)
    host, cpus = host_info(), sorted(os.sched_getaffinity(0))
    for prog, t in cfgs:
        for flags in flag_order(prog, k):
            if (runner.config_id(prog, t.cores, t.params, flags), k) in have:
                continue
            rec = runner.run(
                prog,
                sweep_dir.name,
                k,
                t.cores,
                t.params,
                host,
                cpus,
                t.timeout_s,
                t.memory_budget_bytes,
                enforcement=enforcement[0],
                cgroup_parent=enforcement[1],
                process_limit=t.process_limit,
                flags=flags,
                heap_mb=t.heap_mb,
            )
            append_json(path, rec)
            what = f"{prog.language}{' with our JVM flags' if flags == programs.OURS else ''} {prog.benchmark}"
            log(f"round {k}: original {what} c{t.cores} {t.params}: {outcome(prog, rec)}")


def outcome(prog: programs.Program, rec: dict) -> str:
    """A run of an original in the log's words: what it printed, or its status and why. Its
    status alone would say `invalid` for every run (the schema's word for a run without a
    native record), the ones that printed included."""
    v = runner.value(prog, rec)
    if v is not None:
        return f"printed {v:.6g}"
    return f"{rec.get(Col.status)}: {rec.get(Col.status_reason)}"


def _raw_dir() -> Path:
    from serverbench import paths

    return paths.raw_dir()
