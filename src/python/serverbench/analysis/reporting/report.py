"""Tables for the rendered report, computed from processed data (never typed numbers,
except the paper's documented set-up, quoted from data/reference/README.md)."""

from __future__ import annotations

import re

import pandas as pd

from serverbench.analysis.reading import reference, registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS, Processed
from serverbench.analysis.reporting import cells, vocabulary
from serverbench.rawdata.columns import Col

# The paper's set-up, as data/reference/README.md and docs/spec.md state it.
PAPER_SETUP = {
    "machine": "Fig. 3-4: Intel Core i5-3230M 2.6 GHz, 8 GB, Windows 10; "
    "Fig. 5: Xeon E5-2640v2 (16 cores), 64 GB, Scientific Linux 6",
    "versions": "Erlang/OTP 19.0, Go 1.7.1, Scala 2.12.0 + Akka 2.4.12",
    "programs": "the authors' original programs (timing and copying quirks differ by language)",
    "trials": "7 per point, median (Fig. 5 sheet: 3 runs)",
    "cores": "1, 2, 4, 8, 16, 32",
}


def fmt_bytes(b) -> str:
    if b is None or pd.isna(b):
        return "unknown"
    b = float(b)
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= f:
            return f"{b / f:.3g} {unit}"
    return f"{b:.0f} B"


NOT_RECORDED = "not recorded by this sweep"


def machine_rows(i: dict) -> list[tuple[str, str]]:
    """(item, value) describing where a sweep ran, from its recorded environment (its
    sweep.json: the manifest's host and machine, the runs' runtime versions), never from the
    machine rendering the report; what the sweep did not record says so."""
    h = i.get(Col.host) or {}
    m = (i.get(Col.manifest) or {}).get(Col.machine) or {}
    ids = ("cpu_family", "cpu_model_number", "stepping")
    cpu_id = ", ".join(f"{k.replace('_', ' ')} {m[k]}" for k in ids if m.get(k))
    smt = m.get(Col.threads_per_core) or m.get("smt")
    rows = [
        ("CPU", f"{h.get(Col.cpu_model)}" + (f" ({cpu_id}; microcode {m.get(Col.microcode)})" if cpu_id else "")),
        ("CPU frequency", f"{m[Col.cpu_mhz]} MHz" if m.get(Col.cpu_mhz) else NOT_RECORDED),
        ("SMT (threads per core)", str(smt) if smt else NOT_RECORDED),
        ("logical CPUs", str(h.get(Col.logical_cpus))),
        ("cores the runs were pinned to", ", ".join(map(str, i.get(Col.cores_measured) or [])) or "?"),
        ("memory", fmt_bytes(h.get(Col.memory_bytes))),
        ("OS / kernel", f"{h.get(Col.os)} / {h.get(Col.kernel)}"),
    ]
    for lang, vs in sorted((i.get(Col.runtime_versions) or {}).items()):
        rows.append((f"runtime: {LANGUAGE_LABELS.get(lang, lang)}", ", ".join(vs)))
    return rows


def machine_table(P: Processed) -> pd.DataFrame:
    i = P.info
    rows = [
        ("sweep", i.get(Col.sweep_id)),
        ("profile", i.get(Col.profile)),
        ("runs (first - last start, UTC)", f"{i.get(Col.first_started_utc)} - {i.get(Col.last_started_utc)}"),
        *machine_rows(i),
        (
            "memory limit per run",
            f"{fmt_bytes(i.get(Col.memory_budget_bytes))} ({_enforced(i.get(Col.memory_enforcement))})",
        ),
    ]
    man = i.get(Col.runtime_versions_manifest) or {}
    for lang, v in sorted(man.items()) if isinstance(man, dict) else []:
        if lang not in (i.get(Col.runtime_versions) or {}):
            rows.append((f"runtime: {LANGUAGE_LABELS.get(lang, lang)} (--version)", str(v)))
    clients = i.get(Col.runtime_versions) or {}
    for lang, vs in server_runtimes(P.runs).items():  # a socket sweep's subject: its servers
        if sorted(vs) != sorted(clients.get(lang, [])):
            rows.append((f"runtime: {LANGUAGE_LABELS.get(lang, lang)} (server)", ", ".join(vs)))
    return pd.DataFrame(rows, columns=["item", "value"])


def _enforced(how) -> str:
    """'not enforced' for the harness's `none` (the budget is watched, not capped: "2 GiB
    (none)" read as no limit at all), else what enforced it."""
    return "not enforced" if how in (None, "none") else f"enforced by {how}"


def server_runtimes(runs: pd.DataFrame) -> dict[str, list[str]]:
    """{server language: its runtimes as its own record gave them} over a socket sweep's ok
    runs (the servers' records are in the runs table, not in sweep.json's client runtimes)."""
    name, version = "server.record.runtime.name", "server.record.runtime.version"
    if runs is None or runs.empty or {name, version, "server_language"} - set(runs.columns):
        return {}
    ok = (
        runs[runs[Col.is_ok].astype(bool) & runs[version].notna()] if Col.is_ok in runs else runs[runs[version].notna()]
    )
    return {
        str(lang): sorted({f"{n} {v}" for n, v in zip(g[name], g[version])})
        for lang, g in sorted(ok.groupby("server_language"), key=lambda x: str(x[0]))
    }


def pieces_machine_table(processed_dir=None) -> pd.DataFrame:
    """Where the committed `paper` pieces ran (machine_rows): one value where every piece
    recorded the same, else each piece's own."""
    import json

    from serverbench.analysis.reporting import paperscale

    cols: dict[str, dict[str, str]] = {}
    for piece, folder in sorted(paperscale.latest(processed_dir).items()):
        info = json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
        cols[piece] = dict(machine_rows(info))
    rows = [("sweeps", ", ".join(f"{p}: {f.name}" for p, f in sorted(paperscale.latest(processed_dir).items())))]
    for item in dict.fromkeys(k for c in cols.values() for k in c):
        have = {p: c[item] for p, c in cols.items() if item in c}
        values = set(have.values())
        value = values.pop() if len(values) == 1 else "; ".join(f"{p}: {v}" for p, v in have.items())
        if len(have) < len(cols) and len(set(have.values())) == 1:
            value += f" ({', '.join(have)})"
        rows.append((item, value))
    return pd.DataFrame(rows, columns=["item", "value"]) if cols else pd.DataFrame()


def tables_run(P) -> set[str]:
    """The processed tables this sweep has runs in (its benchmarks, as its runs name them)."""
    r = getattr(P, "runs", None)
    found = set(r[Col.table].dropna().astype(str)) if r is not None and not r.empty and Col.table in r else set()
    return found | {str(t) for t in ((getattr(P, "info", None) or {}).get(Col.tables) or ())}


def regime_rows(shown) -> pd.DataFrame:
    """The regime table's rows (id, source_regime, regime): only the claims whose source
    measured at a scale; the IM claims have none, and their rows were blank."""
    from serverbench.analysis.claims import claims_table, regime

    measured = [v for v in shown if regime.source_text(v.id)]
    return claims_table(measured)[["id", "source_regime", "regime"]] if measured else pd.DataFrame()


def regime_summary(P, shown) -> str:
    """claims.regime's paragraph on what *reduced* means, with the lines of the benchmarks
    whose claims the report shows (`shown`: its verdicts), not one per benchmark the sweep
    never ran (an IM report has no PingPing line)."""
    from serverbench.analysis.claims import regime

    head, _, body = regime.reduced_summary(P).partition("\n\n")
    ids = {v.id for v in shown}
    keep = [ln for ln in body.splitlines() if (m := re.search(r"\(([^)]*)\)", ln)) and ids & set(m[1].split(", "))]
    if not keep:
        return "None of the claims shown here has a source that measured it at a scale, so none is *reduced*."
    return head + "\n\n" + "\n".join(keep)


def differences_table(P: Processed) -> pd.DataFrame:
    i = P.info
    r = P.runs
    h = i.get(Col.host, {})
    nw = r[~r[Col.warmup]] if not r.empty else r

    def trials(table):
        d = P.summary[(P.summary[Col.table] == table)] if not P.summary.empty else P.summary
        lo, hi = int(d[Col.n_trials].min()), int(d[Col.n_trials].max())
        return f"{lo}" if lo == hi else f"{lo}-{hi}"

    ran = [t for t in registry.tables() if not P.summary.empty and (P.summary[Col.table] == t).any()]
    variants = ", ".join(sorted(nw[Col.variant].dropna().unique())) if not nw.empty else "?"
    payloads = ", ".join(sorted(nw[Col.payload].dropna().unique())) if not nw.empty and Col.payload in nw else ""
    versions = {k: list(v) for k, v in (i.get(Col.runtime_versions) or {}).items()}
    for lang, vs in server_runtimes(r).items():  # a socket sweep's servers beside its clients
        versions[lang] = sorted({*versions.get(lang, []), *vs})
    cores = ", ".join(map(str, i.get(Col.cores_measured) or []))
    cpus = i.get(Col.logical_cpus)
    beyond = [c for c in (1, 2, 4, 8, 16, 32) if cpus and c > cpus]
    unr = ", ".join(map(str, sorted(set(i.get(Col.unrunnable_cores) or []) | set(beyond)))) or "none"
    if cpus:
        unr += f"; the machine has {cpus} logical CPUs"
    rows = [
        (
            "machine",
            PAPER_SETUP[Col.machine],
            f"{h.get(Col.cpu_model)}, {h.get(Col.logical_cpus)} logical CPUs, "
            f"{fmt_bytes(h.get(Col.memory_bytes))}, {h.get(Col.os)}",
        ),
        (
            "runtime versions",
            PAPER_SETUP["versions"],
            "; ".join(f"{LANGUAGE_LABELS.get(k, k)}: {', '.join(v)}" for k, v in sorted(versions.items())),
        ),
        (
            "programs",
            PAPER_SETUP["programs"],
            f"this project's programs, variant {variants} (same work in every language)"
            + (f", payload {payloads}" if payloads else ""),
        ),
        ("start", "cold start (fresh VM) per run", "fresh OS process per run (cold start), pinned to the cores used"),
        ("trials per point", PAPER_SETUP[Col.trials], ", ".join(f"{t} {trials(t)}" for t in ran) or "none"),
        *(row for fn in registry.load().setup_rows.values() for row in fn(P, nw)),  # each benchmark's own
        ("cores", PAPER_SETUP[Col.cores], f"{cores} (not runnable here: {unr})"),
    ]
    return pd.DataFrame(rows, columns=["aspect", "paper", "this sweep"])


def failures_table(P: Processed) -> pd.DataFrame:
    f = P.failures
    if f is None or f.empty:
        return pd.DataFrame(columns=["figure table", "language", "status", "runs", "of which retried ok", "reason"])
    f = f.copy()
    f[Col.language] = f[Col.language].map(lambda x: LANGUAGE_LABELS.get(x, x))
    f[Col.reason] = [
        r if isinstance(r, str) and r else (e if isinstance(e, str) else "")
        for r, e in zip(f[Col.example_reason], f.get(Col.example_stderr, [""] * len(f)))
    ]
    return f.rename(columns={"table": "figure table", "count": "runs", "retried_ok": "of which retried ok"})[
        ["figure table", "language", "status", "runs", "of which retried ok", "reason"]
    ]


def status_counts(P: Processed) -> pd.DataFrame:
    r = P.runs
    if r.empty:
        return pd.DataFrame()
    nw = r[~r[Col.warmup]]
    t = nw.groupby(["table", "status"]).size().unstack(fill_value=0)
    t["all attempts"] = t.sum(axis=1)
    return t.reset_index()


def time_table(P: Processed) -> pd.DataFrame:
    c = P.cpu_time
    if c is None or c.empty:
        return pd.DataFrame()
    c = c.copy()
    c[Col.language] = c[Col.language].map(lambda x: LANGUAGE_LABELS.get(x, x))
    cols = {
        "table": "figure table",
        "language": "language",
        "runs": "runs",
        "wall_s": "wall (s)",
        "user_cpu_s": "user CPU (s)",
        "system_cpu_s": "system CPU (s)",
        "system_share_of_cpu": "system share of CPU",
        "cpu_per_wall": "CPU / wall",
        "timed_share_of_wall": "timed region / wall",
    }
    return c[list(cols)].rename(columns=cols).round(3)


def reference_notes() -> list[str]:
    """Caveats about the paper's values drawn in the figures (from the reference README)."""
    pts, fails = reference.fig4a()
    return [
        "Fig. 3 paper values: one number per point; whether single runs or summaries is not recorded; "
        "Erlang's small times are quantised to the 1/64 s Windows clock tick (0 s points are not drawn on log axes).",
        "Fig. 4 (a) paper values are means (the sheet's AVERAGE block), not medians; the paper's failures: "
        + ", ".join(
            f"{LANGUAGE_LABELS.get(r.language, r.language)} at {int(r.processes):,} ({r.status_raw})"
            for r in fails.itertuples()
        )
        + ".",
        "Fig. 5 paper values: median of the sheet's 3 recorded runs, recomputed; the sheet's own median block "
        "has one broken cell (Erlang, 1 core, 4 pairs).",
    ]


VERDICT_COLOURS = {
    "supported": "#d9f2d9",
    "contradicted": "#f8d0d0",
    "inconclusive": "#fff2cc",
    vocabulary.NOT_TESTABLE: "#e6e6e6",
    "error": "#ff9999",
}
VERDICT_COLUMNS = ("verdict", "verdict_margin_x0.5", "verdict_margin_x2")


def in_words(ct: pd.DataFrame, piece: bool = False) -> pd.DataFrame:
    """The claims table with its verdict columns in the shared vocabulary: 'not testable on
    this machine' becomes 'not testable (<one of the four reasons>)', read from the row's why."""
    ct = ct.copy()
    why = ct[Col.why] if Col.why in ct.columns else pd.Series([""] * len(ct), index=ct.index)
    for col in [c for c in VERDICT_COLUMNS if c in ct.columns]:
        ct[col] = [vocabulary.labelled(v, w, piece=piece) for v, w in zip(ct[col], why)]
    return ct


def headline(claims: pd.DataFrame) -> str:
    """'20 claims. Tested at the scale their source measured: ... (verdict counts)' for the
    report: the claims table's verdicts counted apart by regime (claims.regime)."""

    def tally(t: pd.DataFrame) -> str:
        return ", ".join(f"**{n}** {v}" for v, n in t[Col.verdict].value_counts().items())

    text = f"{len(claims)} claim{'' if len(claims) == 1 else 's'}. "
    if Col.regime_kind not in claims.columns:
        return text + "Verdicts: " + tally(claims) + "."
    at = claims[claims[Col.regime_kind] == "as the source"]
    red = claims[claims[Col.regime_kind] == "reduced"]
    other = claims[~claims[Col.regime_kind].isin(["as the source", "reduced"])]
    text += f"Tested at the scale their source measured: {len(at)}" + (f" ({tally(at)})" if len(at) else "")
    text += f". At a reduced scale (see the regime column): {len(red)}" + (f" ({tally(red)})" if len(red) else "")
    text += f". No source regime or no runs here: {len(other)}" + (f" ({tally(other)})" if len(other) else "") + "."
    return text


def verdict_style(value) -> str:
    """CSS for a verdict cell in the claims table (pandas Styler.map)."""
    c = VERDICT_COLOURS.get(value.split(" (")[0]) if isinstance(value, str) else None
    return f"background-color: {c}; font-weight: bold" if c else ""


def evidence_groups(verdicts) -> list[pd.DataFrame]:
    """The evidence table (claims_evidence.csv) in pieces: consecutive claims whose
    comparisons fill the same columns share one table, and a column that none of its rows
    fills is left out. Why: the whole table has one column per kind of evidence (~30),
    mostly empty in any row, and is too wide to read on a screen or fit on a page."""
    groups: list[pd.DataFrame] = []
    for v in verdicts:
        e = v.evidence
        if e is None or e.empty:
            continue
        filled = [c for c in e.columns if e[c].map(lambda x: not (pd.isna(x) or x == "")).any()]
        e = e[filled].reset_index(drop=True)
        if groups and list(groups[-1].columns) == filled:
            groups[-1] = pd.concat([groups[-1], e], ignore_index=True)
        else:
            groups.append(e)
    return groups


def show_evidence(verdicts) -> None:
    """The evidence tables of evidence_groups in the report notebook (cells.fmt's numbers)."""
    from IPython.display import display

    for t in evidence_groups(verdicts):
        st = cells.style(t)
        # a header such as loadgen_cpu_share_num may wrap after its underscores, else it
        # alone sets its column's width and pushes the last columns off a printed page
        display(st.format_index(lambda c: str(c).replace("_", "_<wbr>"), axis="columns"))


# ------------------------------------------------------------------ contention
