"""The encodings of C1 and C2, the paper's PingPing latency claims (Fig. 3; Valkov,
Chechina & Trinder, SAC 2018). Their words and regions are spec/protocol.json's; each
comparison function computes exactly what the protocol's "deciding" says."""

from __future__ import annotations

from serverbench.analysis.claims.compare import largest_common, ratio_between_languages
from serverbench.analysis.claims.engine import Claim, Comparison, Data, Needs, label
from serverbench.analysis.claims.regime import Scale, SourceRegime, define
from serverbench.rawdata.columns import Col

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

PINGPING_GROUP = ("variant", "payload", "cores", "message_bytes")


# ---------------------------------------------------------------- PingPing (Fig. 3)


def pingping_ratios_at_largest_repetitions(nums, den, claim_id):
    """For each message size (and variant, payload, cores): num/den time ratio at the
    largest repetition count both languages measured."""

    def compare(data: Data) -> list[Comparison]:
        out = []
        for num in nums:
            pts = largest_common(data.values, PINGPING_GROUP, "repetitions", (num, den))
            several_cores = len({p.get(Col.cores) for p in pts}) > 1
            for cfg in pts:
                where = f"{cfg[Col.message_bytes] / 1000:g} kB x {int(cfg[Col.repetitions]):,}"
                where += f", {int(cfg[Col.cores])} core(s)" if several_cores else ""
                c = ratio_between_languages(
                    data.values, num, den, cfg, data.region(claim_id), f"{label(num)}/{label(den)} time", where
                )
                if c is not None:
                    out.append(c)
        return out

    return compare


def _sizes_scope(data: Data) -> str:
    sizes = sorted(int(s) for s in data.values[Col.message_bytes].unique())
    return f"message sizes measured: {', '.join(map(str, sizes))} bytes"


C1 = Claim(
    id="C1",
    short="Go and Erlang PingPing faster than Akka",
    needs=Needs("pingping", "elapsed_s", languages=("scala_akka",), any_of=("go", "erlang")),
    compare=pingping_ratios_at_largest_repetitions(("go", "erlang"), "scala_akka", "C1"),
    scope=_sizes_scope,
)

C2 = Claim(
    id="C2",
    short="Go and Erlang PingPing alike",
    needs=Needs("pingping", "elapsed_s", languages=("go", "erlang")),
    compare=pingping_ratios_at_largest_repetitions(("go",), "erlang", "C2"),
    scope=_sizes_scope,
)
