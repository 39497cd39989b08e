"""The paper's conclusions about throughput (Fig. 5): C6-C9 as claim entries (Valkov, Chechina & Trinder,
SAC 2018). Each entry names the data it needs, its thresholds and a definition; the
comparison functions compute exactly what the definition says. docs/statistics.md
section 4 has the same table."""

from __future__ import annotations

import math

from scipy.stats import norm

from serverbench.analysis import stats
from serverbench.analysis.claims.compare import (
    RatioBelow,
    RatioWithin,
    by_round,
    config_text,
    judged,
    order_above,
    order_below,
    paired_groups,
    pooled_ratio_between_languages,
    ratio_between_configs,
)
from serverbench.analysis.claims.decision import ZONE_TEXT
from serverbench.analysis.claims.engine import (
    EVIDENCE_ONLY,
    Claim,
    Comparison,
    Data,
    Needs,
    NotTestable,
    fmt_ci,
    label,
    register,
)
from serverbench.analysis.claims.regime import Scale, SourceRegime, define

# where the paper measured C6-C12 (claims.regime: the verdicts say at which scale they were tested)
REGIME = define(
    SourceRegime(
        "the paper (Fig. 5): 60 s runs, 1 to 128 pairs, 1 to 32 cores",
        ("throughput",),
        (Scale("duration_s", 60, "run length (s)"), Scale("pairs", 128, "pairs")),
    ),
    "C6",
    "C7a",
    "C7b",
    "C8",
    "C9",
    "C11",
    "C12",
)

GO_RANGE = (2.0, 5.0)  # "2-5x"
PEAK_TOLERANCE = 1.05  # another pair count > 5 % better contradicts "peak at pairs = cores"
SCALING_TOLERANCE = 1.10  # > 10 % more throughput beyond 4 cores counts as scaling
SMALL_CORES, SMALL_PAIRS = 8, 20
THROUGHPUT_CONFIG = ("variant", "payload", "message_bytes", "duration_s", "cores", "pairs")


def _cores_scope(data: Data) -> str:
    d = data.values
    cs = sorted(int(c) for c in d["cores"].unique()) if not d.empty and "cores" in d else []
    return f"cores measured: {', '.join(map(str, cs)) or 'none'} (paper: 1-32)"


def _machine_note(data: Data) -> str:
    cpus = data.P.info.get("logical_cpus")
    measured = data.P.info.get("cores_measured") or []
    return f"this machine: {cpus} logical CPUs; cores measured: {', '.join(map(str, measured)) or 'none'}"


# ---------------------------------------------------------------- Throughput (Fig. 5)


def go_2_to_5x(data: Data) -> list[Comparison]:
    """ "Consistently 2-5x": every configuration's own Go/other ratio is judged (a pooled
    ratio would hide a configuration at 0.6 behind one at 5); a random-effects summary over
    the configurations (its mean and tau, the spread of the true ratios between them) is
    reported beside them."""
    out = []
    expect = RatioWithin(*GO_RANGE)
    for other in ("erlang", "scala_akka"):
        groups, cfgs = paired_groups(data.values, "go", other, THROUGHPUT_CONFIG)
        rows = []
        for (a, b), cfg in zip(groups, cfgs):
            ci, at_level, note = by_round(a, b)
            rows.append(judged(f"Go/{label(other)}", config_text(cfg), ci, expect, at_level, **note))
        if rows:
            out.append(_random_effects_row(f"Go/{label(other)} random effects", rows, expect))
            out += rows
    return out


def _random_effects_row(what: str, rows: list[Comparison], expect: RatioWithin) -> Comparison:
    cis = [r.ci for r in rows if r.ci is not None and r.ci.lo > 0 and r.ci.level > 0]
    z = [norm.ppf(0.5 + min(c.level, 0.9999) / 2) for c in cis]
    logs = [math.log(c.ratio) for c in cis]
    ses = [(math.log(c.hi) - math.log(c.lo)) / (2 * q) for c, q in zip(cis, z)]
    mu, lo, hi, tau = stats.random_effects(logs, ses)
    ci = stats.RatioCI(
        len(cis), len(cis), math.exp(mu), math.exp(lo), math.exp(hi), 0.95, "random effects (DerSimonian-Laird)"
    )
    return Comparison(
        what,
        f"over {len(cis)} configurations",
        expect.text,
        EVIDENCE_ONLY,
        ci,
        "",
        {"tau_log": round(tau, 4), "note": f"between-configuration sd of the true log ratio: {tau:.2f}"},
    )


def _pooled_summary(comps: list[Comparison]) -> str:
    """Per language pair: the random-effects summary, tau, and how many configurations say what."""
    parts = []
    for c in comps:
        if not c.label.endswith("random effects"):
            continue
        pair = c.label.replace(" random effects", "")
        mine = [x for x in comps if x.label == pair and x.result != EVIDENCE_ONLY]
        per = [x.ci.ratio for x in mine if x.ci is not None]
        counts = ", ".join(f"{sum(x.result == k for x in mine)} {k}" for k in ("yes", "no", "unclear"))
        rng = f"per configuration {min(per):.2f}-{max(per):.2f} ({counts})" if per else counts
        parts.append(f"{pair}: {rng}; random effects {fmt_ci(c.ci)}, tau {c.extra['tau_log']:.2f}")
    return "; ".join(parts)


register(
    Claim(
        id="C6",
        source="Sec. 4.3, Fig. 5; Sec. 5",
        sentence="Go's throughput is 2-5x that of Erlang and Scala/Akka",
        needs=Needs("throughput", "paper_msgs_per_min", languages=("go",), any_of=("erlang", "scala_akka")),
        compare=go_2_to_5x,
        definition=f"'Consistently': every (cores, pairs) configuration measured in both languages is judged on "
        f"its own Go/Erlang and Go/Akka ratio of exchanges per minute: 'yes' if its 90 % interval lies inside "
        f"[{GO_RANGE[0]:g}, {GO_RANGE[1]:g}] (two one-sided tests), 'no' if its 95 % interval lies beyond "
        f"the tolerance gap. Supported if every configuration says yes; contradicted if one says no after "
        f"Holm's correction. A random-effects (DerSimonian-Laird) summary over the configurations, with tau, "
        f"the spread of the true ratios between them, is reported beside them.",
        summarize=_pooled_summary,
        scope=_cores_scope,
    )
)


def erlang_vs_akka_region(small: bool):
    def compare(data: Data) -> list[Comparison]:
        d = data.values
        if small:
            mask = (d["cores"] <= SMALL_CORES) & (d["pairs"] <= SMALL_PAIRS)
        else:
            mask = (d["cores"] > SMALL_CORES) & (d["pairs"] > SMALL_PAIRS)
            if not mask.any():
                raise NotTestable(f"needs runs on more than {SMALL_CORES} cores; {_machine_note(data)}")
        out = pooled_ratio_between_languages(
            d, "erlang", "scala_akka", THROUGHPUT_CONFIG, order_above() if small else order_below(), mask, "region"
        )
        if not out:
            raise NotTestable("no configuration in the region measured in both languages")
        return out

    return compare


register(
    Claim(
        id="C7a",
        source="Sec. 4.3, Fig. 5",
        order=7.0,
        sentence=f"Erlang's throughput beats Akka's at small scale (<= {SMALL_CORES} cores, <= {SMALL_PAIRS} pairs)",
        needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "scala_akka")),
        compare=erlang_vs_akka_region(small=True),
        definition=f"Configurations with cores <= {SMALL_CORES} and pairs <= {SMALL_PAIRS}: one pooled "
        f"Erlang/Akka ratio "
        f"of exchanges per minute. Supported if its interval lies above 1; contradicted if below 1 (each by more "
        f"than {ZONE_TEXT}).",
        summarize=_pooled_summary,
        scope=_cores_scope,
    )
)

register(
    Claim(
        id="C7b",
        source="Sec. 4.3, Fig. 5",
        order=7.1,
        sentence="... and Erlang loses to Akka at larger scale (more cores and pairs)",
        needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "scala_akka")),
        compare=erlang_vs_akka_region(small=False),
        definition=f"Configurations with cores > {SMALL_CORES} and pairs > {SMALL_PAIRS}: one pooled "
        f"Erlang/Akka ratio. "
        f"Supported if its interval lies below 1; contradicted if above (each by more than "
        f"{ZONE_TEXT}). Not testable without runs on more "
        f"than {SMALL_CORES} cores.",
        summarize=_pooled_summary,
        scope=_cores_scope,
    )
)


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
                comp = ratio_between_configs(
                    g,
                    lang,
                    {"pairs": p},
                    {"pairs": c},
                    RatioBelow(PEAK_TOLERANCE),
                    f"{label(lang)} T(P)/T(pairs=cores)",
                    f"cores={int(c)}, P={int(p)}",
                )
                if comp is not None:
                    if c < 2:  # one scheduler: every pair count shares one CPU, there is no peak to find
                        comp.extra["note"] = f"1 core: no peak to find, shown for context (would decide: {comp.result})"
                        comp.result = EVIDENCE_ONLY
                    out.append(comp)
    if not any(c.result != EVIDENCE_ONLY for c in out):
        raise NotTestable("needs a core count >= 2 measured with pairs = cores and another pair count")
    return out


register(
    Claim(
        id="C8",
        source="Sec. 4.3, Fig. 5",
        sentence="Erlang and Go throughput peaks when the number of pairs equals the number of cores",
        needs=Needs("throughput", "paper_msgs_per_min", languages=("erlang", "go")),
        compare=peak_at_pairs_equal_cores,
        definition=f"For Erlang and Go, at every core count C >= 2 whose sweep includes pairs = C (on 1 core there "
        f"is no peak to find: those rows are shown for context): for every other "
        f"pair count "
        f"P the ratio T(P)/T(C) of exchanges per minute. 'yes' if its interval lies below {PEAK_TOLERANCE} "
        f"(no pair count more than {(PEAK_TOLERANCE - 1) * 100:.0f} % better), 'no' if above. Supported if "
        f"all yes; contradicted if any no.",
        scope=_cores_scope,
    )
)


def go_no_scaling_beyond_4(data: Data) -> list[Comparison]:
    d = data.values[data.values["language"] == "go"]
    cores = {int(c) for c in d["cores"].unique()}
    if 4 not in cores or not any(c > 4 for c in cores):
        raise NotTestable(f"needs Go throughput runs on 4 and on 8 or more cores; {_machine_note(data)}")
    out = []
    for p in sorted(x for x in d["pairs"].unique() if x >= 4):
        for c in sorted(x for x in cores if x > 4):
            comp = ratio_between_configs(
                d,
                "go",
                {"cores": c, "pairs": p},
                {"cores": 4, "pairs": p},
                RatioBelow(SCALING_TOLERANCE),
                "Go T(C)/T(4 cores)",
                config_text({"cores": c, "pairs": p}),
            )
            if comp is not None:
                out.append(comp)
    if not out:
        raise NotTestable("no pair count >= 4 measured at 4 and at more than 4 cores")
    return out


register(
    Claim(
        id="C9",
        source="Sec. 4.3, Fig. 5; Sec. 5",
        sentence="Go's throughput does not scale beyond 4 cores",
        needs=Needs("throughput", "paper_msgs_per_min", languages=("go",)),
        compare=go_no_scaling_beyond_4,
        definition=f"Go, for every pair count P >= 4 measured at 4 cores and at some C > 4: the ratio T(C, P)/T(4, P) "
        f"of exchanges per minute. 'yes' (no scaling) if its interval lies below {SCALING_TOLERANCE}; 'no' if "
        f"above. Supported if all yes; contradicted if any no. Not testable without runs on 4 and more than "
        f"4 cores.",
        scope=_cores_scope,
    )
)
