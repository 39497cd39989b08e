"""The paper at its own scale: the verdicts of the committed sweeps of the `paper` profile's
pieces (harness/pieces.py), for the report's first section and beside the quick verdicts.

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
from serverbench.analysis import figures, process, registry
from serverbench.analysis.claims import engine
from serverbench.analysis.replication import _gist, _info, machine_kind

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
    from serverbench.harness.pieces import pieces

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
    from serverbench.harness.pieces import pieces

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
        "Each claim a committed piece of the `paper` profile has judged (the paper's parameters; one machine per "
        "piece; the newest sweep of each piece), by the same protocol, beside this report's sweep:",
        "",
        "| claim | at the paper's scale | this sweep |",
        "|---|---|---|",
    ]
    for cid, g in ran.groupby("id", sort=False):
        cells = "; ".join(f"{r.piece}: **{r.verdict}** ({r.sweep}, {r.machine})" for r in g.itertuples())
        lines.append(f"| {cid} | {cells} | {quick.get(cid, '–')} |")
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


def draw_figures(
    out_dir: Path, show_reference: bool = True, processed_dir: Path | None = None
) -> list[tuple[str, Path]]:
    """The paper's figures (3-5) from the pieces' newest sweeps: each drawn from every piece
    whose benchmarks hold one of its tables (Fig. 5 once per core count's piece), saved as
    `paper-<piece>-<figure>.png/.pdf` in out_dir. Returns [(caption, png)]; [] when no piece
    is committed."""
    import matplotlib.pyplot as plt

    from serverbench.harness.pieces import pieces

    spec_of = pieces(PROFILE)
    drawn = []
    for piece, folder in latest(processed_dir).items():
        benches = set(spec_of[piece].benchmarks) if piece in spec_of else set()
        wanted = [f for f in registry.figures() if f.name in PAPER_FIGURES and benches & set(f.tables)]
        if not wanted:
            continue
        P = process.Processed(folder)  # the committed tables, as the verdicts above are the committed claims.csv
        for spec in wanted:
            fig = figures.draw(spec.name, P, show_reference=show_reference, save_files=False)
            if fig is None:
                continue
            name = f"paper-{piece}-{spec.name}"
            png = figures.save(fig, name, out_dir)["png"]
            plt.close(fig)
            drawn.append((f"{spec.title}: piece `{piece}`, sweep `{folder.name}`", png))
    return drawn


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
    out = ["At the paper's own parameters (the `paper` profile, in pieces; judged by the same protocol):", ""]
    for (piece, sweep, machine), g in ran.groupby(["piece", "sweep", "machine"], sort=False):
        claims = "; ".join(f"**{r.id}** {_gist(protocol.claim(r.id)['sentence'])}: {r.verdict}" for r in g.itertuples())
        out.append(f"* piece `{piece}` (`{sweep}`, {machine}): {claims}.")
    if missing:
        out += ["", "Still to run: " + ", ".join(f"`{m}`" for m in missing) + f" ({how})."]
    return "\n".join(out)
