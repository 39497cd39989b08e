"""C10: "Akka significantly reduces communication latency in Scala (3 times)" (Sec. 4.1), one
of the three statements the first reproduction left without a verdict (issue 14)."""

from __future__ import annotations

from serverbench.analysis.claims.compare import (
    RatioWithin,
    by_round,
    judged,
    largest_common,
    order_above,
    rows_where,
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
    register,
)

AKKA_SPEEDUP = 3.0  # "3 times"
ABOUT_FACTOR = 1.5  # "about 3x": within [3/1.5, 3*1.5]
C10_BYTES = 5000  # Fig. 3(a) is 5 kB


def akka_speedup_over_scala_actors(data: Data) -> list[Comparison]:
    d = data.values[data.values["message_bytes"] == C10_BYTES]
    pts = largest_common(
        d, ("variant", "payload", "cores", "message_bytes"), "repetitions", ("scala_actors", "scala_akka")
    )
    if not pts:
        raise NotTestable(f"no {C10_BYTES / 1000:g} kB PingPing measured in both Scala actors and Scala/Akka")
    out = []
    for cfg in pts:
        ci, at_level, note = by_round(
            rows_where(d, language="scala_actors", **cfg), rows_where(d, language="scala_akka", **cfg)
        )
        where = f"{C10_BYTES / 1000:g} kB x {int(cfg['repetitions']):,}, {int(cfg['cores'])} core(s)"
        out.append(judged("direction: Scala actors/Akka time", where, ci, order_above(), at_level, **note))
        # the "3 times" is an estimate, not a test: a band as wide as [2, 4.5] is about as wide
        # as a 5-trial interval, so a verdict on it would be a coin toss (issue 25), and the
        # 3x is read off another paper's figure (3(a)). Reported beside the direction.
        band = RatioWithin(AKKA_SPEEDUP / ABOUT_FACTOR, AKKA_SPEEDUP * ABOUT_FACTOR)
        reading = band.resolved().judge(ci)[0]
        out.append(
            Comparison(
                "magnitude (reported, not tested): Scala actors/Akka time",
                where,
                f"about {AKKA_SPEEDUP:g}x ({band.text}: {reading})",
                EVIDENCE_ONLY,
                ci,
                "",
                dict(note),
            )
        )
    return out


def _c10_summary(comps: list[Comparison]) -> str:
    return "; ".join(
        f"{c.label.split(':')[0]} ({c.expected}): {fmt_ci(c.ci)} -> {c.result}"
        + (f" ({c.why})" if c.why else "")
        + f" at {c.config}"
        for c in comps
    )


register(
    Claim(
        id="C10",
        source="Sec. 4.1, Figs. 3(a) and 3(b)",
        sentence="Figures 3(a) and 3(b) show that Akka significantly reduces communication latency in Scala (3 times)",
        needs=Needs("pingping", "elapsed_s", languages=("scala_actors", "scala_akka")),
        compare=akka_speedup_over_scala_actors,
        definition=f"PingPing at {C10_BYTES / 1000:g} kB, at the largest repetition count measured in both: the ratio "
        f"Scala actors / Scala-Akka time (Hodges-Lehmann, exact interval). Direction: 'yes' if the interval "
        f"lies above 1 (Akka faster), 'no' if below (each by more than "
        f"{ZONE_TEXT}); it decides the verdict. Magnitude: reported as an estimate beside it, with "
        f"whether it lies in [{AKKA_SPEEDUP / ABOUT_FACTOR:g}, {AKKA_SPEEDUP * ABOUT_FACTOR:g}] (3x within a "
        f"factor {ABOUT_FACTOR}), not tested: that band is about as wide as a 5-trial interval, and the 3x is "
        "read off Fig. 3(a), copied from another paper.",
        summarize=_c10_summary,
    )
)
