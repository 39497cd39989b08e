"""The paper at its own scale: the verdicts of the committed sweeps of the `paper` profile's
pieces (harness/planning/pieces.py), for the report's first section and beside the quick verdicts.

Each piece is a sweep of its own (`paper-<piece>-<time>`, processed under data/processed);
the newest processed sweep of each piece counts. A claim is judged in the pieces that run
its benchmark (its `needs.table`; spawn_max belongs to the spawn piece); the throughput
claims in each core count's piece separately, since a piece never mixes machines.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from serverbench import paths, protocol
from serverbench.analysis.claims import engine
from serverbench.analysis.claims.replication import _gist, _info, machine_kind
from serverbench.analysis.plotting import figures
from serverbench.analysis.reading import process, registry

PROFILE = "paper"
NOT_RUN = "not run yet"
PAPER_FIGURES = tuple(figures.NAMES.values())  # Figs. 3-5; the other figures are beyond the paper


def _piece_of(sweep_id: str, names: list[str]) -> str | None:
    """The piece a sweep id names (`paper-<piece>-<YYYYmmddTHHMMSSZ>`), longest name first."""
    m = re.fullmatch(rf"{PROFILE}-(.+)-\d{{8}}T\d{{6}}Z", sweep_id)
    if not m:
        return None
    return next((n for n in sorted(names, key=len, reverse=True) if m.group(1) == n), None)


def latest(processed_dir: Path | None = None) -> dict[str, Path]:
    """{piece: the newest processed sweep of it with verdicts}."""
    from serverbench.harness.planning.pieces import pieces

    names = list(pieces(PROFILE))
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    found: dict[str, Path] = {}
    for f in sorted(root.glob(f"{PROFILE}-*/claims.csv")):
        piece = _piece_of(f.parent.name, names)
        if piece:
            found[piece] = f.parent  # sorted by name: the time stamp, so the newest wins
    return found


def verdicts(processed_dir: Path | None = None) -> pd.DataFrame:
    """One row per (claim, piece that runs its benchmark): id, piece, sweep, machine, verdict
    (NOT_RUN for a piece without a committed sweep)."""
    from serverbench.harness.planning.pieces import pieces

    by_piece = latest(processed_dir)
    rows = []
    for claim in engine.all_claims():
        for p in pieces(PROFILE).values():
            if claim.needs.table not in p.benchmarks:
                continue
            folder = by_piece.get(p.name)
            verdict, sweep, machine = NOT_RUN, None, None
            if folder is not None:
                t = pd.read_csv(folder / "claims.csv").set_index("id")["verdict"]
                verdict, sweep = t.get(claim.id, engine.ERROR), folder.name
                machine = machine_kind(_info(folder).get("host"))
            rows.append({"id": claim.id, "piece": p.name, "sweep": sweep, "machine": machine, "verdict": verdict})
    return pd.DataFrame(rows, columns=["id", "piece", "sweep", "machine", "verdict"])


def section(quick: dict[str, str], processed_dir: Path | None = None) -> str:
    """The report's first section: each claim's verdict at the paper's scale (per piece)
    beside this report's quick verdict, or how to run the pieces when none is committed."""
    v = verdicts(processed_dir)
    ran = v[v["verdict"] != NOT_RUN]
    pieces_line = ", ".join(f"`{p}`" for p in dict.fromkeys(v["piece"]))
    if ran.empty:
        return (
            "No sweep of the `paper` profile is committed yet, so no claim has been judged at the paper's own "
            "scale on this machine: every verdict below is at the quick profile's reduced scale (the regime "
            f"column says where). The paper profile runs in pieces of one session each ({pieces_line}): "
            "`./run_all.sh --profile paper --piece NAME`."
        )
    lines = [
        plain_summary(ran),
        "",
        "Each claim's verdict at the paper's parameters (the newest sweep of each piece, one machine each) beside "
        "this report's sweep:",
        "",
        "| claim | at the paper's scale | this sweep |",
        "|---|---|---|",
    ]
    for cid, g in ran.groupby("id", sort=False):
        short = {engine.NOT_TESTABLE: "not testable"}  # the first screen's word count is the reader's
        cells = "; ".join(f"{r.piece}: **{short.get(r.verdict, r.verdict)}**" for r in g.itertuples())
        lines.append(f"| {cid} | {cells} | {quick.get(cid, '–')} |")
    # each piece's sweep and machine once, under the table, so that the rows stay one line
    sweeps = ran.drop_duplicates("piece")
    if sweeps["machine"].nunique() == 1:
        named = ", ".join(f"`{r.sweep}`" for r in sweeps.itertuples())
        lines += ["", f"Sweeps: {named} (all on {sweeps['machine'].iloc[0]})."]
    else:
        lines += ["", "Sweeps: " + "; ".join(f"`{r.sweep}` ({r.machine})" for r in sweeps.itertuples()) + "."]
    waiting = v[v["verdict"] == NOT_RUN]
    if not waiting.empty:
        groups = waiting.groupby("piece", sort=False)["id"].apply(list)
        lines += [
            "",
            "Not judged at the paper's scale yet (their pieces have no committed sweep): "
            + "; ".join(f"{', '.join(ids)} (`{piece}`)" for piece, ids in groups.items())
            + ".",
        ]
    return "\n".join(lines)


class _Joined(process.Processed):
    """Several pieces' processed tables read as one sweep, for a figure whose pieces split its
    panels (Fig. 5: throughput-1core draws panel (a), throughput-2cores panel (b)). Each
    piece holds one core count, so every panel and curve still comes from one sweep on one
    machine; the caption names each sweep and its CPU. Built from the pieces' tables, not
    read from a folder."""

    def __init__(self, views: list):  # no super().__init__(): nothing to read from disk
        def cat(name):
            frames = [getattr(v, name) for v in views if not getattr(v, name).empty]
            return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

        self.folder = views[0].folder
        for name, value in vars(views[0]).items():  # every table Processed reads: its DataFrames
            if isinstance(value, pd.DataFrame):
                setattr(self, name, cat(name))
        infos = [v.info for v in views]
        cpus = [i.get("host", {}).get("cpu_model", "?") for i in infos]
        self.info = dict(infos[0])
        self.info["tables"] = sorted({t for i in infos for t in i.get("tables") or []})
        self.info["unrunnable_cores"] = sorted(set.intersection(*(set(i.get("unrunnable_cores") or []) for i in infos)))
        if len(set(cpus)) == 1:
            self.info["sweep_id"] = " and ".join(i.get("sweep_id", "?") for i in infos)
        else:  # the caption says which machine ran which sweep
            self.info["sweep_id"] = " and ".join(f"{i.get('sweep_id', '?')} ({c})" for i, c in zip(infos, cpus))
            self.info["host"] = {**infos[0].get("host", {}), "cpu_model": " / ".join(cpus)}


def draw_figures(
    out_dir: Path, show_reference: bool = True, processed_dir: Path | None = None
) -> list[tuple[str, Path]]:
    """The paper's figures (3-5) from the pieces' newest sweeps: each drawn once, from every
    piece whose benchmarks hold one of its tables (Fig. 5's panels from the two core counts'
    pieces, each panel from one piece), saved as `paper-<figure>.png/.pdf` in out_dir (the
    earlier `paper-*` files there are this function's own and are replaced). Returns
    [(caption, png)]; [] when no piece is committed."""
    import matplotlib.pyplot as plt

    from serverbench.harness.planning.pieces import pieces

    spec_of = pieces(PROFILE)
    out_dir = Path(out_dir)
    for old in out_dir.glob("paper-*.*"):
        if old.suffix in (".png", ".pdf"):
            old.unlink()
    views = {piece: process.Processed(folder) for piece, folder in latest(processed_dir).items()}
    drawn = []
    for spec in registry.figures():
        if spec.name not in PAPER_FIGURES:
            continue
        used = [p for p in views if p in spec_of and set(spec_of[p].benchmarks) & set(spec.tables)]
        if not used:
            continue
        # the committed tables, as the verdicts above are the committed claims.csv
        P = views[used[0]] if len(used) == 1 else _Joined([views[p] for p in used])
        fig = figures.draw(spec.name, P, show_reference=show_reference, save_files=False)
        if fig is None:
            continue
        png = figures.save(fig, f"paper-{spec.name}", out_dir)["png"]
        plt.close(fig)
        where = ", ".join(f"piece `{p}` (sweep `{views[p].folder.name}`)" for p in used)
        drawn.append((f"{spec.title}: {where}", png))
    return drawn


def plain_summary(ran: pd.DataFrame) -> str:
    """One sentence a reader takes in at once: how many of the claims judged at the paper's
    parameters hold, do not hold, are undecided or cannot be tested on this machine. A claim
    judged in two pieces (the throughput claims, on 1 and 2 cores) counts under its one
    verdict when the pieces agree, or under "differs between pieces" when they do not
    (ignoring a piece where it is not testable)."""
    # (plural, singular) of each group, in the order the sentence gives them
    forms = {
        "hold": ("hold", "holds"),
        "not": ("do not hold", "does not hold"),
        "open": ("are undecided", "is undecided"),
        "differ": ("differ between pieces", "differs between pieces"),
        "untestable": ("cannot be tested on a machine this size", "cannot be tested on a machine this size"),
        "error": ("could not be judged", "could not be judged"),  # the check itself failed: the table says why
    }
    groups: dict[str, list[str]] = {k: [] for k in forms}
    for cid, g in ran.groupby("id", sort=False):
        tested = set(g["verdict"]) - {engine.NOT_TESTABLE}
        if not tested:
            groups["untestable"].append(cid)
        elif len(tested) > 1:
            groups["differ"].append(cid)
        else:
            verdict = tested.pop()
            kind = {engine.SUPPORTED: "hold", engine.CONTRADICTED: "not", engine.ERROR: "error"}.get(verdict, "open")
            groups[kind].append(cid)
    parts = [f"{len(ids)} {forms[k][len(ids) == 1]} ({', '.join(ids)})" for k, ids in groups.items() if ids]
    machines = "; ".join(sorted(set(ran["machine"].dropna()))) or "unknown machine"
    return (
        f"At the paper's own parameters ({machines}), of the {ran['id'].nunique()} claims judged, "
        + ", ".join(parts[:-1])
        + (" and " if len(parts) > 1 else "")
        + parts[-1]
        + "."
    )


def readme_lines(processed_dir: Path | None = None) -> str:
    """README's statement of what has been judged at the paper's own scale (a generated block):
    each claim whose piece is committed, with its verdict, sweep and machine, and the pieces
    still to run."""
    v = verdicts(processed_dir)
    ran = v[v["verdict"] != NOT_RUN]
    missing = sorted(set(v.loc[v["verdict"] == NOT_RUN, "piece"]))
    how = "`./run_all.sh --profile paper --piece NAME`, one session on one machine each"
    if ran.empty:
        return f"No piece of the `paper` profile (the paper's own parameters) is committed yet ({how})."
    out = [plain_summary(ran), "", "Each piece's verdicts (judged by the same protocol):", ""]
    for (piece, sweep, machine), g in ran.groupby(["piece", "sweep", "machine"], sort=False):
        claims = "; ".join(f"**{r.id}** {_gist(protocol.claim(r.id)['sentence'])}: {r.verdict}" for r in g.itertuples())
        out.append(f"* piece `{piece}` (`{sweep}`, {machine}): {claims}.")
    if missing:
        out += ["", "Still to run: " + ", ".join(f"`{m}`" for m in missing) + f" ({how})."]
    return "\n".join(out)
