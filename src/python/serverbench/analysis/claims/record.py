"""The replication record: each claim's verdict in every committed sweep of a profile, with
the sweep's machine kind, the protocol version that judged it and its design
(docs/protocol.md section 7).

Design: a sweep is *exploratory* when its first run started before the freeze of the
protocol version that judges it (protocol 1's earlier design: 5 deciding rounds, some with
the outcome-dependent second stage), and a *confirmation* sweep of that version when it
started after (its fixed design; no rule cites it). `record(profile)` reads the claims.csv
of every processed sweep of that profile; `unaccounted(profile)` names every committed raw
sweep of it that the record lacks, with the reason; `counts(record)` turns the record into
one line per claim and group (design and version), by machine kind. `python -m serverbench
replication` writes data/processed/replication/<profile>.csv (and -effects.csv, the
deciding ratios per sweep, analysis/claims/effects.py).
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pandas as pd

from serverbench import paths, protocol
from serverbench.analysis.claims import effects, engine, results
from serverbench.analysis.claims.options import Options
from serverbench.analysis.reading import csvout
from serverbench.rawdata.columns import Col

FOLDER = "replication"
COLUMNS = ["sweep", "machine", "design", "after_freeze", "protocol", "id", "verdict"]
EXPLORATORY, CONFIRMATION = "exploratory", "confirmation"
# committed raw sweeps whose manifest names the profile but that are not sweeps of its
# tables: left out of the record, each with its reason (every other one is in it)
EXCLUDED = {
    "targets-20261121T134056Z": "a `serverbench targets` calibration (30 spawn runs sizing the profile's targets), "
    "not a sweep of the profile's tables: it decides no claim",
}


def machine_kind(host: dict | None, machine: dict | None = None) -> str:
    """The kind of machine a sweep ran on: with the manifest's `machine` object, CPU name,
    family/model/stepping, CPUs and memory in GiB (fingerprint.kind: "AMD EPYC 25/17 stepping
    1, 2 CPUs, 24 GiB"), so that two CPU models sold under one name are two kinds; without it
    (sweeps before the manifest recorded it), CPU name and logical CPUs ("AMD EPYC, 2 CPUs");
    "unknown machine" without either."""
    from serverbench.harness.running.fingerprint import kind

    found = kind(machine)
    if found:
        return found
    if not host or not host.get(Col.cpu_model):
        return "unknown machine"
    n = host.get(Col.logical_cpus)
    return f"{host[Col.cpu_model]}, {int(n)} CPUs" if n else str(host[Col.cpu_model])


def kind_of(info: dict) -> str:
    """machine_kind of a processed sweep's sweep.json (its host and its manifest's machine;
    what the machine object lacks, the host says)."""
    host = info.get(Col.host) or {}
    machine = (info.get(Col.manifest) or {}).get(Col.machine) or {}
    filled = {k: host.get(k) for k in ("cpu_model", "logical_cpus", "memory_bytes")} | {
        k: v for k, v in machine.items() if v is not None
    }
    return machine_kind(host, filled if machine else None)


def _info(folder: Path) -> dict:
    try:
        return json.loads((folder / "sweep.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def _profile(info: dict) -> str | None:
    p = info.get(Col.profile)
    return p.get(Col.name) if isinstance(p, dict) else p


def design_of(first_started_utc: str | None) -> tuple[int, str]:
    """(the protocol version that judges a sweep started then, its design)."""
    v = protocol.version_for(first_started_utc)
    with protocol.in_force(v):
        frozen = protocol.load()["frozen_utc"].rstrip("Z")
    started = str(first_started_utc or "").rstrip("Z")
    return v, CONFIRMATION if started and started > frozen else EXPLORATORY


def group(design: str, version) -> str:
    """A record group's name, e.g. "confirmation, protocol 1"."""
    return f"{design}, protocol {version}"


def sweeps(profile: str, processed_dir: Path | None = None) -> list[Path]:
    """Every processed sweep folder of `profile` that has verdicts, oldest first."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    found = [
        f
        for f in sorted(root.iterdir())
        if f.is_dir() and (f / "claims.csv").exists() and _profile(_info(f)) == profile
    ]
    return sorted(found, key=lambda f: _info(f).get(Col.first_started_utc) or f.name)


def unaccounted(profile: str, processed_dir: Path | None = None, raw_dir: Path | None = None) -> list[tuple[str, str]]:
    """(sweep, why) for every committed raw sweep of `profile` that the record lacks: the
    excluded ones with their reason, any other as not processed (a gap to fill)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    raw = Path(raw_dir) if raw_dir else paths.raw_dir()
    have = {f.name for f in sweeps(profile, root)}
    out = []
    for d in sorted(raw.iterdir()) if raw.exists() else []:
        try:
            man = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if _profile(man) == profile and d.name not in have:
            why = EXCLUDED.get(d.name) or (
                "processed without verdicts" if (root / d.name).exists() else "not processed"
            )
            out.append((d.name, why))
    return out


def record(profile: str = "quick", processed_dir: Path | None = None) -> pd.DataFrame:
    """One row per (sweep, claim): machine kind, design, whether it ran after the freeze of
    its version (a confirmation sweep), the protocol version that judged it, the verdict."""
    rows = []
    for f in sweeps(profile, processed_dir):
        info = _info(f)
        version, design = design_of(info.get(Col.first_started_utc))
        t = pd.read_csv(f / "claims.csv")
        judged = int(t[Col.protocol].iloc[0]) if Col.protocol in t.columns and len(t) else version
        for r in t.itertuples():
            rows.append([f.name, kind_of(info), design, design == CONFIRMATION, judged, r.id, r.verdict])
    return pd.DataFrame(rows, columns=COLUMNS)


def effects_table(profile: str = "quick", processed_dir: Path | None = None, rec: pd.DataFrame | None = None):
    """Each deciding ratio in each sweep of the record (analysis/claims/effects.py)."""
    rec = record(profile, processed_dir) if rec is None else rec
    about = rec.drop_duplicates("sweep").set_index("sweep")[["machine", "design", "protocol"]].to_dict("index")
    return effects.table(sweeps(profile, processed_dir), about)


def of_raw_sweeps(dirs: list[Path], options: Options | None = None) -> pd.DataFrame:
    """The record (COLUMNS) of raw sweep folders, each judged from its own raw log in a
    temporary folder by the protocol version in force when it started (nothing under
    data/processed is written): the stability command's repeats, which are not processed
    sweeps."""
    import tempfile

    from serverbench.analysis import claims
    from serverbench.analysis.reading import process

    rows = []
    for d in dirs:
        with tempfile.TemporaryDirectory(prefix="serverbench-verdicts-") as tmp:
            process.process_sweep(Path(d), Path(tmp))
            P = process.Processed(Path(tmp))
            _, design = design_of(P.info.get(Col.first_started_utc))
            machine = kind_of(P.info)
            for v in claims.check_all(P, Options.coerce(options)):
                rows.append([Path(d).name, machine, design, design == CONFIRMATION, v.protocol, v.id, v.verdict])
    return pd.DataFrame(rows, columns=COLUMNS)


def by_sweep(rec: pd.DataFrame) -> pd.DataFrame:
    """The verdict table across sweeps: one row per claim (first seen first), one column per
    sweep (its verdict, "(missing)" where it has none), and `agree` ("yes" when every sweep
    gives the same verdict, else "NO")."""
    sweeps_ = list(dict.fromkeys(rec[Col.sweep]))
    ids = list(dict.fromkeys(rec[Col.id]))
    grid = rec.pivot_table(index="id", columns="sweep", values="verdict", aggfunc="first")
    grid = grid.reindex(index=ids, columns=sweeps_).fillna("(missing)")
    grid["agree"] = ["yes" if len(set(row)) == 1 else "NO" for row in grid[sweeps_].itertuples(index=False)]
    return grid.rename_axis(index="claim", columns=None).reset_index()


def short_machine(machine: str) -> str:
    """'AMD EPYC' from 'AMD EPYC, 2 CPUs'; 'Intel Xeon' from 'Intel(R) Xeon(R) Processor, 2 CPUs'."""
    m = machine.split(",")[0].replace("(R)", "").replace("(TM)", "").replace(" Processor", "").replace(" CPU", "")
    return " ".join(m.split())


def groups(rec: pd.DataFrame) -> list[str]:
    """The record's groups, exploratory first, then each version's confirmation sweeps."""
    keys = rec.drop_duplicates("sweep")[["design", "protocol"]].drop_duplicates()
    order = sorted(keys.itertuples(index=False), key=lambda k: (k.design != EXPLORATORY, int(k.protocol)))
    return [group(k.design, k.protocol) for k in order]


def _of(rec: pd.DataFrame, name: str) -> pd.DataFrame:
    return rec[[group(d, v) == name for d, v in zip(rec[Col.design], rec[Col.protocol])]]


def counts(rec: pd.DataFrame) -> pd.DataFrame:
    """Per claim, one column per group (design and version): its verdicts over those sweeps,
    most frequent first, each with its count by machine kind."""
    names = groups(rec)
    out = []
    for cid, g in rec.groupby("id", sort=False):
        out.append({"id": cid, **{n: line(_of(g, n)) for n in names}})
    return pd.DataFrame(out, columns=["id", *names])


def line(g: pd.DataFrame) -> str:
    """'supported in 2 of 3 (1/1 AMD EPYC, 1/2 Intel Xeon); ...': the verdicts most frequent
    first, in the shared words ('not testable', not the claims tables' 'not testable on this
    machine': in most other sweeps the reason is the piece, not the machine)."""
    if g.empty:
        return "none yet"
    g = g.assign(verdict=g[Col.verdict].map(results.word))
    n = len(g)
    parts = []
    for verdict, gv in sorted(g.groupby("verdict"), key=lambda x: -len(x[1])):
        per = ", ".join(
            f"{(gv[Col.machine] == m).sum()}/{(g[Col.machine] == m).sum()} {short_machine(m)}"
            for m in sorted(set(g[Col.machine]))
        )
        parts.append(f"{verdict} in {len(gv)} of {n} ({per})")
    return "; ".join(parts)


def flips(rec: pd.DataFrame) -> list[tuple[str, str, str]]:
    """(claim, sweep a, sweep b) for every pair in which the claim is supported in one and
    contradicted in the other."""
    both = {engine.SUPPORTED, engine.CONTRADICTED}
    out = []
    for cid, g in rec.groupby("id", sort=False):
        v = dict(zip(g[Col.sweep], g[Col.verdict]))
        out += [(str(cid), a, b) for a, b in combinations(v, 2) if {v[a], v[b]} == both]
    return out


def write(profile: str = "quick", processed_dir: Path | None = None) -> Path:
    """data/processed/replication/<profile>.csv (the record, one row per sweep and claim) and
    <profile>-effects.csv (each deciding ratio in each sweep)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    out = root / FOLDER / f"{profile}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    rec = record(profile, root)
    csvout.write(rec, out)
    csvout.write(effects_table(profile, root, rec), root / FOLDER / f"{profile}-effects.csv")
    return out


def load(profile: str = "quick", processed_dir: Path | None = None) -> pd.DataFrame:
    """The written record (the record itself when it is missing or of an older layout)."""
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    f = root / FOLDER / f"{profile}.csv"
    t = pd.read_csv(f) if f.exists() else None
    return t if t is not None and list(t.columns) == COLUMNS else record(profile, root)


def summary_lines(rec: pd.DataFrame) -> list[str]:
    fl = flips(rec)
    per = rec.drop_duplicates("sweep")
    parts = []
    for name in groups(rec):
        g = _of(per, name)
        kinds = g[Col.machine].map(short_machine).value_counts()
        parts.append(f"{len(g)} {name} ({', '.join(f'{n} on {m}' for m, n in kinds.items())})")
    return [
        f"{rec[Col.sweep].nunique()} sweeps: " + "; ".join(parts),
        f"supported <-> contradicted flips: {len(fl)}"
        + (": " + "; ".join(f"{c} ({a} vs {b})" for c, a, b in fl) if fl else ""),
    ]


def beside(profile: str, sweep: str, processed_dir: Path | None = None) -> pd.DataFrame:
    """The report's replication column: per claim, its verdicts over every other committed
    sweep of the profile, each group (design and version) apart, by machine kind."""
    rec = load(profile, processed_dir)
    rec = rec[rec[Col.sweep] != sweep]
    col = f"replication ({rec[Col.sweep].nunique()} other {profile} sweeps)"
    c = counts(rec)
    names = [n for n in c.columns if n != "id"]
    c[col] = [" | ".join(f"{n}: {row[n]}" for n in reversed(names) if row[n] != "none yet") for _, row in c.iterrows()]
    return c[["id", col]]


def protocol_note(info: dict) -> str:
    """Which protocol judged the sweep, its hash, and whether the sweep ran after its freeze."""
    version, design = design_of(info.get(Col.first_started_utc))
    with protocol.in_force(version):
        p = protocol.load()
    when = (
        "after it was frozen (a confirmation sweep: no rule cites it)"
        if design == CONFIRMATION
        else "before it was frozen (exploratory)"
    )
    human = "docs/protocol.md" if version == protocol.newest() else f"docs/protocol-{version}.md"
    return (
        f"**Judged by protocol {p[Col.protocol]}** ({protocol.path(version).name}, sha256 "
        f"`{protocol.sha256(version)[:16]}`, frozen {p['frozen_utc']}; {human}). This sweep ran {when}."
    )
