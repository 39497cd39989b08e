"""Synthetic sweeps for tests: paper-like sweeps and runs of each benchmark from given
numbers, built from the package's schema-valid records (serverbench.analysis.reading.synthetic)."""

from __future__ import annotations

import numpy as np

from serverbench import catalog
from serverbench.analysis.reading.synthetic import raw_record


def paper_like_sweep(
    sweep_id: str = "synthetic-1",
    trials: int = 5,
    seed: int = 7,
    cores=(1, 2),
    languages=None,
    noise: float = 0.03,
) -> list[dict]:
    """A sweep shaped like the paper's findings (Go/Erlang fast pingping, Erlang fastest
    spawn, Akka most processes, Go 3x throughput...), with log-normal noise; languages:
    the paper's three (the catalog's) unless given."""
    languages = catalog.paper_languages() if languages is None else languages
    rng = np.random.default_rng(seed)
    recs = []

    def jit(x):
        return float(x * np.exp(rng.normal(0, noise)))

    lat = {"go": 180e-9, "erlang": 200e-9, "scala_akka": 600e-9}
    for lang in languages:
        for size in (5000, 10000, 50000):
            for reps in (1000, 10000, 100000):
                for t in range(trials):
                    e = jit(lat[lang] * 2 * reps * (size / 5000) ** 0.8)
                    recs.append(
                        raw_record(
                            "pingping",
                            lang,
                            {"message_bytes": size, "repetitions": reps},
                            {"elapsed_s": e},
                            trial=t,
                            sweep_id=sweep_id,
                        )
                    )
    per_proc = {"erlang": 1.0e-6, "go": 1.5e-6, "scala_akka": 3e-6}
    for lang in languages:
        for n in (1000, 10000, 20000, 50000, 100000):
            base = per_proc[lang] * n
            if lang == "scala_akka" and n >= 20000:
                base *= 3  # the jump
            for t in range(trials):
                recs.append(
                    raw_record("spawn", lang, {"processes": n}, {"all_ready_s": jit(base)}, trial=t, sweep_id=sweep_id)
                )
    limit = {"erlang": 400_000, "go": 300_000, "scala_akka": 800_000}
    budget = 2 * 2**30
    for lang in languages:
        for step, n in enumerate((100_000, 200_000, 400_000, 800_000, 1_600_000)):
            search = {"name": "max_processes", "step": step, "budget_bytes": budget}
            if n <= limit[lang]:
                recs.append(
                    raw_record(
                        "spawn",
                        lang,
                        {"processes": n},
                        {"all_ready_s": jit(per_proc[lang] * n)},
                        search=search,
                        sweep_id=sweep_id,
                    )
                )
            else:
                recs.append(
                    raw_record(
                        "spawn",
                        lang,
                        {"processes": n},
                        None,
                        status="over_memory_budget",
                        status_reason="rss above budget",
                        search=search,
                        sweep_id=sweep_id,
                    )
                )
                break
    rate = {"go": 3.0e7, "erlang": 1.0e7, "scala_akka": 0.9e7}
    for lang in languages:
        for c in cores:
            for p in (1, 2, 4, 8, 16, 32):
                peak = rate[lang] * min(p, c) * (1.0 if p <= c else 0.97)
                for t in range(trials):
                    recs.append(
                        raw_record(
                            "throughput",
                            lang,
                            {"pairs": p},
                            {"paper_msgs_per_min": jit(peak)},
                            cores=c,
                            trial=t,
                            sweep_id=sweep_id,
                        )
                    )
    return recs


def pingping_runs(times_by_lang: dict, size: int = 5000, reps: int = 10000, **kw) -> list[dict]:
    """{lang: [elapsed_s per trial]} -> pingping records."""
    return [
        raw_record("pingping", lang, {"message_bytes": size, "repetitions": reps}, {"elapsed_s": t}, trial=i, **kw)
        for lang, ts in times_by_lang.items()
        for i, t in enumerate(ts)
    ]


def throughput_runs(rates: dict, **kw) -> list[dict]:
    """{(lang, cores, pairs): [paper_msgs_per_min per trial]} -> throughput records."""
    return [
        raw_record("throughput", lang, {"pairs": p}, {"paper_msgs_per_min": r}, cores=c, trial=i, **kw)
        for (lang, c, p), rs in rates.items()
        for i, r in enumerate(rs)
    ]


def spawn_runs(times: dict, **kw) -> list[dict]:
    """{(lang, N): [all_ready_s per trial]} -> fixed-N spawn records."""
    return [
        raw_record("spawn", lang, {"processes": n}, {"all_ready_s": t}, trial=i, **kw)
        for (lang, n), ts in times.items()
        for i, t in enumerate(ts)
    ]


def search_runs(steps: dict, budget: int = 2**30, **kw) -> list[dict]:
    """{lang: [(N, status or time), ...]} -> max-processes search records; a float is an ok
    run's all_ready_s, a string a failure status."""
    out = []
    for lang, seq in steps.items():
        for i, (n, v) in enumerate(seq):
            search = {"name": "max_processes", "step": i, "budget_bytes": budget}
            if isinstance(v, str):
                out.append(raw_record("spawn", lang, {"processes": n}, None, status=v, search=search, trial=1, **kw))
            else:
                out.append(
                    raw_record("spawn", lang, {"processes": n}, {"all_ready_s": v}, search=search, trial=1, **kw)
                )
    return out
