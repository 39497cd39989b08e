"""The paper's own recorded values (data/reference/) run through the same checks, judged
as points (the protocol's "source_numbers"): each claim's encoding must recover the
paper's conclusion from the paper's numbers, or its reading of the sentence is wrong.

The reference tables are turned into raw-log-shaped records (host 'paper', marked as
such) and processed like a sweep:
* Fig. 3 values -> PingPing, one value per point;
* Fig. 4 run rows -> the max-processes search (runs = trials; a 'crashes' or
  'cant alloc heap' cell = a failed step, which establishes the limit), Fig. 4 (b)
  values -> fixed-N spawn (one value per N);
* Fig. 5 runs -> throughput, three trials per (cores, pairs), 60 s runs.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pandas as pd

from serverbench.analysis import claims
from serverbench.analysis.reading import csvout, reference, synthetic
from serverbench.rawdata.columns import Col

SWEEP_ID = "paper-reference"
PAPER_HOST = {
    "hostname": "paper",
    "cpu_model": "the paper's machines (see data/reference/README.md)",
    "logical_cpus": 32,
    "memory_bytes": 64 * 2**30,
    "os": "as in the paper",
    "kernel": "n/a",
}
BUDGET = 8 * 2**30


def _rec(*a, **kw) -> dict:
    r = synthetic.raw_record(*a, sweep_id=SWEEP_ID, validate=False, **kw)
    r[Col.host] = PAPER_HOST
    r[Col.runtime] = r[Col.runtime] and {**r[Col.runtime], "name": "paper", "version": "as in the paper"}
    return r


def paper_records() -> list[dict]:
    recs = []
    for r in reference.fig3().itertuples():
        recs.append(
            _rec(
                "pingping",
                r.language,
                {"message_bytes": int(r.message_bytes), "repetitions": int(r.repetitions)},
                {"elapsed_s": float(r.time_s)},
            )
        )
    for r in reference.fig4b().itertuples():
        recs.append(
            _rec(
                "spawn",
                r.language,
                {"processes": int(r.processes)},
                {"all_ready_s": float(r.time_s), "spawn_call_s": float(r.time_s)},
            )
        )
    runs = reference.load("fig4_runs")
    for lang, g in runs.groupby("language"):
        for step, (n, gn) in enumerate(sorted(g.groupby("processes"), key=lambda x: x[0])):
            search = {"name": "max_processes", "step": step, "budget_bytes": BUDGET}
            for r in gn.itertuples():
                if r.status == "ok" and pd.notna(r.time_s):
                    recs.append(
                        _rec(
                            "spawn",
                            lang,
                            {"processes": int(n)},
                            {"all_ready_s": float(r.time_s), "spawn_call_s": float(r.time_s)},
                            trial=int(r.run),
                            search=search,
                        )
                    )
                else:
                    recs.append(
                        _rec(
                            "spawn",
                            lang,
                            {"processes": int(n)},
                            None,
                            status="crashed",
                            trial=int(r.run),
                            search=search,
                            status_reason=str(r.status_raw),
                        )
                    )
    for r in reference.fig5_runs().itertuples():
        recs.append(
            _rec(
                "throughput",
                r.language,
                {"pairs": int(r.pairs), "duration_s": 60.0},
                {"paper_msgs_per_min": float(r.messages_per_min)},
                cores=int(r.cores),
                trial=int(r.run),
            )
        )
    return recs


def paper_verdicts(workdir=None) -> pd.DataFrame:
    """The claims table computed on the paper's own data: id, verdict, numbers."""
    if workdir is None:
        with tempfile.TemporaryDirectory() as d:
            return paper_verdicts(d)
    return claims.claims_table(_verdicts(Path(workdir)))[["id", "verdict", "numbers", "why"]]


def _verdicts(workdir: Path) -> list:
    """The C claims judged on the paper's records, processed in workdir with point values
    (the paper gives one number per point, so there is no interval to judge). E and T
    claims are judged on the source data instead (sourcedata.py)."""
    P = synthetic.processed_from(paper_records(), workdir, {"profile": {"name": "paper data"}})
    return [v for v in claims.check_all(P, point_values=True) if v.id.startswith("C")]


def paper_verdicts_cached() -> pd.DataFrame:
    """paper_verdicts() with this code on the reference tables, written to
    data/processed/paper-reference/ (claims.csv, claims_evidence.csv) unless the files there
    already hold the same tables.

    The value is kept in the user's cache under the digest of the reference tables and the
    code (reading/cache.py), never judged fresh by file times: a fresh clone gives every
    file the checkout's time, so a committed table older than the code that judges it could
    otherwise be served as current."""
    from serverbench import paths
    from serverbench.analysis.reading import cache

    def compute() -> dict:
        with tempfile.TemporaryDirectory() as work:
            V = _verdicts(Path(work))
        return {
            "claims": claims.claims_table(V).to_dict(orient="split", index=False),
            "evidence": claims.evidence_table(V).to_dict(orient="split", index=False),
        }

    inputs = [(f, (reference.reference_dir() / f).read_bytes()) for f in sorted(reference.FILES.values())]
    kept = cache.json_value(CACHE_KIND, inputs, compute)
    t, ev = (pd.DataFrame(kept[k]["data"], columns=kept[k]["columns"]) for k in ("claims", "evidence"))
    out = paths.processed_dir() / SWEEP_ID
    out.mkdir(parents=True, exist_ok=True)
    # at the stated precision (csvout): another CPU's last bits write the same bytes
    csvout.write(t, out / "claims.csv")
    csvout.write(ev, out / "claims_evidence.csv")
    return t[["id", "verdict", "numbers", "why"]]


CACHE_KIND = "paper-verdicts"
