"""The encodings of IM1-IM5, the paper's recommendations asked of a whole server (the IM
case study, docs/im.md). (Kept whole past ~350 lines: the five encodings share their
comparison helpers and are checked against the protocol's words together.)
Their words, regions and constants are spec/protocol.json's (protocol
3); each comparison computes exactly what the protocol's "deciding" says, on this sweep's
records (benchmarks/im/tables.py). A run the generator limited is invalid and never a
server's result; the production servers (ngircd, InspIRCd) are shown beside, never decide.

* IM1  p99 delivery latency at the latency part's rate, Go/Akka and Erlang/Akka, paired by round.
* IM2  bytes per idle client, Akka/Go and Akka/Erlang, paired by round; where a side's
       largest N held was limited by the memory budget, C3's limit rule on the largest N.
* IM3  login-storm time, Erlang/Akka and Go/Akka, paired by round.
* IM4  the sustainable rate within the SLO from the one rate search per server: the limit
       rule (no interval within a sweep), a censored side deciding only where any higher
       value on it would give the same result; the sensitivity SLOs shown, not deciding.
* IM5  Erlang under chaos: (a) deliveries per second with chaos / without, paired by
       round; (b) no message lost with chaos in any round (a count, no test).
"""

from __future__ import annotations

import contextlib

import pandas as pd

from serverbench import protocol
from serverbench.analysis.claims.compare import judged
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
from serverbench.benchmarks.im import claims_v5
from serverbench.benchmarks.im import design as design5
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im.columns import Col

AKKA = "scala_akka"


LAST_VERSION = 4  # the newest version whose IM design (and IM2, IM4, IM5) these rules read


def _in_force() -> contextlib.AbstractContextManager:
    """The version in force, or protocol 4 once a later one is: a sweep of protocol 3's
    design keeps protocol 3/4's IM rules whatever version is newest (design.py)."""
    return protocol.in_force(LAST_VERSION) if protocol.version() > LAST_VERSION else contextlib.nullcontext()


def rule(cid: str, key: str):
    """A constant of claim cid in the protocol in force (at most protocol 4)."""
    with _in_force():
        c = protocol.claim(cid)
        if key not in c:
            raise KeyError(f"protocol {protocol.version()} claim {cid} has no '{key}'")
        return c[key]


def design() -> dict:
    """The protocol's IM design (its `im` section: SLOs, rate grid, rounds), at most protocol 4's."""
    with _in_force():
        return protocol.section("im")


def slos() -> tuple[float, tuple[float, ...]]:
    """(the SLO on p99, the sensitivity SLOs)."""
    s = design()["slo"]
    return float(s["p99_s"]), tuple(float(x) for x in s["sensitivity_p99_s"])


def grid() -> tuple[float, ...]:
    """The rate search's grid: start x factor^k, k = 0 .. steps - 1."""
    g = design()["rate_grid"]
    return tuple(float(g["start_per_s"]) * float(g[Col.factor]) ** k for k in range(int(g[Col.steps])))


def _side(d: pd.DataFrame, server: str, metric: str) -> pd.DataFrame:
    return T.per_round(d[d[Col.server_language] == server], metric)


def _require(d: pd.DataFrame, servers, what: str) -> pd.DataFrame:
    """d's valid runs, after checking that every server in `servers` has some at a deciding
    configuration: more rounds than a figure-only one gets (the protocol's IM design; counted
    over every run of it, valid or not), as the engine judges no claim on a figure's points."""
    rounds = d.groupby("server_language")[Col.trial].nunique() if not d.empty else pd.Series(dtype=int)
    few = [label(s) for s in servers if 0 < rounds.get(s, 0) <= int(design()["rounds_figure_only"])]
    if few:
        raise NotTestable(f"{what}: only figure-only rounds for {', '.join(few)}")
    d = T.valid(d)
    have = set(d[Col.server_language]) if not d.empty else set()
    miss = [label(s) for s in servers if s not in have]
    if miss:
        raise NotTestable(f"no valid {what} runs for {', '.join(miss)}")
    return d


# ---------------------------------------------------------------- IM1: p99 at moderate load


def latency(data: Data) -> list[Comparison]:
    rate, n = rule("IM1", "rate_per_s"), rule("IM1", "clients")
    d = T.latency_part(data.P)
    if not d.empty:
        d = d[(d[Col.rate_per_s] == rate) & (d[Col.clients] == n) & (d["chaos_ms"] == 0)]
    d = _require(d, ("go", "erlang", AKKA), f"latency-part ({rate:,}/s, N = {n:,})")
    return _over_akka(data, "IM1", d, ("go", "erlang"), "latency_p99_s", f"rate={rate:,}/s, N={n:,}")


def _over_akka(data: Data, cid: str, d: pd.DataFrame, servers, metric: str, where: str) -> list[Comparison]:
    """Each server's metric over Scala/Akka's at one configuration, paired by round."""
    return [
        judged(f"{label(s)}/Scala/Akka {metric}", where, data.region(cid), _side(d, s, metric), _side(d, AKKA, metric))
        for s in servers
    ]


# ---------------------------------------------------------------- IM2: idle clients


def _held_text(row) -> str:
    n = "none" if row is None or pd.isna(row["largest_n"]) else f"{int(row['largest_n']):,}"
    if row is None or pd.isna(row["failed_n"]):
        return f"{n} held, no failure (limit not established)"
    est = "" if row["memory_limited"] else ": limit not established"
    return f"{n} held, fails at {int(row['failed_n']):,} ({row[Col.failure_status]}{est})"


def _limit_rule(
    what: str, config: str, a: float | None, o: float | None, a_est: bool, o_est: bool, extra
) -> Comparison:
    """C3's rule with '>=' (IM2): Akka's largest N against another's. yes when Akka's is at
    least the other's and the other's limit is established (else it might be higher);
    no when Akka's is lower and Akka's limit is established."""
    a0, o0 = a or 0, o or 0
    if a0 >= o0:
        r, why = (YES, "") if o_est else (UNCLEAR, "the other's limit is not established")
    else:
        r, why = (NO, "") if a_est else (UNCLEAR, "Scala/Akka's limit is not established")
    return Comparison(what, config, "Akka's largest N >= the other's", r, None, why, extra)


def idle(data: Data) -> list[Comparison]:
    if design5.is_v5(data.P):  # a sweep of protocol 5's design: its rules (benchmarks/im/claims_v5.py)
        return claims_v5.idle(data)
    low, high = rule("IM2", "clients")
    held = T.largest_held(data.P).set_index("server_language")
    idle_n = T.runs(data.P, "idle")
    largest = int(idle_n[Col.clients].max()) if not idle_n.empty else high  # the idle part's largest N
    bpc = T.idle_bytes_per_client(data.P, low, high)
    out = []
    for other in ("go", "erlang"):
        limited = [s for s in (AKKA, other) if s in held.index and held.loc[s, "memory_limited"]]
        limited = [s for s in limited if held.loc[s, "failed_n"] <= largest]
        if limited:
            a = held.loc[AKKA] if AKKA in held.index else None
            o = held.loc[other] if other in held.index else None
            if a is None or o is None:
                raise NotTestable(f"no idle runs for {label(AKKA if a is None else other)}")
            out.append(
                _limit_rule(
                    f"Akka vs {label(other)} largest N held",
                    f"the memory budget limited N below {largest:,}",
                    a["largest_n"],
                    o["largest_n"],
                    bool(a["memory_limited"]),
                    bool(o["memory_limited"]),
                    {"akka": _held_text(a), "other": _held_text(o), "memory_limited": ", ".join(map(label, limited))},
                )
            )
            continue
        if bpc.empty:  # a side without a round is 'cannot pair' (unclear), not the whole claim
            raise NotTestable(f"no round of idle runs at N = {low:,} and {high:,} with every client registered")
        out.append(
            judged(
                f"Scala/Akka/{label(other)} bytes per idle client",
                f"(RSS at N={high:,} - at N={low:,}) / {high - low:,}",
                data.region("IM2"),
                _side(bpc, AKKA, "value"),
                _side(bpc, other, "value"),
            )
        )
    return out


# ---------------------------------------------------------------- IM3: login storm


def login(data: Data) -> list[Comparison]:
    n = rule("IM3", "clients")
    d = T.runs(data.P, "login")
    if not d.empty:
        d = d[d[Col.clients] == n]
    d = _require(d, ("go", "erlang", AKKA), f"login (N = {n:,})")
    return _over_akka(data, "IM3", d, ("erlang", "go"), "login_s", f"N={n:,}")


# ---------------------------------------------------------------- IM4: sustainable rate


def rates(P, slo_s: float, steps: pd.DataFrame | None = None) -> dict[str, dict]:
    """{server: tables.sustainable(...)} at SLO slo_s, from this sweep's rate search (its
    steps, tables.search_steps, when the caller has them)."""
    steps = T.search_steps(P) if steps is None else steps
    if steps.empty:
        return {}
    search_slo, top = max(slos()[1]), grid()[-1]
    return {s: T.sustainable(g, slo_s, search_slo, top) for s, g in steps.groupby("server_language")}


def rate_text(r: dict, why: bool = True) -> str:
    """'at least 8,000/s (why)', '11,314/s (fails at ...)', 'none passed (...)' (why=False: without the why)."""
    if r[Col.rate_per_s] is None:
        text = "none passed" if r["established"] else "unknown (censored)"
    else:
        text = ("" if r["established"] else "at least ") + f"{r[Col.rate_per_s]:,.0f}/s"
    return f"{text} ({r[Col.why]})" if why else text


def rate_decision(g: dict, o: dict, step: float) -> tuple[str, str]:
    """Go's sustainable rate g against another's o (tables.sustainable dicts): yes when
    g >= o, no when o is at least one grid step above g; a censored side (only 'at least')
    keeps a yes or no only if any higher value on that side gives the same result."""
    gr, orate = g[Col.rate_per_s], o[Col.rate_per_s]
    if gr is None and orate is None:
        return UNCLEAR, "neither passed the grid's first step"
    gv = 0.0 if gr is None else gr
    ov = 0.0 if orate is None else orate
    if gv >= ov:
        return (YES, "") if o["established"] else (UNCLEAR, "the other's rate is only a lower bound (censored)")
    if ov >= gv * step * (1 - 1e-9):
        return (NO, "") if g["established"] else (UNCLEAR, "Go's rate is only a lower bound (censored)")
    return UNCLEAR, "less than one grid step apart"


def throughput(data: Data) -> list[Comparison]:
    if design5.is_v5(data.P):
        return claims_v5.throughput(data)
    slo, sensitivity = slos()
    step = float(design()["rate_grid"][Col.factor])
    out = []
    steps = T.search_steps(data.P)
    for s_slo, deciding in [(slo, True)] + [(x, False) for x in sensitivity]:
        r = rates(data.P, s_slo, steps)
        if deciding:
            miss = [label(s) for s in ("go", "erlang", AKKA) if s not in r]
            if miss:
                raise NotTestable(f"no rate search steps for {', '.join(miss)}")
        for other in ("erlang", AKKA):
            if "go" not in r or other not in r:
                continue
            res, why = rate_decision(r["go"], r[other], step)
            c = Comparison(
                f"Go vs {label(other)} sustainable rate",
                f"SLO p99 <= {s_slo * 1e3:g} ms",
                "Go's >= the other's",
                res if deciding else EVIDENCE_ONLY,
                None,
                why if deciding else f"sensitivity SLO, shown: {res}" + (f" ({why})" if why else ""),
                {"go": rate_text(r["go"]), "other": rate_text(r[other])},
            )
            out.append(c)
    return out


def _pair_summary(comps: list[Comparison]) -> str:
    if any(claims_v5.RULES in c.extra for c in comps):
        return claims_v5.summary(comps)
    parts = []
    for c in comps:
        if "go" in c.extra or Col.akka in c.extra:
            first = "Go" if "go" in c.extra else "Scala/Akka"
            mine = c.extra.get("go", c.extra.get(Col.akka))
            parts.append(f"{c.label} at {c.config}: {first} {mine}; other {c.extra['other']} -> {c.result}")
        else:
            from serverbench.analysis.claims.summaries import fmt_ci

            parts.append(f"{c.label} at {c.config}: {fmt_ci(c.ci)} -> {c.result}")
    return "; ".join(parts)


# ---------------------------------------------------------------- IM5: chaos (ref. [4])


def chaos(data: Data) -> list[Comparison]:
    if design5.is_v5(data.P):
        return claims_v5.chaos(data)
    (server,) = rule("IM5", "population")
    d = T.valid(T.chaos_stage(data.P))
    d = d[d[Col.server_language] == server] if not d.empty else d
    on, off = (d[d["chaos_ms"] > 0], d[d["chaos_ms"] == 0]) if not d.empty else (d, d)
    if on.empty or off.empty:
        raise NotTestable(f"no chaos-stage runs (chaos on and off) for {label(server)}")
    # the rate is this sweep's (resolved from its search): in the evidence, not in the configuration,
    # so that the sweeps of a scale compare the same comparison
    rate = ", ".join(f"{r:,.0f}/s" for r in sorted(set(on[Col.rate_per_s])))
    where = f"the chaos part's rate, a session killed every {int(on['chaos_ms'].iloc[0]):,} ms"
    kept = judged(
        f"{label(server)} deliveries_per_s with chaos / without",
        where,
        data.region("IM5"),
        T.per_round(on, "deliveries_per_s"),
        T.per_round(off, "deliveries_per_s"),
        rate_per_s=rate,
    )
    lost = T.num(on, "messages_lost")
    rounds = int(lost.notna().sum())
    need = int(design()["rounds_deciding"])
    total, bad = int(lost.fillna(0).sum()), int((lost > 0).sum())
    if bad:
        r, why = NO, ""
    elif rounds < need:
        r, why = UNCLEAR, f"only {rounds} valid chaos rounds of the {need} the protocol asks"
    else:
        r, why = YES, ""
    count = Comparison(
        f"{label(server)} messages lost with chaos",
        where,
        "0 in every round",
        r,
        None,
        why,
        {"messages_lost": total, "rounds_with_loss": bad, "rounds": rounds, "rate_per_s": rate},
    )
    return [kept, count]


def _chaos_summary(comps: list[Comparison]) -> str:
    from serverbench.analysis.claims.summaries import fmt_ci

    if any(claims_v5.RULES in c.extra for c in comps):
        return claims_v5.summary(comps)
    kept, count = comps
    e = count.extra
    return (
        f"at {e[Col.rate_per_s]}: {kept.label}: {fmt_ci(kept.ci)} -> {kept.result}; "
        f"{e[Col.messages_lost]:,} messages lost over {e[Col.rounds]} rounds ({e[Col.rounds_with_loss]} with a loss) "
        f"-> {count.result}"
    )


# Needs: the engine's gate passes (no language listed: the generator is every run's language);
# each comparison function says what a sweep lacks (NotTestable).
CLAIMS = tuple(
    Claim(id=cid, needs=Needs(T.TABLE, metric), compare=compare, summarize=summary)
    for cid, metric, compare, summary in (
        ("IM1", "latency_p99_s", latency, None),
        ("IM2", "clients_registered", idle, _pair_summary),
        ("IM3", "login_s", login, None),
        ("IM4", "latency_p99_s", throughput, _pair_summary),
        ("IM5", "deliveries_per_s", chaos, _chaos_summary),
    )
)
