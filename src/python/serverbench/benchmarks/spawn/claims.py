"""The paper's conclusions about spawning processes (Fig. 4): C3-C5 as claim entries (Valkov, Chechina & Trinder,
SAC 2018). Each entry names the data it needs, its thresholds and a definition; the
comparison functions compute exactly what the definition says. docs/statistics.md
section 4 has the same table."""

from __future__ import annotations

import numpy as np
import pandas as pd

from serverbench.analysis.claims.compare import (
    RatioAbove,
    RatioBelow,
    RatioWithin,
    order_below,
    ratio_between_configs,
    ratio_between_languages,
)
from serverbench.analysis.claims.decision import ZONE_TEXT
from serverbench.analysis.claims.engine import (
    EVIDENCE_ONLY,
    NO,
    SPAWN_METRIC,
    UNCLEAR,
    YES,
    Claim,
    Comparison,
    Data,
    Needs,
    NotTestable,
    label,
    register,
)
from serverbench.analysis.claims.regime import Scale, SourceRegime, define

# where the paper measured C3-C5 (claims.regime: the verdicts say at which scale they were tested)
define(
    SourceRegime(
        "the paper: a max-processes search on an 8 GiB machine",
        ("spawn_max",),
        (Scale("memory_budget_bytes", 8 * 2**30, "memory budget (GiB)", 2**30),),
    ),
    "C3",
)
define(
    SourceRegime(
        "the paper: 3,000,000 processes (Erlang 12 s, Go 26 s, Akka 114 s)",
        ("spawn", "spawn_max"),
        (Scale("processes", 3_000_000, "processes"),),
    ),
    "C4",
)
define(
    SourceRegime(
        "the paper (Fig. 4(b)): N = 1,000 to 100,000 processes",
        ("spawn", "spawn_max"),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    "C4b",
)
define(
    SourceRegime(
        "the paper: N = 1,000 to 100,000 processes, the JVM's default heap growth",
        ("spawn",),
        (Scale("processes", 100_000, "processes", decides_up_to=100_000),),
    ),
    "C5",
)

C4B_MAX_N = 100_000  # "up to 100,000" (Sec. 4.2)
C4B_SIMILAR = 1.5  # Erlang and Go about equal there: within 1.5x, as C2's "very similar"
JUMP_FACTOR = 1.5  # a step whose time grows > 1.5x faster than N is a jump
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
    s = f"{_n(row['max_ok_processes'])} ok"
    if pd.isna(row["first_failed_processes"]):
        return s + ", no failure reached (limit not established)"
    status = str(row.get("failure_status") or str(row["failure"]).split(":")[0])
    if bool(row["limit_found"]):
        return s + f", fails at {_n(row['first_failed_processes'])} ({status})"
    return s + f", stopped at {_n(row['first_failed_processes'])} ({status}: limit not established)"


def akka_most_processes(data: Data) -> list[Comparison]:
    lim = data.P.spawn_max_limits
    if lim is None or lim.empty or "scala_akka" not in set(lim["language"]) or len(set(lim["language"])) < 2:
        raise NotTestable("the sweep has no max-processes search for Scala/Akka and at least one other language")
    lim = lim.set_index("language")
    a = lim.loc["scala_akka"]
    out = []
    for lang in lim.index:
        if lang == "scala_akka":
            continue
        o = lim.loc[lang]
        an = 0 if pd.isna(a["max_ok_processes"]) else a["max_ok_processes"]
        on = 0 if pd.isna(o["max_ok_processes"]) else o["max_ok_processes"]
        if an > on:
            r, why = (YES, "") if bool(o["limit_found"]) else (UNCLEAR, f"{label(lang)}'s limit not established")
        elif an < on:
            r, why = (NO, "") if bool(a["limit_found"]) else (UNCLEAR, "Scala/Akka's limit not established")
        else:
            r, why = UNCLEAR, "equal largest ok N"
        out.append(
            Comparison(
                f"Akka vs {label(lang)} max processes",
                f"budget={_gib(a['budget_bytes'])}",
                "Akka larger",
                r,
                None,
                why,
                {"akka": limit_text(a), "other": limit_text(o)},
            )
        )
    return out


def _akka_summary(comps: list[Comparison]) -> str:
    seen = [f"Scala/Akka: {comps[0].extra['akka']}"] if comps else []
    seen += [f"{c.label.split(' vs ')[1].replace(' max processes', '')}: {c.extra['other']}" for c in comps]
    return "; ".join(seen)


def _budget_scope(data: Data) -> str:
    lim = data.P.spawn_max_limits
    if lim is None or lim.empty or not lim["budget_bytes"].notna().any():
        return ""
    budget = lim["budget_bytes"].dropna().iloc[0]
    s = f"memory budget {_gib(budget)}"
    if budget < PAPER_BUDGET_BYTES:
        s += " (reduced from the paper's 8 GiB machine: limits are smaller than the paper's)"
    return s


register(
    Claim(
        id="C3",
        source="Sec. 4.2, Fig. 4(a)",
        sentence="Scala/Akka supports the most dormant processes",
        needs=Needs("spawn_max", SPAWN_METRIC),
        compare=akka_most_processes,
        definition="From the max-processes search (Fig. 4a): per language the largest N that ran ok below the first "
        "failing N. Against each other language: 'yes' if Akka's is larger and the other's limit was "
        "established (a step failed with over_memory_budget, crashed or invalid); 'no' if the other's is "
        "larger and Akka's limit was established; otherwise (equal, or a limit not established: a timeout "
        "says nothing about how many processes fit) unclear. Tested at the sweep's memory budget.",
        summarize=_akka_summary,
        scope=_budget_scope,
    )
)


def spawn_values_pooled(data: Data) -> pd.DataFrame:
    """Spawn times of the fixed-N and the max-processes runs together: language, processes,
    trial, value (indexed by runs rows). The fixed-N runs keep their round (trial), so a comparison at an N only they
    measured can pair by round; a search step has no round (NaN), so an N it also measured
    is compared unpaired (paired.pairs_by_round says "no round ids")."""
    cols = ["language", "processes", "trial", "value"]
    fixed, search = data.values, data.table("spawn_max", data.metric)
    parts = [fixed.reindex(columns=cols)] if not fixed.empty else []
    if not search.empty:
        parts.append(search.reindex(columns=cols).assign(trial=np.nan))
    # both keep the runs table's row labels: Comparison.sources names the runs a second stage extends
    return pd.concat(parts) if parts else pd.DataFrame(columns=cols)


def erlang_spawns_fastest(data: Data) -> list[Comparison]:
    d = spawn_values_pooled(data)
    cnt = d.groupby(["processes", "language"]).size().unstack()
    need = [x for x in ("erlang", "go", "scala_akka") if x in cnt.columns]
    full = cnt[need].dropna() if len(need) == 3 else cnt.iloc[0:0]
    if full.empty:
        raise NotTestable("no N was measured in Erlang, Go and Scala/Akka")
    enough = full[(full >= 5).all(axis=1)]
    n = enough.index.max() if not enough.empty else full.index.max()
    out = []
    for lang in ("go", "scala_akka"):
        c = ratio_between_languages(
            d, "erlang", lang, {"processes": n}, order_below(), f"Erlang/{label(lang)} {data.metric}"
        )
        if c is not None:
            out.append(c)
    return out


register(
    Claim(
        id="C4",
        source="Sec. 4.2, Fig. 4",
        sentence="Erlang spawns processes fastest (e.g. 3 M processes in 12 s)",
        needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
        compare=erlang_spawns_fastest,
        definition="Spawn time pooled over the fixed-N and max-processes runs. At the largest N with at least 5 ok "
        "trials in all three languages (else the largest N all three ran): Erlang/Go and Erlang/Akka time "
        "ratios. 'yes' if the interval lies below 1, 'no' if above, each by more than "
        f"{ZONE_TEXT}. Supported if both yes.",
        scope=lambda data: "the paper's example is 3,000,000 processes",
    )
)


def erlang_and_go_fastest_to_100k(data: Data) -> list[Comparison]:
    """At the largest N <= 100,000 measured in all three languages: Erlang and Go each faster
    than Akka (order claims) and Erlang within 1.5x of Go (equivalence): the paper's own
    statement for that range, beside C4's at the largest N."""
    d = spawn_values_pooled(data)
    d = d[d["processes"] <= C4B_MAX_N]
    cnt = d.groupby(["processes", "language"]).size().unstack()
    need = ("erlang", "go", "scala_akka")
    if cnt.empty or not all(x in cnt.columns for x in need) or cnt[list(need)].dropna().empty:
        raise NotTestable(f"no N <= {C4B_MAX_N:,} measured in Erlang, Go and Scala/Akka")
    n = cnt[list(need)].dropna().index.max()
    out = []
    for lang in ("erlang", "go"):
        c = ratio_between_languages(
            d, lang, "scala_akka", {"processes": n}, order_below(), f"{label(lang)}/Scala/Akka {data.metric}"
        )
        if c is not None:
            out.append(c)
    c = ratio_between_languages(
        d, "erlang", "go", {"processes": n}, RatioWithin(1 / C4B_SIMILAR, C4B_SIMILAR), f"Erlang/Go {data.metric}"
    )
    return out + ([c] if c is not None else [])


register(
    Claim(
        id="C4b",
        source="Sec. 4.2, Fig. 4(b)",
        order=4.5,
        sentence="Up to 100,000 processes Erlang and Go minimise process creation time (paraphrase)",
        needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
        compare=erlang_and_go_fastest_to_100k,
        definition=f"Spawn time pooled over the fixed-N and max-processes runs, at the largest N <= {C4B_MAX_N:,} "
        f"measured in all three languages: Erlang/Akka and Go/Akka time ratios, 'yes' below 1 and 'no' above "
        f"it, each outside {ZONE_TEXT}; and Erlang/Go within [1/{C4B_SIMILAR:g}, {C4B_SIMILAR:g}] (two "
        "one-sided tests): Erlang and Go about equal. Supported if all three say yes. C4 is the claim at "
        "the largest N, where the paper says Erlang alone is fastest.",
    )
)


def spawn_growth(data: Data) -> list[Comparison]:
    d = data.values
    all_n = sorted(d["processes"].unique())
    d = d[(d["processes"] >= 10_000) & (d["processes"] <= 100_000)]
    out = []
    for lang in ("erlang", "go"):
        ns = sorted(d.loc[d["language"] == lang, "processes"].unique())
        for n1, n2 in zip(ns, ns[1:]):
            c = ratio_between_configs(
                d,
                lang,
                {"processes": n2},
                {"processes": n1},
                RatioBelow(JUMP_FACTOR),
                f"{label(lang)} super-linearity",
                f"{int(n1):,} -> {int(n2):,}",
                divide_by=n2 / n1,
            )
            if c is not None:
                out.append(c)
    both = AKKA_HEAP_GROWING in set(d["language"])
    steps = {akka: _akka_jump(d, akka, both) for akka in (AKKA_HEAP_GROWING, "scala_akka")}
    deciding = AKKA_HEAP_GROWING if steps[AKKA_HEAP_GROWING] is not None else "scala_akka"
    if steps[deciding] is None or not out:
        raise NotTestable(
            "needs fixed-N spawn runs at 10,000 and 20,000 (or up to 25,000) for Akka and two N >= "
            f"10,000 for Erlang and Go; fixed N measured: "
            f"{', '.join(f'{int(n):,}' for n in all_n) or 'none'}"
        )
    other = "scala_akka" if deciding == AKKA_HEAP_GROWING else None
    if other is not None and steps[other] is not None:
        steps[other].result = EVIDENCE_ONLY  # the fixed heap's step, for comparison only
        return out + [steps[deciding], steps[other]]
    return out + [steps[deciding]]


def _akka_jump(d: pd.DataFrame, akka: str, both: bool) -> Comparison | None:
    """Akka's step from 10,000 to the next N up to 25,000, which must be a jump. The label
    names the heap only where the sweep ran both (the paper's own data says nothing of it)."""
    ns = sorted(d.loc[d["language"] == akka, "processes"].unique())
    nxt = [n for n in ns if 10_000 < n <= 25_000]
    if 10_000 not in ns or not nxt:
        return None
    heap = "heap growing, as the paper ran it" if akka == AKKA_HEAP_GROWING else "fixed heap, -Xms = -Xmx"
    return ratio_between_configs(
        d,
        akka,
        {"processes": nxt[0]},
        {"processes": 10_000},
        RatioAbove(JUMP_FACTOR),
        f"Scala/Akka super-linearity ({heap})" if both or akka == AKKA_HEAP_GROWING else "Scala/Akka super-linearity",
        f"10,000 -> {int(nxt[0]):,}",
        divide_by=nxt[0] / 10_000,
    )


register(
    Claim(
        id="C5",
        source="Sec. 4.2, Fig. 4(b)",
        sentence="Erlang and Go spawn time grows smoothly up to 100,000 processes; "
        "Akka's jumps between 10,000 and 20,000",
        needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
        compare=spawn_growth,
        definition=f"Fixed-N spawn runs, N from 10,000 to 100,000. For consecutive measured N1 < N2 the "
        f"super-linearity "
        f"s = (t(N2)/t(N1)) / (N2/N1), the time ratio's interval divided by N2/N1. Smooth if s's interval lies "
        f"below {JUMP_FACTOR}, a jump if above. Erlang and Go: 'yes' per smooth step, 'no' per jump. Akka: "
        f"the step from 10,000 to the next N up to 25,000 must be a jump, measured with the JVM growing its "
        f"heap from its default initial size (no -Xms), as the paper ran it, where the sweep has those runs "
        f"(quick does: spawn's also-grid, language scala_akka[heap=grow]); otherwise with the fixed heap "
        f"(-Xms = -Xmx), which the row then says; with both, the fixed heap's step is shown beside it and "
        f"does not decide. Supported if all yes.",
    )
)
