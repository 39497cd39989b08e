"""The paper's conclusions C1-C9 (Valkov, Chechina & Trinder, SAC 2018, Sections 4.1-4.3
and 5) as claim entries. Each entry names the data it needs, its thresholds and a
definition; the comparison functions below compute exactly what the definition says.
Ratios are stats.ratio_ci / pooled_ratio_ci (Hodges-Lehmann, exact interval at its
achieved confidence); docs/statistics.md section 4 has the same table."""

from __future__ import annotations

import pandas as pd

from serverbench.analysis.claims.compare import (
    RatioAbove, RatioBelow, RatioWithin, config_text, largest_common, pooled_ratio_between_languages,
    ratio_between_configs, ratio_between_languages,
)
from serverbench.analysis.claims.engine import (
    EVIDENCE_ONLY, NO, SPAWN_METRIC, UNCLEAR, YES, Claim, Comparison, Data, Needs, NotTestable, fmt_ci, label,
    register,
)

SIMILAR_FACTOR = 1.5  # "very similar": ratio within [1/1.5, 1.5]
GO_RANGE = (2.0, 5.0)  # "2-5x"
JUMP_FACTOR = 1.5  # a step whose time grows > 1.5x faster than N is a jump
PEAK_TOLERANCE = 1.05  # another pair count > 5 % better contradicts "peak at pairs = cores"
SCALING_TOLERANCE = 1.10  # > 10 % more throughput beyond 4 cores counts as scaling
SMALL_CORES, SMALL_PAIRS = 8, 20
PAPER_BUDGET_BYTES = 8 * 2**30
PINGPING_GROUP = ("variant", "payload", "cores", "message_bytes")
THROUGHPUT_CONFIG = ("variant", "payload", "message_bytes", "duration_s", "cores", "pairs")


def _cores_scope(data: Data) -> str:
    d = data.values
    cs = sorted(int(c) for c in d["cores"].unique()) if not d.empty and "cores" in d else []
    return f"cores measured: {', '.join(map(str, cs)) or 'none'} (paper: 1-32)"


def _machine_note(data: Data) -> str:
    cpus = data.P.info.get("logical_cpus")
    measured = data.P.info.get("cores_measured") or []
    return f"this machine: {cpus} logical CPUs; cores measured: {', '.join(map(str, measured)) or 'none'}"


# ---------------------------------------------------------------- PingPing (Fig. 3)

def pingping_ratios_at_largest_repetitions(nums, den, expect):
    """For each message size (and variant, payload, cores): num/den time ratio at the
    largest repetition count both languages measured."""

    def compare(data: Data) -> list[Comparison]:
        out = []
        for num in nums:
            pts = largest_common(data.values, PINGPING_GROUP, "repetitions", (num, den))
            several_cores = len({p.get("cores") for p in pts}) > 1
            for cfg in pts:
                where = f"{cfg['message_bytes'] / 1000:g} kB x {int(cfg['repetitions']):,}"
                where += f", {int(cfg['cores'])} core(s)" if several_cores else ""
                c = ratio_between_languages(data.values, num, den, cfg, expect, f"{label(num)}/{label(den)} time",
                                            where)
                if c is not None:
                    out.append(c)
        return out

    return compare


def _sizes_scope(data: Data) -> str:
    sizes = sorted(int(s) for s in data.values["message_bytes"].unique())
    return f"message sizes measured: {', '.join(map(str, sizes))} bytes"


register(Claim(
    id="C1", source="Sec. 4.1, Fig. 3",
    sentence="Go and Erlang have lower PingPing latency than Scala/Akka at every message size",
    needs=Needs("pingping", "elapsed_s", languages=("scala_akka",), any_of=("go", "erlang")),
    compare=pingping_ratios_at_largest_repetitions(("go", "erlang"), "scala_akka", RatioBelow(1.0)),
    definition="For each message size, at the largest repetition count measured in both languages: Go/Akka and "
               "Erlang/Akka time ratios (Hodges-Lehmann, exact interval). 'yes' if the interval lies below 1, 'no' "
               "if above. Supported if every comparison is yes; contradicted if any is no.",
    scope=_sizes_scope))

register(Claim(
    id="C2", source="Sec. 4.1, Fig. 3",
    sentence="Go and Erlang PingPing latencies are very similar",
    needs=Needs("pingping", "elapsed_s", languages=("go", "erlang")),
    compare=pingping_ratios_at_largest_repetitions(("go",), "erlang",
                                                   RatioWithin(1 / SIMILAR_FACTOR, SIMILAR_FACTOR)),
    definition=f"For each message size, at the largest repetition count measured in both: the Go/Erlang time ratio. "
               f"'yes' if its interval lies inside [1/{SIMILAR_FACTOR}, {SIMILAR_FACTOR}], 'no' if entirely outside. "
               f"Supported if all yes; contradicted if any no.",
    scope=_sizes_scope))


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
        out.append(Comparison(f"Akka vs {label(lang)} max processes", f"budget={_gib(a['budget_bytes'])}",
                              "Akka larger", r, None, why,
                              {"akka": limit_text(a), "other": limit_text(o)}))
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


register(Claim(
    id="C3", source="Sec. 4.2, Fig. 4(a)",
    sentence="Scala/Akka supports the most dormant processes",
    needs=Needs("spawn_max", SPAWN_METRIC),
    compare=akka_most_processes,
    definition="From the max-processes search (Fig. 4a): per language the largest N that ran ok below the first "
               "failing N. Against each other language: 'yes' if Akka's is larger and the other's limit was "
               "established (a step failed with over_memory_budget, crashed or invalid); 'no' if the other's is "
               "larger and Akka's limit was established; otherwise (equal, or a limit not established: a timeout "
               "says nothing about how many processes fit) unclear. Tested at the sweep's memory budget.",
    summarize=_akka_summary, scope=_budget_scope))


def spawn_values_pooled(data: Data) -> pd.DataFrame:
    """Spawn times of the fixed-N and the max-processes runs together: language, processes, value."""
    cols = ["language", "processes", "value"]
    parts = [x[cols] for x in (data.values, data.table("spawn_max", data.metric)) if not x.empty]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)


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
        c = ratio_between_languages(d, "erlang", lang, {"processes": n}, RatioBelow(1.0),
                                    f"Erlang/{label(lang)} {data.metric}")
        if c is not None:
            out.append(c)
    return out


register(Claim(
    id="C4", source="Sec. 4.2, Fig. 4",
    sentence="Erlang spawns processes fastest (e.g. 3 M processes in 12 s)",
    needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
    compare=erlang_spawns_fastest,
    definition="Spawn time pooled over the fixed-N and max-processes runs. At the largest N with at least 5 ok "
               "trials in all three languages (else the largest N all three ran): Erlang/Go and Erlang/Akka time "
               "ratios. 'yes' if the interval lies below 1, 'no' if above. Supported if both yes.",
    scope=lambda data: "the paper's example is 3,000,000 processes"))


def spawn_growth(data: Data) -> list[Comparison]:
    d = data.values
    all_n = sorted(d["processes"].unique())
    d = d[(d["processes"] >= 10_000) & (d["processes"] <= 100_000)]
    out = []
    for lang in ("erlang", "go"):
        ns = sorted(d.loc[d["language"] == lang, "processes"].unique())
        for n1, n2 in zip(ns, ns[1:]):
            c = ratio_between_configs(d, lang, {"processes": n2}, {"processes": n1}, RatioBelow(JUMP_FACTOR),
                                      f"{label(lang)} super-linearity", f"{int(n1):,} -> {int(n2):,}",
                                      divide_by=n2 / n1)
            if c is not None:
                out.append(c)
    ns = sorted(d.loc[d["language"] == "scala_akka", "processes"].unique())
    nxt = [n for n in ns if 10_000 < n <= 25_000]
    if 10_000 not in ns or not nxt or not out:
        raise NotTestable("needs fixed-N spawn runs at 10,000 and 20,000 (or up to 25,000) for Akka and two N >= "
                          f"10,000 for Erlang and Go; fixed N measured: "
                          f"{', '.join(f'{int(n):,}' for n in all_n) or 'none'}")
    c = ratio_between_configs(d, "scala_akka", {"processes": nxt[0]}, {"processes": 10_000}, RatioAbove(JUMP_FACTOR),
                              "Scala/Akka super-linearity", f"10,000 -> {int(nxt[0]):,}", divide_by=nxt[0] / 10_000)
    return out + ([c] if c is not None else [])


register(Claim(
    id="C5", source="Sec. 4.2, Fig. 4(b)",
    sentence="Erlang and Go spawn time grows smoothly up to 100,000 processes; Akka's jumps between 10,000 and 20,000",
    needs=Needs("spawn", SPAWN_METRIC, languages=("erlang", "go", "scala_akka")),
    compare=spawn_growth,
    definition=f"Fixed-N spawn runs, N from 10,000 to 100,000. For consecutive measured N1 < N2 the super-linearity "
               f"s = (t(N2)/t(N1)) / (N2/N1), the time ratio's interval divided by N2/N1. Smooth if s's interval lies "
               f"below {JUMP_FACTOR}, a jump if above. Erlang and Go: 'yes' per smooth step, 'no' per jump. Akka: "
               f"the step from 10,000 to the next N up to 25,000 must be a jump. Supported if all yes."))


# ---------------------------------------------------------------- Throughput (Fig. 5)

def go_2_to_5x(data: Data) -> list[Comparison]:
    out = []
    for other in ("erlang", "scala_akka"):
        out += pooled_ratio_between_languages(data.values, "go", other, THROUGHPUT_CONFIG, RatioWithin(*GO_RANGE))
    return out


def _pooled_summary(comps: list[Comparison]) -> str:
    parts = []
    for c in comps:
        if c.result == EVIDENCE_ONLY:
            continue
        per = [x.ci.ratio for x in comps if x.result == EVIDENCE_ONLY and x.label == c.label.replace(" pooled", "")
               and x.ci is not None]
        rng = f" (per configuration {min(per):.2f}-{max(per):.2f})" if per else ""
        parts.append(f"{c.label} over {c.config}: {fmt_ci(c.ci)}{rng}")
    return "; ".join(parts)


register(Claim(
    id="C6", source="Sec. 4.3, Fig. 5; Sec. 5",
    sentence="Go's throughput is 2-5x that of Erlang and Scala/Akka",
    needs=Needs("throughput", "paper_msgs_per_min", languages=("go",), any_of=("erlang", "scala_akka")),
    compare=go_2_to_5x,
    definition=f"Over every (cores, pairs) configuration measured in both languages: one pooled Go/Erlang and one "
               f"Go/Akka ratio of exchanges per minute (stratified Hodges-Lehmann over the configurations, exact "
               f"interval). 'yes' if the interval lies inside [{GO_RANGE[0]:g}, {GO_RANGE[1]:g}], 'no' if entirely "
               f"outside. Supported if both yes. Per-configuration ratios are in the evidence table.",
    summarize=_pooled_summary, scope=_cores_scope))


def erlang_vs_akka_region(small: bool):
    def compare(data: Data) -> list[Comparison]:
        d = data.values
        if small:
            mask = (d["cores"] <= SMALL_CORES) & (d["pairs"] <= SMALL_PAIRS)
        else:
            mask = (d["cores"] > SMALL_CORES) & (d["pairs"] > SMALL_PAIRS)
            if not mask.any():
                raise NotTestable(f"needs runs on more than {SMALL_CORES} cores; {_machine_note(data)}")
        out = pooled_ratio_between_languages(d, "erlang", "scala_akka", THROUGHPUT_CONFIG,
                                             RatioAbove(1.0) if small else RatioBelow(1.0), mask, "region")
        if not out:
            raise NotTestable("no configuration in the region measured in both languages")
        return out

    return compare


register(Claim(
    id="C7a", source="Sec. 4.3, Fig. 5", order=7.0,
    sentence=f"Erlang's throughput beats Akka's at small scale (<= {SMALL_CORES} cores, <= {SMALL_PAIRS} pairs)",
    needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "scala_akka")),
    compare=erlang_vs_akka_region(small=True),
    definition=f"Configurations with cores <= {SMALL_CORES} and pairs <= {SMALL_PAIRS}: one pooled Erlang/Akka ratio "
               f"of exchanges per minute. Supported if its interval lies above 1; contradicted if below 1.",
    summarize=_pooled_summary, scope=_cores_scope))

register(Claim(
    id="C7b", source="Sec. 4.3, Fig. 5", order=7.1,
    sentence="... and Erlang loses to Akka at larger scale (more cores and pairs)",
    needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "scala_akka")),
    compare=erlang_vs_akka_region(small=False),
    definition=f"Configurations with cores > {SMALL_CORES} and pairs > {SMALL_PAIRS}: one pooled Erlang/Akka ratio. "
               f"Supported if its interval lies below 1; contradicted if above. Not testable without runs on more "
               f"than {SMALL_CORES} cores.",
    summarize=_pooled_summary, scope=_cores_scope))


def peak_at_pairs_equal_cores(data: Data) -> list[Comparison]:
    d = data.values
    keys = [k for k in ("variant", "payload", "message_bytes", "duration_s", "cores") if k in d]
    out = []
    for lang in ("erlang", "go"):
        for kv, g in d[d["language"] == lang].groupby(keys):
            cfg = dict(zip(keys, kv))
            c = cfg["cores"]
            if not (g["pairs"] == c).any():
                continue
            for p in sorted(x for x in g["pairs"].unique() if x != c):
                comp = ratio_between_configs(g, lang, {"pairs": p}, {"pairs": c}, RatioBelow(PEAK_TOLERANCE),
                                             f"{label(lang)} T(P)/T(pairs=cores)", f"cores={int(c)}, P={int(p)}")
                if comp is not None:
                    out.append(comp)
    if not out:
        raise NotTestable("no core count measured with pairs = cores and another pair count")
    return out


register(Claim(
    id="C8", source="Sec. 4.3, Fig. 5",
    sentence="Erlang and Go throughput peaks when the number of pairs equals the number of cores",
    needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "go")),
    compare=peak_at_pairs_equal_cores,
    definition=f"For Erlang and Go, at every core count C whose sweep includes pairs = C: for every other pair count "
               f"P the ratio T(P)/T(C) of exchanges per minute. 'yes' if its interval lies below {PEAK_TOLERANCE} "
               f"(no pair count more than {(PEAK_TOLERANCE - 1) * 100:.0f} % better), 'no' if above. Supported if "
               f"all yes; contradicted if any no.",
    scope=_cores_scope))


def go_no_scaling_beyond_4(data: Data) -> list[Comparison]:
    d = data.values[data.values["language"] == "go"]
    cores = {int(c) for c in d["cores"].unique()}
    if 4 not in cores or not any(c > 4 for c in cores):
        raise NotTestable(f"needs Go throughput runs on 4 and on 8 or more cores; {_machine_note(data)}")
    out = []
    for p in sorted(x for x in d["pairs"].unique() if x >= 4):
        for c in sorted(x for x in cores if x > 4):
            comp = ratio_between_configs(d, "go", {"cores": c, "pairs": p}, {"cores": 4, "pairs": p},
                                         RatioBelow(SCALING_TOLERANCE), "Go T(C)/T(4 cores)",
                                         config_text({"cores": c, "pairs": p}))
            if comp is not None:
                out.append(comp)
    if not out:
        raise NotTestable("no pair count >= 4 measured at 4 and at more than 4 cores")
    return out


register(Claim(
    id="C9", source="Sec. 4.3, Fig. 5; Sec. 5",
    sentence="Go's throughput does not scale beyond 4 cores",
    needs=Needs("throughput", "paper_msgs_per_min", languages=("go",)),
    compare=go_no_scaling_beyond_4,
    definition=f"Go, for every pair count P >= 4 measured at 4 cores and at some C > 4: the ratio T(C, P)/T(4, P) "
               f"of exchanges per minute. 'yes' (no scaling) if its interval lies below {SCALING_TOLERANCE}; 'no' if "
               f"above. Supported if all yes; contradicted if any no. Not testable without runs on 4 and more than "
               f"4 cores.",
    scope=_cores_scope))
