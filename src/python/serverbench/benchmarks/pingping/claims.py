"""The paper's conclusions about PingPing latency (Fig. 3): C1, C2 as claim entries (Valkov, Chechina & Trinder,
SAC 2018). Each entry names the data it needs, its thresholds and a definition; the
comparison functions compute exactly what the definition says. docs/statistics.md
section 4 has the same table."""

from __future__ import annotations

from serverbench.analysis.claims.compare import (
    RatioWithin,
    largest_common,
    order_below,
    ratio_between_languages,
)
from serverbench.analysis.claims.decision import ZONE_TEXT
from serverbench.analysis.claims.engine import (
    Claim,
    Comparison,
    Data,
    Needs,
    label,
    register,
)
from serverbench.analysis.claims.regime import Scale, SourceRegime, define

# where the paper measured C1, C2 and C10 (claims.regime: the verdicts say at which scale they were tested)
REGIME = define(
    SourceRegime(
        "the paper (Fig. 3): 5, 10 and 50 kB, R = 10^3 to 10^6 repetitions",
        ("pingping",),
        (Scale("repetitions", 1_000_000, "repetitions"),),
    ),
    "C1",
    "C2",
    "C10",
)

SIMILAR_FACTOR = 1.5  # "very similar": ratio within [1/1.5, 1.5]
PINGPING_GROUP = ("variant", "payload", "cores", "message_bytes")


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
                c = ratio_between_languages(
                    data.values, num, den, cfg, expect, f"{label(num)}/{label(den)} time", where
                )
                if c is not None:
                    out.append(c)
        return out

    return compare


def _sizes_scope(data: Data) -> str:
    sizes = sorted(int(s) for s in data.values["message_bytes"].unique())
    return f"message sizes measured: {', '.join(map(str, sizes))} bytes"


register(
    Claim(
        id="C1",
        source="Sec. 4.1, Fig. 3",
        sentence="Go and Erlang have lower PingPing latency than Scala/Akka at every message size",
        needs=Needs("pingping", "elapsed_s", languages=("scala_akka",), any_of=("go", "erlang")),
        compare=pingping_ratios_at_largest_repetitions(("go", "erlang"), "scala_akka", order_below()),
        definition="For each message size, at the largest repetition count measured in both languages: Go/Akka and "
        "Erlang/Akka time ratios (Hodges-Lehmann, exact interval). 'yes' if the interval lies below 1 by more than "
        f"{ZONE_TEXT}, 'no' if above 1 by more than it. Supported if every "
        "comparison is yes; contradicted if any is no.",
        scope=_sizes_scope,
    )
)

register(
    Claim(
        id="C2",
        source="Sec. 4.1, Fig. 3",
        sentence="Go and Erlang PingPing latencies are very similar",
        needs=Needs("pingping", "elapsed_s", languages=("go", "erlang")),
        compare=pingping_ratios_at_largest_repetitions(
            ("go",), "erlang", RatioWithin(1 / SIMILAR_FACTOR, SIMILAR_FACTOR)
        ),
        definition=f"For each message size, at the largest repetition count measured in both: the Go/Erlang time "
        f"ratio. "
        f"'yes' if its interval lies inside [1/{SIMILAR_FACTOR}, {SIMILAR_FACTOR}], 'no' if entirely outside. "
        f"Supported if all yes; contradicted if any no.",
        scope=_sizes_scope,
    )
)
