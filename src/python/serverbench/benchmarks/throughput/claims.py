"""The encodings of C6-C12, the paper's throughput claims (Fig. 5; Valkov, Chechina &
Trinder, SAC 2018). Their words and regions are spec/protocol.json's; each comparison
function computes exactly what the protocol's "deciding" says. Every comparison is one
ratio paired by round: two languages at one configuration, or one language at two pair
(or core) counts of the same core count (both configurations' trial k ran in round k)."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims.compare import (
    config_text,
    present_keys,
    ratio_between_configs,
    ratio_between_languages,
)
from serverbench.analysis.claims.engine import Claim, Comparison, Data, Needs, NotTestable, label
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.benchmarks.throughput.columns import Col

# where the paper measured C6-C12 (claims.regime: the verdicts say at which scale they were tested)
REGIME_C6 = define(
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

METRIC = "paper_msgs_per_min"
# the run settings a configuration is made of besides cores and pairs (one grid each)
SETTINGS = ("variant", "payload", "message_bytes", "duration_s")


def _cores_scope(data: Data) -> str:
    d = data.values
    cs = sorted(int(c) for c in d[Col.cores].unique()) if not d.empty and Col.cores in d else []
    return f"cores measured: {', '.join(map(str, cs)) or 'none'} (paper: 1-32)"


def _grids(d: pd.DataFrame):
    """(settings, rows) per grid of run settings (one in a normal sweep)."""
    keys = present_keys(d, SETTINGS)
    if not keys:
        yield {}, d
        return
    for kv, g in d.groupby(keys):
        yield dict(zip(keys, kv if isinstance(kv, tuple) else (kv,))), g


def _has(g: pd.DataFrame, lang: str, cores, pairs) -> bool:
    return bool(((g[Col.language] == lang) & (g[Col.cores] == cores) & (g[Col.pairs] == pairs)).any())


def _between_languages(cid: str, num: str, den: str, where) -> Callable[[Data], list[Comparison]]:
    """num/den at every configuration (cores, pairs) that where(cores, pairs) selects."""

    def compare(data: Data) -> list[Comparison]:
        out = []
        for settings, g in _grids(data.values):
            for (c, p), _ in g.groupby(["cores", "pairs"]):
                if where(c, p):
                    cfg = {**settings, "cores": c, "pairs": p}
                    comp = ratio_between_languages(
                        g, num, den, cfg, data.region(cid), config=config_text({"cores": c, "pairs": p})
                    )
                    if comp is not None:
                        out.append(comp)
        return out

    return compare


def go_2_to_5x(data: Data) -> list[Comparison]:
    p, top = protocol.claim("C6")[Col.pairs], protocol.claim("C6")["max_cores"]
    out = []
    for other in ("erlang", "scala_akka"):
        out += _between_languages("C6", "go", other, lambda c, q: q == p and c <= top)(data)
    if not out:
        raise NotTestable(f"no throughput runs at {p} pairs in Go and Erlang or Scala/Akka")
    return out


def erlang_vs_akka(cid: str):
    c = protocol.claim(cid)
    small = "max_cores" in c

    def where(cores, pairs) -> bool:
        if small:
            return cores <= c["max_cores"] and pairs <= c["max_pairs"]
        return cores >= c["min_cores"] and pairs >= c["min_pairs"]

    def compare(data: Data) -> list[Comparison]:
        out = _between_languages(cid, "erlang", "scala_akka", where)(data)
        if not out:
            cpus = data.P.info.get(Col.logical_cpus)
            raise NotTestable(f"no configuration in the region measured in both languages (this machine: {cpus} CPUs)")
        return out

    return compare


def _within_language(data: Data, cid: str, lang: str, steps) -> list[Comparison]:
    """lang's T(num)/T(den) for each (settings, cores, num pairs, den pairs, what) of steps."""
    return [
        c
        for c in (
            ratio_between_configs(
                g,
                lang,
                {**s, "cores": cores, "pairs": a},
                {**s, "cores": cores, "pairs": b},
                data.region(cid),
                f"{label(lang)} {what}",
                f"cores={int(cores)}, {int(a)} vs {int(b)} pairs",
            )
            for s, g, cores, a, b, what in steps
        )
        if c is not None
    ]


def peak_at_pairs_equal_cores(data: Data) -> list[Comparison]:
    top = protocol.claim("C8")["max_cores"]
    out = []
    for lang in ("erlang", "go"):
        steps = []
        for s, g in _grids(data.values):
            for cores in sorted(g[Col.cores].unique()):
                if not 2 <= cores <= top or not _has(g, lang, cores, cores):
                    continue
                for p in (cores // 2, cores * 2):
                    if _has(g, lang, cores, p):
                        steps.append((s, g, cores, p, cores, "T(P)/T(pairs = cores)"))
        out += _within_language(data, "C8", lang, steps)
    if not out:
        raise NotTestable(f"needs a core count 2 <= C <= {top} measured at pairs C and C/2 or 2C")
    return out


def go_no_scaling_beyond_4(data: Data) -> list[Comparison]:
    p = protocol.claim("C9")[Col.pairs]
    d = data.values
    out = []
    for s, g in _grids(d):
        if not _has(g, "go", 4, p):
            continue
        for c in sorted(x for x in g[Col.cores].unique() if x > 4):
            comp = ratio_between_configs(
                g,
                "go",
                {**s, "cores": c, "pairs": p},
                {**s, "cores": 4, "pairs": p},
                data.region("C9"),
                "Go T(C)/T(4 cores)",
                config_text({"cores": c, "pairs": p}),
            )
            if comp is not None:
                out.append(comp)
    if not out:
        cpus = data.P.info.get(Col.logical_cpus)
        raise NotTestable(f"needs Go throughput at {p} pairs on 4 and on more than 4 cores (this machine: {cpus} CPUs)")
    return out


def akka_slow_start(data: Data) -> list[Comparison]:
    steps = [
        (s, g, c, 64, 2 * c, "T(64 pairs)/T(2 x cores pairs)")
        for s, g in _grids(data.values)
        for c in sorted(g[Col.cores].unique())
        if 2 * c < 64 and _has(g, "scala_akka", c, 64) and _has(g, "scala_akka", c, 2 * c)
    ]
    out = _within_language(data, "C11", "scala_akka", steps)
    if not out:
        raise NotTestable("needs Scala/Akka throughput at 64 pairs and at 2 x cores pairs")
    return out


def erlang_drop_after_peak(data: Data) -> list[Comparison]:
    top = protocol.claim("C12")["max_cores"]
    steps = [
        (s, g, c, 64, c, "T(64 pairs)/T(pairs = cores)")
        for s, g in _grids(data.values)
        for c in sorted(g[Col.cores].unique())
        if 2 <= c <= top and c < 64 and _has(g, "erlang", c, 64) and _has(g, "erlang", c, c)
    ]
    out = _within_language(data, "C12", "erlang", steps)
    if not out:
        raise NotTestable(f"needs Erlang throughput on 2 to {top} cores at pairs = cores and at 64 pairs")
    return out


SHORT = {  # the abstract names a claim by its id and these words
    "C6": "Go 2-5x the throughput",
    "C7a": "Erlang beats Akka at small scale",
    "C7b": "Akka beats Erlang at large scale",
    "C8": "peak at pairs = cores",
    "C9": "Go stops scaling at 4 cores",
    "C11": "Akka's slow start",
    "C12": "Erlang drops after its peak",
}
CLAIMS = tuple(
    Claim(
        id=cid,
        needs=needs,
        compare=compare,
        scope=_cores_scope,
        order={"C7a": 7.0, "C7b": 7.1}.get(cid),
        short=SHORT[cid],
    )
    for cid, needs, compare in (
        ("C6", Needs("throughput", METRIC, languages=("go",), any_of=("erlang", "scala_akka")), go_2_to_5x),
        ("C7a", Needs("throughput", METRIC, languages=("erlang", "scala_akka")), erlang_vs_akka("C7a")),
        ("C7b", Needs("throughput", METRIC, languages=("erlang", "scala_akka")), erlang_vs_akka("C7b")),
        ("C8", Needs("throughput", METRIC, languages=("erlang", "go")), peak_at_pairs_equal_cores),
        ("C9", Needs("throughput", METRIC, languages=("go",)), go_no_scaling_beyond_4),
        ("C11", Needs("throughput", METRIC, languages=("scala_akka",)), akka_slow_start),
        ("C12", Needs("throughput", METRIC, languages=("erlang",)), erlang_drop_after_peak),
    )
)
