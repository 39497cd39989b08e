"""Replication, measured: each claim's verdicts over every committed sweep of a profile,
by kind of machine (docs/protocol.md, section 5).

`record(profile)` reads the claims.csv of every processed sweep of that profile (each
judged by the protocol version its `protocol` column names) with its machine kind (CPU
model and logical CPUs) and whether it ran after the protocol was frozen (its first run
later than spec/protocol.json's frozen_utc). `counts(record)` turns that into one line per
claim and verdict, e.g. "contradicted in 26 of 27: 7/7 AMD EPYC, 19/20 Intel Xeon".
`python -m serverbench replication` writes data/processed/replication/<profile>.csv and
prints the table; the report shows it beside a new sweep's verdicts.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd

from serverbench import paths, protocol
from serverbench.analysis.claims import engine

FOLDER = "replication"
COLUMNS = ["sweep", "machine", "after_freeze", "protocol", "id", "verdict"]


def machine_kind(host: dict | None) -> str:
    """CPU model and logical CPUs, e.g. "AMD EPYC, 2 CPUs" ("unknown machine" without one)."""
    if not host or not host.get("cpu_model"):
        return "unknown machine"
    n = host.get("logical_cpus")
    return f"{host['cpu_model']}, {int(n)} CPUs" if n else str(host["cpu_model"])


def _info(folder: Path) -> dict:
    try:
        return json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _profile(info: dict) -> str | None:
    p = info.get("profile")
    return p.get("name") if isinstance(p, dict) else p


def sweeps(profile: str, processed_dir: Path | None = None) -> list[Path]:
    """Every processed sweep folder of `profile` that has verdicts, oldest first."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    found = [
        f
        for f in sorted(root.iterdir())
        if f.is_dir() and (f / "claims.csv").exists() and _profile(_info(f)) == profile
    ]
    return sorted(found, key=lambda f: _info(f).get("first_started_utc") or f.name)


def record(profile: str = "quick", processed_dir: Path | None = None) -> pd.DataFrame:
    """One row per (sweep, claim): its machine kind, whether it ran after the freeze, the
    protocol version that judged it, and the verdict."""
    frozen = protocol.load()["frozen_utc"].rstrip("Z")
    rows = []
    for f in sweeps(profile, processed_dir):
        info = _info(f)
        started = (info.get("first_started_utc") or "").rstrip("Z")
        t = pd.read_csv(f / "claims.csv")
        version = t["protocol"].iloc[0] if "protocol" in t.columns and len(t) else None
        for r in t.itertuples():
            rows.append(
                [f.name, machine_kind(info.get("host")), bool(started) and started > frozen, version, r.id, r.verdict]
            )
    return pd.DataFrame(rows, columns=COLUMNS)


def of_raw_sweeps(dirs: list[Path], spawn_metric: str = "all_ready_s") -> pd.DataFrame:
    """The record (COLUMNS) of raw sweep folders, each judged from its own raw log in a
    temporary folder (nothing under data/processed is written): the stability command's
    repeats, which are not processed sweeps."""
    import tempfile

    from serverbench.analysis import claims
    from serverbench.analysis.reading import process

    frozen = protocol.load()["frozen_utc"].rstrip("Z")
    rows = []
    for d in dirs:
        with tempfile.TemporaryDirectory(prefix="serverbench-verdicts-") as tmp:
            process.process_sweep(Path(d), Path(tmp))
            P = process.Processed(Path(tmp))
            started = str(P.info.get("first_started_utc") or "").rstrip("Z")
            machine = machine_kind(P.info.get("host"))
            for v in claims.check_all(P, spawn_metric):
                rows.append(
                    [Path(d).name, machine, bool(started) and started > frozen, protocol.version(), v.id, v.verdict]
                )
    return pd.DataFrame(rows, columns=COLUMNS)


def by_sweep(rec: pd.DataFrame) -> pd.DataFrame:
    """The verdict table across sweeps: one row per claim (first seen first), one column per
    sweep (its verdict, "(missing)" where it has none), and `agree` ("yes" when every sweep
    gives the same verdict, else "NO")."""
    sweeps_ = list(dict.fromkeys(rec["sweep"]))
    ids = list(dict.fromkeys(rec["id"]))
    grid = rec.pivot_table(index="id", columns="sweep", values="verdict", aggfunc="first")
    grid = grid.reindex(index=ids, columns=sweeps_).fillna("(missing)")
    grid["agree"] = ["yes" if len(set(row)) == 1 else "NO" for row in grid[sweeps_].itertuples(index=False)]
    return grid.rename_axis(index="claim", columns=None).reset_index()


def _short(machine: str) -> str:
    """'AMD EPYC' from 'AMD EPYC, 2 CPUs'; 'Intel Xeon' from 'Intel(R) Xeon(R) Processor, 2 CPUs'."""
    m = machine.split(",")[0].replace("(R)", "").replace("(TM)", "").replace(" Processor", "").replace(" CPU", "")
    return " ".join(m.split())


def counts(rec: pd.DataFrame) -> pd.DataFrame:
    """Per claim: its verdicts over the sweeps, most frequent first, each with its count by
    machine kind; and the same over the sweeps after the freeze."""
    out = []
    for cid, g in rec.groupby("id", sort=False):
        out.append({"id": cid, "all sweeps": _line(g), "after the freeze": _line(g[g["after_freeze"]])})
    return pd.DataFrame(out, columns=["id", "all sweeps", "after the freeze"])


def _line(g: pd.DataFrame) -> str:
    if g.empty:
        return "none yet"
    n = len(g)
    parts = []
    for verdict, gv in sorted(g.groupby("verdict"), key=lambda x: -len(x[1])):
        per = ", ".join(
            f"{(gv['machine'] == m).sum()}/{(g['machine'] == m).sum()} {_short(m)}" for m in sorted(set(g["machine"]))
        )
        parts.append(f"{verdict} in {len(gv)} of {n} ({per})")
    return "; ".join(parts)


def flips(rec: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(claim, sweep a, sweep b) for every pair in which the claim is supported in one and
    contradicted in the other."""
    both = {engine.SUPPORTED, engine.CONTRADICTED}
    out = []
    for cid, g in rec.groupby("id", sort=False):
        v = dict(zip(g["sweep"], g["verdict"]))
        out += [(str(cid), a, b) for a, b in combinations(v, 2) if {v[a], v[b]} == both]
    return out


def write(profile: str = "quick", processed_dir: Path | None = None) -> Path:
    """data/processed/replication/<profile>.csv: the record (one row per sweep and claim)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    out = root / FOLDER / f"{profile}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    record(profile, root).to_csv(out, index=False)
    return out


def load(profile: str = "quick", processed_dir: Path | None = None) -> pd.DataFrame:
    """The written record (write() first when it is missing)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    f = root / FOLDER / f"{profile}.csv"
    return pd.read_csv(f) if f.exists() else record(profile, root)


def summary_lines(rec: pd.DataFrame) -> list[str]:
    fl = flips(rec)
    kinds = rec.drop_duplicates("sweep")["machine"].value_counts()
    return [
        f"{rec['sweep'].nunique()} sweeps ({', '.join(f'{n} on {_short(m)}' for m, n in kinds.items())}); "
        f"{int(rec.drop_duplicates('sweep')['after_freeze'].sum())} after protocol {protocol.version()} was frozen",
        f"supported <-> contradicted flips: {len(fl)}"
        + (": " + "; ".join(f"{c} ({a} vs {b})" for c, a, b in fl) if fl else ""),
    ]


def beside(profile: str, sweep: str, processed_dir: Path | None = None) -> pd.DataFrame:
    """The report's replication column: per claim, its verdicts over every committed sweep
    of the profile other than this one, by machine kind (id, replication)."""
    rec = load(profile, processed_dir)
    rec = rec[rec["sweep"] != sweep]
    col = f"replication ({rec['sweep'].nunique()} other {profile} sweeps)"
    return counts(rec)[["id", "all sweeps"]].rename(columns={"all sweeps": col})


def protocol_note(info: dict) -> str:
    """Which protocol judged the sweep, its hash, and whether the sweep ran after the freeze."""
    p = protocol.load()
    started = str(info.get("first_started_utc") or "")
    when = (
        "after it was frozen (a confirmation sweep: no rule cites it)"
        if started.rstrip("Z") > p["frozen_utc"].rstrip("Z")
        else "before it was frozen"
    )
    return (
        f"**Judged by protocol {p['protocol']}** (spec/protocol.json, sha256 `{protocol.sha256()[:16]}`, "
        f"frozen {p['frozen_utc']}; docs/protocol.md). This sweep ran {when}."
    )


VERDICT_COLORS = {
    engine.SUPPORTED: "#4daf4a",
    engine.CONTRADICTED: "#e41a1c",
    engine.INCONCLUSIVE: "#d9d9d9",
    engine.NOT_TESTABLE: "#ffffff",
    engine.ERROR: "#000000",
}


def figure(rec: pd.DataFrame):
    """The record as a picture: one row per claim (the paper's order), one column per sweep
    (oldest first), each cell coloured by its verdict; a dashed line where protocol 1 was
    frozen; the machine kind under each column."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    ids = [c["id"] for c in protocol.load()["claims"] if c["id"] in set(rec["id"])]
    sweeps_ = list(dict.fromkeys(rec["sweep"]))
    grid = rec.pivot_table(index="id", columns="sweep", values="verdict", aggfunc="first").reindex(ids)[sweeps_]
    codes = {v: i for i, v in enumerate(VERDICT_COLORS)}
    z = grid.apply(lambda col: col.map(lambda v: codes.get(v, codes[engine.ERROR])))
    fig, ax = plt.subplots(figsize=(max(6.0, 0.22 * len(sweeps_) + 2), 0.28 * len(ids) + 1.8))
    cmap = matplotlib.colors.ListedColormap(list(VERDICT_COLORS.values()))
    ax.imshow(z.to_numpy(dtype=float), aspect="auto", cmap=cmap, vmin=-0.5, vmax=len(codes) - 0.5)
    ax.set_yticks(range(len(ids)), ids, fontsize=8)
    machines = rec.drop_duplicates("sweep").set_index("sweep").loc[sweeps_, "machine"].map(_short)
    ax.set_xticks(range(len(sweeps_)), [m.split()[0] for m in machines], rotation=90, fontsize=6)
    ax.set_xticks([x - 0.5 for x in range(len(sweeps_) + 1)], minor=True)
    ax.set_yticks([y - 0.5 for y in range(len(ids) + 1)], minor=True)
    ax.grid(which="minor", color="0.6", lw=0.4)
    ax.grid(which="major", visible=False)
    ax.tick_params(which="minor", length=0)
    after = rec.drop_duplicates("sweep").set_index("sweep").loc[sweeps_, "after_freeze"].tolist()
    if any(after) and not all(after):
        x = after.index(True) - 0.5
        ax.axvline(x, color="k", ls="--", lw=1.2)
    frozen = f"; dashed line: protocol {protocol.version()} frozen" if any(after) and not all(after) else ""
    ax.set_xlabel(f"{len(sweeps_)} committed quick sweeps, oldest first (machine of each){frozen}")
    ax.set_title(f"Each claim's verdict in each sweep (judged by protocol {protocol.version()})", fontsize=10)
    seen = set(rec["verdict"])
    handles = [Patch(facecolor=c, edgecolor="0.5", label=v) for v, c in VERDICT_COLORS.items() if v in seen]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=7, frameon=False)
    fig.tight_layout()
    return fig


def _gist(sentence: str) -> str:
    """A claim's sentence, whole and quoted, for a list that names the claim by its code:
    README and the report never cut a claim's words (a cut sentence may say the opposite)."""
    return f"\u201c{sentence.strip().rstrip('.')}\u201d"
