"""IM2, IM4 and IM5 by protocol 5's rules (benchmarks/im/design.py: a sweep that ran its
design), on the searches' results (benchmarks/im/tables_v5.py); IM1 and IM3 are unchanged
(benchmarks/im/claims.py). None has an interval within a sweep.

* IM2  Akka's count of idle clients within the 128 MiB cap against Go's and Erlang's, C3's
       limit rule: yes when Akka's >= the other's, no when the other's established count is
       more than bisect_ratio (1.1) x Akka's; a censored side decides only where any higher
       value on it gives the same result.
* IM4  the sustainable rate at 10 ms from the replicated search, Go against Erlang and Akka:
       yes when Go's >= the other's, no when the other's established rate is above Go's by
       more than bisect_ratio; censored ('at least': the generator's headroom, the grid's top).
* IM5  Erlang: (a) kept = chaos-sustainable / sustainable, yes >= 0.8, no <= 0.64; (b) no
       message lost in any random-pick run at 10 kills/s, judged only when the queued-kill
       control lost messages (else unclear)."""

from __future__ import annotations

from serverbench.analysis.claims.engine import EVIDENCE_ONLY, NO, UNCLEAR, YES, Comparison, Data, NotTestable, label
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import parts_v5 as PV
from serverbench.benchmarks.im import tables_v5 as V
from serverbench.benchmarks.im.columns import Col

AKKA = "scala_akka"
EPS = 1e-9
RULES = "rules"  # every comparison's extra names the rules that judged it (protocol 5, draft or frozen)


def limit_rule(
    mine: V.Result | None, other: V.Result | None, ratio: float, start: float, at_least: bool
) -> tuple[str, str]:
    """C3's rule with censored sides: yes when mine >= other for every value either side can
    have; no when other exceeds mine by the ratio (at_least: other >= ratio x mine; else
    other > ratio x mine) for every value; otherwise unclear, saying why."""
    m_lo, m_hi = V.bounds(mine, start)
    o_lo, o_hi = V.bounds(other, start)
    if m_lo >= o_hi * (1 - EPS):
        return YES, ""
    above = o_lo >= m_hi * ratio * (1 - EPS) if at_least else o_lo > m_hi * ratio * (1 + EPS)
    if above:
        return NO, ""
    inf = float("inf")
    if o_hi == inf and (mine is None or other is None or other.bound == "none"):
        return UNCLEAR, "a side has no result"
    if o_hi == inf:
        return UNCLEAR, "the other's value is only a lower bound (censored)"
    if m_hi == inf:
        return UNCLEAR, "its own value is only a lower bound (censored), below the other's"
    if m_lo != m_hi or o_lo != o_hi:
        return UNCLEAR, f"below the start ({start:,.0f}) on a side, within a factor of {ratio:g}"
    return UNCLEAR, f"within the search's resolution (a factor of {ratio:g})"


# ---------------------------------------------------------------- IM4


def throughput(data: Data) -> list[Comparison]:
    slo, sensitivity = D.slos()
    ratio, start = float(D.search()[Col.bisect_ratio]), D.grid()[0]
    r = V.rates(data.P)
    miss = [label(s) for s in ("go", "erlang", AKKA) if s not in r]
    if miss:
        raise NotTestable(f"no replicated rate search for {', '.join(miss)}")
    cap = V.capacity(data.P)
    cap_text = V.rate_text(cap) + "/s" if cap else "not certified in this sweep"
    out = []
    for other in ("erlang", AKKA):
        res, why = limit_rule(r["go"], r[other], ratio, start, at_least=False)
        if cap is None:  # the headroom rule cannot be applied: a rate may be the generator's
            res, why = UNCLEAR, "the generator's capacity was not certified in this sweep"
        out.append(
            Comparison(
                f"Go vs {label(other)} sustainable rate",
                f"SLO p99 <= {slo * 1e3:g} ms, replicated search",
                "Go's >= the other's",
                res,
                None,
                why,
                {"go": V.rate_text(r["go"]) + "/s", "other": V.rate_text(r[other]) + "/s", "capacity": cap_text}
                | {RULES: D.label()},
            )
        )
    for x in sensitivity:  # shown, never deciding: from the same search
        s = V.sensitivity(data.P, x)
        for other in ("erlang", AKKA):
            g, o = s.get("go"), s.get(other)
            none = f"no replicated step met {x * 1e3:g} ms"  # not 0/s: no rate was measured there
            go, them = (none if v is None else V.sensitivity_text(v, cap) + "/s" for v in (g, o))
            shown = "neither met it" if g is None and o is None else f"Go {go}, other {them}"
            out.append(
                Comparison(
                    f"Go vs {label(other)} sustainable rate",
                    f"SLO p99 <= {x * 1e3:g} ms",
                    "Go's >= the other's",
                    EVIDENCE_ONLY,
                    None,
                    f"sensitivity SLO, shown: {shown}",
                    {RULES: D.label()},
                )
            )
    return out


# ---------------------------------------------------------------- IM2


def idle(data: Data) -> list[Comparison]:
    c, mem = D.claim("IM2"), D.im()["memory"]
    cap, ratio, start = int(c["cap_bytes"]), float(mem[Col.bisect_ratio]), float(mem["start_clients"])
    counts = PV.memory_counts(data.P)
    at = {s: r for (s, b), r in counts.items() if int(b) == cap}
    miss = [label(s) for s in (AKKA, "go", "erlang") if s not in at]
    if miss:
        raise NotTestable(f"no memory-cap search at {cap // 2**20} MiB for {', '.join(miss)}")
    live = PV.live_bytes_per_client(data.P)
    out = []
    for other in ("go", "erlang"):
        res, why = limit_rule(at[AKKA], at[other], ratio, start, at_least=False)
        extra: dict[str, object] = {
            "akka": V.rate_text(at[AKKA]) + " clients",
            "other": V.rate_text(at[other]) + " clients",
        }
        extra |= {f"live_bytes_per_client_{k}": live.get(s) for k, s in (("akka", AKKA), ("other", other))}
        extra[RULES] = D.label()
        out.append(
            Comparison(
                f"Akka vs {label(other)} idle clients held",
                f"within a {cap // 2**20} MiB cap",
                "Akka's count >= the other's",
                res,
                None,
                why,
                extra,
            )
        )
    return out


# ---------------------------------------------------------------- IM5


def chaos(data: Data) -> list[Comparison]:
    (server,) = D.claim("IM5")["population"]
    kills = float(D.claim("IM5")["kills_per_s"])
    plain, shaken = V.rates(data.P).get(server), V.rates(data.P, V.CHAOS_RATE).get(server)
    if plain is None or shaken is None:
        raise NotTestable(f"no rate search with and without chaos for {label(server)}")
    yes, no = D.kept_region(data.options.margin_exponent)
    where = f"{kills:g} kills per second, any IM process, random pick"
    (k_lo, k_hi), why = PV.kept_bounds(plain, shaken), ""
    if k_lo >= yes * (1 - EPS):
        res = YES
    elif k_hi <= no * (1 + EPS):
        res = NO
    else:
        res = UNCLEAR
        why = "a censored search leaves the ratio open" if k_hi != k_lo else f"between {no:.3g} and {yes:.3g}"
    kept_text = "unknown" if k_lo != k_hi else f"{k_lo:.4g}"
    kept = Comparison(
        f"{label(server)} sustainable rate with chaos / without",
        where,
        f">= {yes:.3g} (no <= {no:.3g})",
        res,
        None,
        why,
        {"kept": kept_text, "with": V.rate_text(shaken) + "/s", "without": V.rate_text(plain) + "/s", RULES: D.label()},
    )
    loss = PV.loss_runs(data.P)
    mine = loss[loss[Col.server_language] == server] if not loss.empty else loss
    target = D.im()["chaos"].get("loss_target", D.im()["chaos"]["target"])
    judged = mine[(mine["pick"] == "random") & (mine["kills_per_s"] == kills)] if not mine.empty else mine
    judged = judged[judged["target"] == target] if not judged.empty else judged
    control = mine[mine["pick"] == "queued"] if not mine.empty else mine
    if judged.empty or control.empty:
        gone = [f"no valid loss run at {kills:g} kills/s, random pick"] if judged.empty else []
        gone += ["no valid queued-kill control run"] if control.empty else []
        raise NotTestable(
            f"{' and '.join(gone)} for {label(server)} (a run still generator-limited or interfered after its "
            "re-runs is no server's result)"
        )
    lost, c_lost = int(judged["lost"].sum()), int(control["lost"].sum())
    c_dropped = int(control["dropped"].fillna(0).sum())
    if c_lost == 0:
        r, why = (
            UNCLEAR,
            (
                f"the queued-kill control lost no message ({c_dropped:,} dropped by the server): "
                "the instrument did not show it can see a loss"
            ),
        )
    else:
        r, why = (NO, "") if (judged["lost"] > 0).any() else (YES, "")
    count = Comparison(
        f"{label(server)} messages lost with chaos",
        f"{kills:g} kills per second, {target} processes, random pick",
        "0 in every run",
        r,
        None,
        why,
        {
            "messages_lost": lost,
            "runs_with_loss": int((judged["lost"] > 0).sum()),
            "runs": int(len(judged)),
            "control_lost": c_lost,
            "control_dropped": c_dropped,
            RULES: D.label(),
        },
    )
    return [kept, count]


def summary(comps: list[Comparison]) -> str:
    parts = []
    for c in comps:
        if c.result == EVIDENCE_ONLY:
            continue
        e = c.extra
        if Col.kept in e:
            parts.append(f"kept {e[Col.kept]} ({e['with']} / {e['without']}) -> {c.result}")
        elif Col.control_lost in e:
            parts.append(
                f"{e[Col.messages_lost]:,} lost in {e[Col.runs]} runs "
                f"(control lost {e[Col.control_lost]:,}) -> {c.result}"
            )
        else:
            first = e.get("go", e.get(Col.akka))
            parts.append(f"{c.label} {c.config}: {first} vs {e.get('other')} -> {c.result}")
    return "; ".join(parts)
