"""The encoding of C10: "Akka significantly reduces communication latency in Scala (3
times)" (Sec. 4.1, Figs. 3(a) and 3(b)): the Scala actors / Akka PingPing time ratio about
3, inside the protocol's yes region (spec/protocol.json)."""

from __future__ import annotations

from serverbench import protocol
from serverbench.analysis.claims.compare import largest_common, ratio_between_languages
from serverbench.analysis.claims.engine import Claim, Comparison, Data, Needs, NotTestable
from serverbench.rawdata.columns import Col


def akka_speedup_over_scala_actors(data: Data) -> list[Comparison]:
    size = protocol.claim("C10")[Col.message_bytes]
    d = data.values[data.values[Col.message_bytes] == size]
    pts = largest_common(
        d, ("variant", "payload", "cores", "message_bytes"), "repetitions", ("scala_actors", "scala_akka")
    )
    if not pts:
        raise NotTestable(f"no {size / 1000:g} kB PingPing measured in both Scala actors and Scala/Akka")
    out = []
    for cfg in pts:
        where = f"{size / 1000:g} kB x {int(cfg[Col.repetitions]):,}, {int(cfg[Col.cores])} core(s)"
        c = ratio_between_languages(
            d, "scala_actors", "scala_akka", cfg, data.region("C10"), "Scala actors/Akka time", where
        )
        if c is not None:
            out.append(c)
    return out


C10 = Claim(
    id="C10",
    short="Akka 3 times faster than Scala actors",
    needs=Needs("pingping", "elapsed_s", languages=("scala_actors", "scala_akka")),
    compare=akka_speedup_over_scala_actors,
)
