"""Lab 2 - Processes are memory: spawn time and bytes per process as N grows, first-touch
page faults, and a safe max-processes search under a small memory budget.

Kept whole past ~350 lines: a lab is one module (lab1 ... lab4), which its notebook and the
instructor's solutions import alone, and each exercise's check sits beside the data it reads."""

from __future__ import annotations

import os
import subprocess

import pandas as pd

from serverbench import catalog, contract
from serverbench.analysis.explorer import explore_plots
from serverbench.rawdata.columns import Col
from serverbench.teaching import common
from serverbench.teaching.common import Exercise, LabData, median

# the class time this lab is planned for, in minutes: the notebook, docs/teaching.md and the
# instructor material quote it (tests/python/test_teaching_consistency.py)
CLASS_MINUTES = "35-45"

PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def load(
    run=True, raw_folder=None, languages=None, trials=3, processes=(1000, 10_000, 50_000), budget_mib=160
) -> LabData:
    langs = common.need_languages(languages)
    trials = common.need_int("trials", trials, 1, 7)
    ns = common.need_ints("processes", list(processes), 100, 200_000, 5)
    budget = common.need_int("budget_mib", budget_mib, 64, 1024)
    search_langs = [x for x in langs if x != "scala_akka"] or ["go"]
    overrides = {
        "spawn.trials": trials,
        "spawn.processes": ns,
        "spawn_max.budget_bytes": f"{budget}MiB",
        "spawn_max.languages": search_langs,
    }
    data = common.get_runs(
        "lab2", run=run, raw_folder=raw_folder, languages=langs, benchmarks=["spawn", "spawn_max"], overrides=overrides
    )
    common.require_ok(data, "spawn")
    print(common.describe(data))
    return data


def table(data: LabData) -> pd.DataFrame:
    d = data.ok("spawn")
    t = d.groupby(["language", "processes"])[["all_ready_s", "bytes_per_process", "system_cpu_s"]].median()
    t["us_per_process"] = t[Col.all_ready_s] / t.index.get_level_values("processes") * 1e6
    return t.round({"all_ready_s": 4, "bytes_per_process": 0, "system_cpu_s": 3, "us_per_process": 2})


def figure(data: LabData, kind: str = "strip"):
    return explore_plots.trial_distributions(
        data.runs, "spawn", "bytes_per_process", kind=kind, log=False, title="spawn: bytes per process, every trial"
    )


def search_table(data: LabData) -> pd.DataFrame:
    d = data.runs[data.runs[Col.table] == "spawn_max"]
    if d.empty:
        return pd.DataFrame(columns=["language", "search_step", "processes", "status", "peak_rss_bytes"])
    t = pd.DataFrame(
        {
            "language": d[Col.language],
            "step": d[Col.search_step].astype(int),
            "processes": d[Col.processes],
            "status": d[Col.status],
            "peak_rss_MiB": (d[Col.peak_rss_bytes] / 2**20).round(1),
            "budget_MiB": (d[Col.memory_budget_bytes] / 2**20).round(0),
            "bytes_per_process": d[Col.bytes_per_process].round(0),
        }
    )
    return t.sort_values(["language", "step"]).reset_index(drop=True)


def search_bracket(data: LabData, lang: str):
    """(largest N that fitted, smallest N that failed) of the search, None where missing."""
    d = data.runs[(data.runs[Col.table] == "spawn_max") & (data.runs[Col.language] == lang)]
    ok = d.loc[d[Col.status] == "ok", "processes"]
    bad = d.loc[d[Col.status] != "ok", "processes"]
    return (int(ok.max()) if len(ok) else None), (int(bad.min()) if len(bad) else None)


# --- page faults: run the real Go/Erlang program directly and read its rusage ---------------
def page_faults(lang: str, n: int, timeout_s: float = 20.0) -> dict:
    """Minor page faults of one spawn run of N processes (os.wait4's rusage)."""
    spec = catalog.language(lang)
    exe = str(contract.executable(lang))
    cmd = [exe if part == "{exe}" else part for part in spec.command] + ["spawn", "--processes", str(n)]
    env = dict(os.environ)
    for k, v in spec.env:
        env[k] = v.replace("{cores}", "1").replace("{process_limit}", str(max(1_048_576, 2 * n)))
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    try:
        out, _ = p.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        p.kill()
        p.communicate()
        raise
    import json
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)  # cumulative; the caller takes differences
    rec = json.loads(out.decode().strip().splitlines()[-1]) if out.strip() else {}
    return {
        "language": lang,
        "processes": n,
        "children_minflt_total": ru.ru_minflt,
        "bytes_per_process": (rec.get(Col.metrics) or {}).get(Col.bytes_per_process),
    }


def fault_table(languages=("go", "erlang"), ns=(1000, 50_000)) -> pd.DataFrame:
    """Minor faults per run for two N (differences of the cumulative children's rusage)."""
    import resource

    rows = []
    for lang in languages:
        if lang not in contract.languages() or not contract.executable(lang).exists():
            continue
        for n in ns:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
            r = page_faults(lang, n)
            r["minor_faults"] = r.pop("children_minflt_total") - before
            rows.append(r)
    t = pd.DataFrame(rows)
    if t.empty:
        return t
    out = []
    for lang, g in t.groupby("language"):
        g = g.sort_values("processes")
        dn = g[Col.processes].iloc[-1] - g[Col.processes].iloc[0]
        faults = g["minor_faults"]
        df = faults.iloc[-1] - faults.iloc[0]
        out.append(
            {
                "language": lang,
                "faults_small_N": int(faults.iloc[0]),
                "faults_large_N": int(faults.iloc[-1]),
                "extra_processes": int(dn),
                "faults_per_process": df / dn,
                "bytes_per_process": g[Col.bytes_per_process].iloc[-1],
                "pages_per_process_from_rss": g[Col.bytes_per_process].iloc[-1] / PAGE,
            }
        )
    return pd.DataFrame(out).round(3)


# ---------------------------------------------------------------------------------------
def _bpp(data, lang="go"):
    d = data.ok("spawn")
    return median(d, "bytes_per_process", language=lang, processes=d[Col.processes].max())


def _search_lang(data):
    langs = set(data.runs.loc[data.runs[Col.table] == "spawn_max", "language"])
    return "go" if "go" in langs else (sorted(langs)[0] if langs else None)


def _predict_truth(data):
    """(the search's largest N that fitted, its smallest N that failed, the language, the
    exercise's own arithmetic: the search's budget / that language's bytes per process)."""
    lang = _search_lang(data)
    if lang is None:
        return None
    lo, hi = search_bracket(data, lang)
    d = data.runs[(data.runs[Col.table] == "spawn_max") & (data.runs[Col.language] == lang)]
    budget = d[Col.memory_budget_bytes].dropna()
    try:
        per = _bpp(data, lang)
    except (KeyError, ValueError, IndexError):
        per = float("nan")
    predicted = round(float(budget.iloc[0]) / per, -3) if len(budget) and per > 0 else None
    return (lo, hi, lang, predicted)


def _limit_why(data, t) -> str:
    lo, hi, lang, predicted = t
    arithmetic = f"budget / bytes per process = {predicted:,.0f} {lang} processes. " if predicted else ""
    if not (lo and hi):
        return arithmetic + "The search did not bracket a limit."
    return (
        f"{arithmetic}The search's bracket: {lo:,} fitted, {hi:,} failed. The budget also holds the runtime "
        "itself (tens of MB for the BEAM), so the real limit is a little below budget / bytes per process."
    )


def _judge_limit(answer, truth):
    lo, hi, lang, _ = truth
    if isinstance(answer, bool) or not isinstance(answer, (int, float)) or answer <= 0:
        return False, "answer with a number of processes, e.g. 50000"
    if lo is not None and answer < lo / 1.5:
        return False, f"too low: the search ran {lo:,} {lang} processes inside the budget"
    if hi is not None and answer > hi * 1.5:
        return False, f"too high: the search failed at {hi:,} processes"
    return True, ""


def per_process_growth(data) -> dict:
    """Per language: time per process at the largest N / at the smallest N (medians of
    all_ready_s / N); above 1, each process cost more when there were more of them."""
    d = data.ok("spawn")
    out = {}
    for lang, g in d.groupby("language"):
        us = (g[Col.all_ready_s] / g[Col.processes]).groupby(g[Col.processes]).median().dropna().sort_index()
        if len(us) >= 2 and us.iloc[0] > 0:
            out[lang] = float(us.iloc[-1] / us.iloc[0])
    return out


def grows_most(data):
    """The language(s) whose time per process grows the most with N (ties within 10 %)."""
    g = per_process_growth(data)
    if not g:
        return None
    top = max(g.values())
    return {k for k, v in g.items() if v >= top / 1.1}


def _why_growth(data, t) -> str:
    ratios = ", ".join(f"{k} {common.human(v)}x" for k, v in per_process_growth(data).items())
    return (
        f"measured: {' or '.join(sorted(t))} (time per process at the largest N / at the smallest: {ratios}). "
        "Above 1x each new process costs more than the last: more pages for the kernel to hand out, a "
        "scheduler or garbage collector with more processes to walk, caches that no longer hold them "
        "all. Below 1x a fixed start-up cost (a JVM's actor system, its JIT) is spread over more processes."
    )


def _stopper(data):
    d = data.runs[(data.runs[Col.table] == "spawn_max") & (data.runs[Col.status] != "ok")]
    if d.empty:
        return None
    s = d[Col.status].value_counts().index[0]
    return {"over_memory_budget": "memory", "timeout": "time"}.get(s, "other")


EXERCISES = {
    "bytes": Exercise(
        "bytes",
        "bytes per process in go at the largest N",
        lambda data: _bpp(data, "go" if "go" in data.languages else data.languages[0]),
        common.within_factor(1.2, "bytes"),
        lambda data, t: (
            f"{t:,.0f} bytes: N processes cost N times that however little they do, so a million of "
            f"them need about {t * 1e6 / 2**30:.1f} GiB. Where the bytes go is exercise 4."
        ),
    ),
    "limit": Exercise(
        "limit",
        "your predicted max processes in the budget: budget / bytes per process",
        _predict_truth,
        _judge_limit,
        _limit_why,
        solution=lambda t: t[3] or t[0] or t[1],
    ),
    "stopper": Exercise(
        "stopper",
        "what stopped the search: 'memory', 'time' or 'other'",
        _stopper,
        common.one_of(["memory", "time", "other"]),
        lambda data, t: (
            "the failing steps were killed for going over the memory budget (the cgroup's OOM "
            "killer or the harness's RSS watchdog): the limit on processes is a memory limit."
            if t == "memory"
            else f"the failing steps ended as '{t}'"
        ),
    ),
    "grows": Exercise(
        "grows",
        "which language's time per process grows the most with N: 'erlang', 'go' or 'scala_akka'",
        grows_most,
        common.one_of(
            catalog.paper_languages,
            hint="compare us_per_process at the smallest and at the largest N, language by language, not the totals",
        ),
        _why_growth,
    ),
    "why_bytes": common.choice(
        "why_bytes",
        "the letter of the reason a goroutine or an Erlang process costs a few kilobytes even while it only waits",
        {
            "a": "each lightweight process is backed by its own OS thread, whose stack the kernel charges",
            "b": "each process gets its own small stack (Go) or heap (Erlang) and a descriptor when it is created, "
            "and their pages are touched when it first runs",
            "c": "the runtime reserves a mailbox buffer for the messages each process might receive",
        },
        "b",
        "faults_per_process next to pages_per_process_from_rss (section 2), and how many OS threads a "
        "runtime told to use one or two cores runs",
        "Go starts a goroutine with a 2 KiB stack, Erlang a process with a 233-word heap, each with a "
        "control block; touching them costs about one page fault per process, as the fault table shows. "
        "A few OS threads run all the processes (M:N scheduling), and a mailbox grows only when "
        "messages arrive.",
    ),
    "faults": Exercise(
        "faults",
        "minor page faults per extra go process (from the fault table)",
        lambda data: _faults_per_process(data),
        common.within_factor(1.5, "faults"),
        lambda data, t: (
            f"{t:.2f} faults per process: a fresh page of memory costs a page fault the first time "
            f"it is touched ({PAGE} bytes each), so ~{PAGE * t:,.0f} bytes per process are touched: "
            "the same as bytes per process from RSS. Creating processes is mostly the kernel "
            "handing out pages (see system_cpu_s grow with N)."
        ),
    ),
}


def faults_from_runs(data: LabData) -> pd.DataFrame:
    """Faults per extra process from the sweep's own spawn runs (the harness records
    minor_page_faults from the run's rusage); empty if this sweep has no such field."""
    d = data.ok("spawn")
    if Col.minor_page_faults not in d or d[Col.minor_page_faults].isna().all():
        return pd.DataFrame()
    rows = []
    for lang, g in d.groupby("language"):
        m = g.groupby("processes")[["minor_page_faults", "bytes_per_process"]].median().sort_index()
        if len(m) < 2:
            continue
        dn = m.index[-1] - m.index[0]
        faults = m[Col.minor_page_faults]
        rows.append(
            {
                "language": lang,
                "faults_small_N": int(faults.iloc[0]),
                "faults_large_N": int(faults.iloc[-1]),
                "extra_processes": int(dn),
                "faults_per_process": (faults.iloc[-1] - faults.iloc[0]) / dn,
                "bytes_per_process": m[Col.bytes_per_process].iloc[-1],
                "pages_per_process_from_rss": m[Col.bytes_per_process].iloc[-1] / PAGE,
            }
        )
    return pd.DataFrame(rows).round(3)


def faults(data: LabData, ns=(1000, 50_000)) -> pd.DataFrame:
    """Page faults per process: from the sweep's records when the harness recorded them,
    else measured here (Go and Erlang, one run per N). Kept with the data for the check."""
    t = faults_from_runs(data)
    if t.empty and data.source == "ran":
        t = fault_table([x for x in ("go", "erlang") if x in data.languages], ns)
    elif t.empty:
        print("this sweep has no page-fault counts (older harness) and is not re-run here")
    data.extra["faults"] = t
    return t


def _faults_per_process(data):
    t = data.extra.get("faults")
    if t is None or t.empty:
        return None
    row = t[t[Col.language] == "go"] if (t[Col.language] == "go").any() else t.iloc[:1]
    return float(row["faults_per_process"].iloc[0])


def check(key: str, answer, data, solutions=False, prediction=None) -> None:
    """Print 'correct' or a hint, then the prediction beside the measurement (common.check
    returns the verdict, for tests)."""
    common.check(EXERCISES[key], answer, data, solutions, prediction)


TAKEAWAY = """**Take-away.** A lightweight process is a small stack or heap plus a
descriptor, 2.5-3 kB in Go and Erlang, touched page by page (about 0.7 page faults per process).
Creating a million costs gigabytes, so the limit is the machine's memory, not a counter. Search for
it with a budget the kernel enforces (a cgroup), growing N geometrically and bisecting, so that the
failing step is killed cleanly instead of swapping the machine to a halt."""


def takeaway(solutions=False):
    return common.reveal(solutions, TAKEAWAY)
