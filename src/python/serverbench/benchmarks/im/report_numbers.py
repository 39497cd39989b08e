"""The numbers per server of the IM report's section (benchmarks/im/report.py): one row per
server with each part's number, and the cell of the advice table each claim shows. A sweep of
protocol 5's design (benchmarks/im/design.py) takes its rates and chaos from its searches
(benchmarks/im/tables_v5.py, parts_v5.py); every other column is read as before."""

from __future__ import annotations

import numpy as np
import pandas as pd

from serverbench import protocol
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.benchmarks.im import claims as C
from serverbench.benchmarks.im import design as D
from serverbench.benchmarks.im import figures as F
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im import tables_v5 as V
from serverbench.benchmarks.im.columns import Col


def _label(s: str) -> str:
    return LANGUAGE_LABELS.get(s, s)


def _median(d: pd.DataFrame, s: str, col: str = "value") -> float:
    v = pd.to_numeric(d.loc[d[Col.server_language] == s, col], errors="coerce").dropna()
    return float(np.median(v)) if len(v) else np.nan


def per_server(P) -> pd.DataFrame:
    """One row per server (ours, then the production anchors): p99 at the latency part's
    rate, bytes per idle client (protocol 5: live bytes), the largest N held, login time, the sustainable rate at
    each SLO (at least: censored), and under chaos the throughput kept and messages lost.
    Where the sweep lacks the protocol's configuration (quick's IM slice) its own largest
    is shown; `attrs["where"]` says which configurations the columns are."""
    part = T.latency_part(P)  # its sizes from every run, its numbers from the valid ones
    rate = T.pick(part[Col.rate_per_s] if not part.empty else [], protocol.claim("IM1")[Col.rate_per_s])
    n1 = T.pick(part[Col.clients] if not part.empty else [], protocol.claim("IM1")[Col.clients])
    lat = T.valid(part)
    lat = (
        lat[(lat[Col.rate_per_s] == rate) & (lat[Col.clients] == n1) & (lat["chaos_ms"] == 0)] if not lat.empty else lat
    )
    lat = lat.assign(value=T.num(lat, "latency_p99_s") * 1e3) if not lat.empty else lat
    # a production server run a second time with TCP_NODELAY (protocol 5) is a row of its own,
    # never pooled with its as-shipped runs (their median was a p99 no configuration had)
    lat_nd = pd.DataFrame()
    if D.is_v5(P) and not lat.empty:
        on = V.nodelay(lat)
        lat, lat_nd = lat[~on], lat[on]
    m = F.memory_login(P)
    every_login = T.runs(P, "login")
    n3 = T.pick(every_login[Col.clients] if not every_login.empty else [], protocol.claim("IM3")[Col.clients])
    login = m["login"][m["login"][Col.clients] == n3]
    held = m["held"].set_index("server_language")
    rates = _rate_texts(P)
    live = None  # protocol 5 measures idle memory as live bytes after a forced collection, not RSS
    if D.is_v5(P):
        from serverbench.benchmarks.im import parts_v5 as PV

        live = PV.live_bytes_per_client(P)
    bytes_col = "bytes_per_idle_client" if live is None else "live_bytes_per_client"
    ch = _chaos(P)
    every = pd.concat(  # the empty frame first: a fan-out-only sweep has none of these parts
        [pd.DataFrame({"server_language": pd.Series(dtype=str)})]
        + [x[["server_language"]] for x in (lat, m["bytes"], m["held"], login, every_login) if not x.empty]
        + [
            pd.DataFrame({"server_language": [s for s in r if not s.endswith(V.NODELAY_ROW)]})
            for r in rates.values()
            if r
        ],
        ignore_index=True,
    )
    cap_col, held_within = None, {}
    cap, within = F.cap_held(P) if D.is_v5(P) else (0, pd.DataFrame())
    if not within.empty:  # protocol 5's IM2 measure, where the sweep ran it: the clients held within the cap
        cap_col = f"held_within_{cap // 2**20}MiB"
        held_within = {
            r.server_language: ("at least " if r.at_least else "") + f"{r.largest_n:,.0f} clients"
            for r in within.itertuples()
        }
    rows = []
    for s in T.servers(every):
        nd_p99 = _median(lat_nd, s) if not lat_nd.empty else np.nan
        twin = s in T.production() and (not np.isnan(nd_p99) or any(s + V.NODELAY_ROW in r for r in rates.values()))
        row = {
            "server": V.row_label(s, False) if twin else _label(s),
            "p99_ms": _median(lat, s) if not lat.empty else np.nan,
            bytes_col: _median(m["bytes"], s) if live is None else live.get(s, np.nan),
            "largest_idle_n": held.loc[s, "largest_n"] if s in held.index else np.nan,
            "login_s": _login(every_login, login, s, n3),
        }
        if cap_col:
            row[cap_col] = held_within.get(s, "not run")
        for x, r in rates.items():
            row[f"rate_at_{x * 1e3:g}ms"] = r.get(s, "not run")
        if s in ch.index and ch.loc[s, "session_processes"] == "yes":
            row["chaos_kept"], row["chaos_lost"] = ch.loc[s, "throughput_kept"], ch.loc[s, "messages_lost"]
        else:
            row["chaos_kept"] = row["chaos_lost"] = "no session processes" if s in T.production() else "not run"
        rows.append(row)
        if twin:  # its TCP_NODELAY row: only the parts run that way (latency, the rate search)
            rates_nd = {f"rate_at_{x * 1e3:g}ms": r.get(s + V.NODELAY_ROW, "not run") for x, r in rates.items()}
            none = "no session processes"  # a production server has none, with TCP_NODELAY or without
            rows.append(
                {c: "not run" for c in row}
                | {"server": V.row_label(s, True), "p99_ms": nd_p99, **rates_nd, "chaos_kept": none, "chaos_lost": none}
            )
    t = pd.DataFrame(rows)
    low, high = m["pair"]
    measure = "RSS" if live is None else "live bytes after a forced collection (RSS for a daemon)"
    t.attrs["where"] = (
        f"p99_ms: p99 delivery latency at {rate:,.0f} messages/s with {n1:,} clients; {bytes_col}: "
        f"({measure} at {high:,} idle clients - at {low:,}) / {high - low:,}; login_s: {n3:,} clients"
    )
    return t


def _login(every: pd.DataFrame, login: pd.DataFrame, s: str, n: int):
    """The server's median login-storm time; where its storms ran but never registered all n
    clients (login_s is null then: the storm did not finish), how many did, instead of
    "not run"."""
    t = _median(login, s)
    if not np.isnan(t) or every.empty:
        return round(t, 4)  # the column may hold text, which the table's round(4) skips
    mine = T.valid(every[(every[Col.server_language] == s) & (every[Col.clients] == n)])
    got = T.num(mine, "clients_registered").dropna()
    if got.empty:
        return t
    return f"unfinished: {np.median(got):,.0f} of {n:,} registered"


def _cell(t: pd.DataFrame, server: str, col: str, fmt: str) -> str:
    base = server.removesuffix(V.NODELAY_ROW)  # "<server> nodelay": a production server's TCP_NODELAY row
    r = t[
        t[Col.server].isin(
            [V.row_label(base, True)] if base != server else [_label(server), V.row_label(server, False)]
        )
    ]
    if r.empty or col not in r:
        return "not run"
    v = r[col].iloc[0]
    if isinstance(v, str):
        return v
    return "not run" if pd.isna(v) else fmt.format(v)


def _numbers(t: pd.DataFrame, case: str, servers) -> list[str]:
    """Each server's number for a row of the advice table."""
    slo = C.slos()[0]
    col, fmt, unit = {
        "IM1": ("p99_ms", "{:.3g}", " ms"),
        "IM2": ("bytes_per_idle_client", "{:,.0f}", " B"),
        "IM3": ("login_s", "{:.3g}", " s"),
        "IM4": (f"rate_at_{slo * 1e3:g}ms", "{}", ""),
        "IM5": ("chaos_lost", "{:,.0f}", " lost"),
    }[case]
    held = [c for c in t.columns if str(c).startswith("held_within_")]
    if case == "IM2" and held:  # protocol 5 judges IM2 by the clients held within the cap
        col, fmt, unit = held[0], "{}", ""
    out = []
    for s in servers:
        c = _cell(t, s, col, fmt)
        c += unit if c[:1].isdigit() else ""
        if case == "IM5" and c.endswith(unit):  # chaos: the throughput kept beside the messages lost
            c = f"kept {_cell(t, s, 'chaos_kept', '{:.2f}')}, {c}"
        nd = _cell(t, s + V.NODELAY_ROW, col, fmt) if s in T.production() else "not run"  # its TCP_NODELAY row's
        if nd not in ("not run", c):
            c += f"; TCP_NODELAY: {nd}{unit if nd[:1].isdigit() else ''}"
        out.append(c)
    return out


def _rate_texts(P) -> dict[float, dict[str, str]]:
    """{SLO: {server: its sustainable rate's text}}: protocol 3's one-run search, or protocol
    5's replicated one (a production server's TCP_NODELAY row keyed "<server> nodelay";
    'at least': censored)."""
    if D.is_v5(P):
        slo, sens = D.slos()
        rates = V.rates(P)
        out = {slo: {s: V.rate_text(r) for s, r in rates.items()}}
        cap = V.capacity(P)
        for x in sens:  # a search that ran with no replicated step within x: said so, not "not run"
            met = V.sensitivity(P, x)
            none = f"no replicated step met {x * 1e3:g} ms"
            out[x] = {s: V.sensitivity_text(met[s], cap) if s in met else none for s in rates}
        return dict(sorted(out.items()))
    slo, sens = C.slos()
    steps = T.search_steps(P)
    return {x: {s: C.rate_text(v, why=False) for s, v in C.rates(P, x, steps).items()} for x in sorted({slo, *sens})}


def _chaos(P) -> pd.DataFrame:
    """Per server: session_processes, throughput_kept, messages_lost (protocol 5: the kept
    ratio of the two searches and the loss IM5(b) judges: session kills, random pick)."""
    if not D.is_v5(P):
        return F.chaos_table(P).set_index("server_language")
    from serverbench.benchmarks.im import parts_v5 as PV

    t = PV.chaos_table(P)
    # the table's rows by label, back to their servers (from the chaos search, which a rate piece has
    # without any grid run: the grid's servers once left such a sweep's chaos cells "not run")
    by_label = {V.row_label(s, False): s for s in V.rates(P, V.CHAOS_RATE)}
    rows = [
        {
            "server_language": by_label.get(r[Col.server], r[Col.server]),
            "session_processes": "yes",
            # a censored search leaves kept open (chaos_table's kept is NaN then): not "not run"
            "throughput_kept": r[Col.kept] if pd.notna(r[Col.kept]) else "unknown (a search censored)",
            "messages_lost": r["session_kills_lost"],  # IM5(b)'s measure: session kills, not any process's
        }
        for _, r in t.iterrows()
    ]
    rows += [{"server_language": s, "session_processes": "none (no chaos: nothing to kill)"} for s in T.production()]
    return pd.DataFrame(rows).set_index("server_language")
