"""The encodings of C3-C5, the paper's claims about spawning processes (Fig. 4; Valkov,
Chechina & Trinder, SAC 2018). Their words and regions are spec/protocol.json's; each
comparison function computes exactly what the protocol's "deciding" says."""

from __future__ import annotations

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims.compare import ratio_between_configs, ratio_between_languages
from serverbench.analysis.claims.engine import (
    EVIDENCE_ONLY,
    NO,
    UNCLEAR,
    YES,
    Claim,
    Comparison,
    Data,
    Needs,
    NotTestable,
    label,
)
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.benchmarks.spawn.columns import Col

# Needs.metric: the spawn time the sweep is judged by, the spawn_metric option (this package's OPTIONS)
SPAWN_METRIC = "{spawn_metric}"
# where the paper measured C3-C5 (claims.regime: the verdicts say at which scale they were tested)
REGIME_C3 = define(
    SourceRegime(
        "the paper: a max-processes search on an 8 GiB machine",
        ("spawn_max",),
        (Scale("memory_budget_bytes", 8 * 2**30, "memory budget (GiB)", 2**30),),
    ),
    "C3",
)
REGIME_C4 = define(
    SourceRegime(
        "the paper: 3,000,000 processes (Erlang 12 s, Go 26 s, Akka 114 s)",
        ("spawn",),
        (Scale("processes", 3_000_000, "processes"),),
    ),
    "C4",
)
REGIME_C4B = define(
    SourceRegime(
        "the paper (Fig. 4(b)): N = 1,000 to 100,000 processes",
        ("spawn",),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    "C4b",
)
REGIME_C5 = define(
    SourceRegime(
        "the paper: N = 1,000 to 100,000 processes, the JVM's default heap growth",
        ("spawn",),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    "C5",
)

# C5's Akka as the paper ran it: the JVM grows its heap from the default initial size (no
# -Xms; spec/cli.json languages.scala_akka.settings.heap); the fixed heap is the fallback.
AKKA_HEAP_GROWING = "scala_akka[heap=grow]"
PAPER_BUDGET_BYTES = 8 * 2**30


# ---------------------------------------------------------------- Spawn (Fig. 4)


def _gib(b) -> str:
    return "unknown" if b is None or pd.isna(b) else f"{float(b) / 2**30:.3g} GiB"


def _n(x) -> str:
    return "none" if x is None or pd.isna(x) else f"{int(x):,}"


def limit_text(row) -> str:
    """'1,000,000 ok, fails at 2,000,000 (over_memory_budget)' / '..., limit not established'."""
    s = f"{_n(row[Col.max_ok_processes])} ok"
    if pd.isna(row[Col.first_failed_processes]):
        return s + ", no failure reached (limit not established)"
    status = str(row.get(Col.failure_status) or str(row[Col.failure]).split(":")[0])
    if bool(row[Col.limit_found]):
        return s + f", fails at {_n(row[Col.first_failed_processes])} ({status})"
    return s + f", stopped at {_n(row[Col.first_failed_processes])} ({status}: limit not established)"


def akka_most_processes(data: Data) -> list[Comparison]:
    lim = data.P.spawn_max_limits
    if lim is None or lim.empty or "scala_akka" not in set(lim[Col.language]) or len(set(lim[Col.language])) < 2:
        raise NotTestable("the sweep has no max-processes search for Scala/Akka and at least one other language")
    lim = lim.set_index("language")
    a = lim.loc["scala_akka"]
    out = []
    for lang in lim.index:
        if lang == "scala_akka":
            continue
        o = lim.loc[lang]
        an = 0 if pd.isna(a[Col.max_ok_processes]) else a[Col.max_ok_processes]
        on = 0 if pd.isna(o[Col.max_ok_processes]) else o[Col.max_ok_processes]
        if an > on:
            r, why = (YES, "") if bool(o[Col.limit_found]) else (UNCLEAR, f"{label(lang)}'s limit not established")
        elif an < on:
            r, why = (NO, "") if bool(a[Col.limit_found]) else (UNCLEAR, "Scala/Akka's limit not established")
        else:
            r, why = UNCLEAR, "equal largest ok N"
        out.append(
            Comparison(
                f"Akka vs {label(lang)} max processes",
                f"budget={_gib(a[Col.budget_bytes])}",
                "Akka larger",
                r,
                None,
                why,
                {"akka": limit_text(a), "other": limit_text(o)},
            )
        )
    return out


def _akka_summary(comps: list[Comparison]) -> str:
    seen = [f"Scala/Akka: {comps[0].extra[Col.akka]}"] if comps else []
    seen += [f"{c.label.split(' vs ')[1].replace(' max processes', '')}: {c.extra['other']}" for c in comps]
    return "; ".join(seen)


def _budget_scope(data: Data) -> str:
    lim = data.P.spawn_max_limits
    if lim is None or lim.empty or not lim[Col.budget_bytes].notna().any():
        return ""
    budget = lim[Col.budget_bytes].dropna().iloc[0]
    s = f"memory budget {_gib(budget)}"
    if budget < PAPER_BUDGET_BYTES:
        s += " (reduced from the paper's 8 GiB machine: limits are smaller than the paper's)"
    return s


C3 = Claim(
    id="C3",
    short="Akka holds the most processes",
    needs=Needs("spawn_max", SPAWN_METRIC),
    compare=akka_most_processes,
    summarize=_akka_summary,
    scope=_budget_scope,
)


def erlang_spawns_fastest(data: Data) -> list[Comparison]:
    """At the largest fixed N all three languages ran (the fixed grid's rounds; a max-
    processes search step has no round to pair): Erlang/Go and Erlang/Akka lower."""
    d = data.values
    common = [n for n, g in d.groupby("processes") if {"erlang", "go", "scala_akka"} <= set(g[Col.language])]
    if not common:
        raise NotTestable("no fixed N was measured in Erlang, Go and Scala/Akka")
    n = max(common)
    out = []
    for lang in ("go", "scala_akka"):
        c = ratio_between_languages(
            d, "erlang", lang, {"processes": n}, data.region("C4"), f"Erlang/{label(lang)} {data.metric}"
        )
        if c is not None:
            out.append(c)
    return out


C4 = Claim(
    id="C4",
    short="Erlang spawns fastest",
    needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
    compare=erlang_spawns_fastest,
    scope=lambda data: "the paper's example is 3,000,000 processes",
)


def erlang_and_go_fastest_to_100k(data: Data) -> list[Comparison]:
    """At the protocol's N (100,000): Erlang and Go each lower than Akka, Erlang and Go similar."""
    n = protocol.claim("C4b")[Col.processes]
    d = data.values
    have = set(d.loc[d[Col.processes] == n, "language"])
    if not {"erlang", "go", "scala_akka"} <= have:
        raise NotTestable(f"no fixed-N spawn runs at N = {n:,} in Erlang, Go and Scala/Akka")
    out = [
        ratio_between_languages(
            d, lang, "scala_akka", {"processes": n}, data.region("C4b"), f"{label(lang)}/Scala/Akka {data.metric}"
        )
        for lang in ("erlang", "go")
    ]
    out.append(
        ratio_between_languages(
            d, "erlang", "go", {"processes": n}, data.region("C4b", "yes_similar"), f"Erlang/Go {data.metric}"
        )
    )
    return [c for c in out if c is not None]


C4B = Claim(
    id="C4b",
    short="Erlang and Go spawn fastest to 100,000",
    order=4.5,
    needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
    compare=erlang_and_go_fastest_to_100k,
)


def spawn_growth(data: Data) -> list[Comparison]:
    """s = (t(N2)/t(N1)) / (N2/N1) over the protocol's step, paired by round: Erlang and Go
    not higher than similar (smooth), Akka higher (a jump), Akka with its heap growing as
    the paper ran it where the sweep has those runs (the fixed heap's step then beside it,
    not deciding)."""
    n1, n2 = protocol.claim("C5")[Col.steps]
    d = data.values
    step = f"{n1:,} -> {n2:,}"

    def s_of(lang: str, region, what: str) -> Comparison | None:
        return ratio_between_configs(
            d, lang, {"processes": n2}, {"processes": n1}, region, what, step, divide_by=n2 / n1
        )

    out = [s_of(lang, data.region("C5"), f"{label(lang)} super-linearity") for lang in ("erlang", "go")]
    jump = data.region("C5", "yes_jump")
    grow = s_of(AKKA_HEAP_GROWING, jump, "Scala/Akka super-linearity (heap growing, as the paper ran it)")
    fixed = s_of("scala_akka", jump, "Scala/Akka super-linearity (fixed heap, -Xms = -Xmx)")
    if grow is not None and fixed is not None:
        fixed.result, fixed.why, fixed.rejudge = EVIDENCE_ONLY, "shown beside the growing heap; does not decide", None
    out += [grow, fixed]
    out = [c for c in out if c is not None]
    if len(out) < 3:
        raise NotTestable(f"needs fixed-N spawn runs at N = {n1:,} and {n2:,} in Erlang, Go and Scala/Akka")
    return out


C5 = Claim(
    id="C5",
    short="smooth spawn growth, Akka's jump",
    needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
    compare=spawn_growth,
)
