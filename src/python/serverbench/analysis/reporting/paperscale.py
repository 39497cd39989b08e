"""The paper at its own scale: the verdicts of the committed sweeps of the `paper` profile's
pieces (harness/planning/pieces.py), for the report's first section and beside the quick verdicts.
(Kept whole past ~350 lines: the section, its figures and its README lines read the same sweeps.)

Each piece is a sweep of its own (`paper-<piece>-<time>`, processed under data/processed),
and a piece may have several. Every sweep counts (protocol 2, section 5): each is named with
its own verdict, and a claim's verdict at the paper's scale combines every sweep of every
piece that runs its benchmark (its `needs.table`; spawn_max belongs to the spawn piece),
analysis/claims/scale.py: the deciding ratios over sweeps with a between-sweep interval, the
throughput claims over the union of their core counts' pieces. With one sweep in a piece
the between-sweep component is unknown, and the table says so. Its "sweeps agreeing" counts
each sweep judged again by the protocol in force (rejudge.py), and its deciding ratio is one
that gives the verdict (verdictrule.py). The figures are drawn from each piece's newest sweep.
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from serverbench import catalog, paths
from serverbench.analysis.claims import engine, scale
from serverbench.analysis.claims.replication import quote
from serverbench.analysis.plotting import figures
from serverbench.analysis.reading import cache, process, registry
from serverbench.analysis.reporting import atscale, rejudge, verdictrule
from serverbench.rawdata.columns import Col

PROFILE = "paper"
NOT_RUN = "not run yet"


def _piece_of(sweep_id: str, names: list[str]) -> str | None:
    """The piece a sweep id names (`paper-<piece>-<YYYYmmddTHHMMSSZ>`), longest name first."""
    m = re.fullmatch(rf"{PROFILE}-(.+)-\d{{8}}T\d{{6}}Z", sweep_id)
    if not m:
        return None
    return next((n for n in sorted(names, key=len, reverse=True) if m.group(1) == n), None)


def all_sweeps(processed_dir: Path | None = None) -> dict[str, list[Path]]:
    """{piece: every processed sweep of it with verdicts, oldest first}."""
    from serverbench.harness.planning.pieces import pieces

    names = list(pieces(PROFILE))
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    found: dict[str, list[Path]] = {}
    for f in sorted(root.glob(f"{PROFILE}-*/claims.csv")):  # sorted by name: the time stamp
        piece = _piece_of(f.parent.name, names)
        if piece:
            found.setdefault(piece, []).append(f.parent)
    return found


def latest(processed_dir: Path | None = None) -> dict[str, Path]:
    """{piece: its newest processed sweep}: what a figure draws (one sweep per panel)."""
    return {piece: folders[-1] for piece, folders in all_sweeps(processed_dir).items()}


def at_scale(processed_dir: Path | None = None, version: int | None = None) -> list[scale.ClaimAtScale]:
    """Every claim that a piece with a committed sweep judges, combined over all its sweeps:
    by `version`'s rule when given, else each claim's standing verdict (atscale.Both)."""
    by_piece = all_sweeps(processed_dir)
    if version is not None:
        return atscale.combined(by_piece, version)[0]
    return [b.standing for b in atscale.both(by_piece)[0]]


def verdicts(processed_dir: Path | None = None) -> pd.DataFrame:
    """One row per (claim, piece that runs its benchmark, sweep of it): id, piece, sweep,
    machine, protocol, verdict (NOT_RUN, with no sweep, for a piece without a committed sweep)."""
    from serverbench.harness.planning.pieces import pieces

    by_piece = all_sweeps(processed_dir)
    rows: list[dict] = []
    every_piece = pieces(PROFILE).values()  # read once: each read parses and checks the profile
    for claim in engine.all_claims():
        for p in every_piece:
            if claim.needs.table not in p.benchmarks:
                continue
            folders = by_piece.get(p.name, [])
            if not folders:
                rows.append(
                    {
                        "id": claim.id,
                        "piece": p.name,
                        "sweep": None,
                        "machine": None,
                        "protocol": None,
                        "verdict": NOT_RUN,
                    }
                )
            for folder in folders:
                s = atscale.sweep_verdict(p.name, folder, claim.id)
                rows.append(
                    {
                        "id": claim.id,
                        "piece": p.name,
                        "sweep": s.sweep,
                        "machine": s.machine,
                        "protocol": s.protocol,
                        "verdict": s.verdict,
                    }
                )
    return pd.DataFrame(rows, columns=["id", "piece", "sweep", "machine", "protocol", "verdict"])


def section(quick: dict[str, str], processed_dir: Path | None = None) -> str:
    """The report's first section: each claim's verdict at the paper's scale from every sweep
    of its pieces, how many sweeps agree, its deciding ratio with the between-sweep interval,
    beside this report's quick verdict; every sweep of each piece named. Or how to run the
    pieces when none is committed."""
    v = verdicts(processed_dir)
    ran = v[v[Col.verdict] != NOT_RUN]
    pieces_line = ", ".join(f"`{p}`" for p in dict.fromkeys(v["piece"]))
    if ran.empty:
        return (
            "No sweep of the `paper` profile is committed yet, so no claim has been judged at the paper's own "
            "scale on this machine: every verdict below is at the quick profile's reduced scale (the regime "
            f"column says where). The paper profile runs in pieces of one session each ({pieces_line}): "
            "`./run_all.sh --profile paper --piece NAME`."
        )
    claims_ = at_scale(processed_dir)
    short = {engine.NOT_TESTABLE: "not testable"}  # the first screen's word count is the reader's
    lines = [
        plain_summary(claims_, ran),
        "",
        "Each claim's verdict at the paper's parameters from every committed sweep of its pieces (by the protocol "
        "version whose verdict stands, below; docs/protocol.md section 5), how many of those sweeps agree with it, "
        "each judged "
        f"again by protocol {rejudge.version()} from its processed tables (their own verdicts are listed below), "
        "and the deciding comparison that gives the verdict, with its interval between sweeps and its result, "
        "beside this report's sweep:",
        "",
        "| claim | at the paper's scale | sweeps agreeing | deciding ratio | this sweep |",
        "|---|---|---|---|---|",
    ]
    for c in claims_:
        lines.append(
            f"| {c.id} | **{short.get(c.verdict, c.verdict)}** | {rejudge.agreement(c, processed_dir)} | "
            f"{verdictrule.cell(c)} | {quick.get(c.id, '–')} |"
        )
    again = rejudge.note(claims_, processed_dir)
    if again:
        lines += ["", again]
    lines += ["", *atscale.side_by_side(*atscale.both(all_sweeps(processed_dir)))]
    since = atscale.scale_rule_since()
    early = sorted(set(ran.loc[ran[Col.protocol] < since, "sweep"]))
    if early:
        before = sorted({int(v) for v in ran.loc[ran[Col.protocol] < since, "protocol"]})
        lines += [
            "",
            f"{len(early)} of these sweeps were recorded under protocol {', '.join(map(str, before))}, before the "
            f"rule that combines sweeps (protocol {since}) was frozen, and enter the verdicts above under rules "
            "frozen after they had been seen ([docs/protocol-deviations.md](docs/protocol-deviations.md)).",
        ]
    one = [p for p, g in ran.groupby("piece", sort=False) if g[Col.sweep].nunique() == 1]
    if one:
        lines += [
            "",
            "With one sweep in a piece (" + ", ".join(f"`{p}`" for p in one) + ") there is no interval between "
            "sweeps: the sweep-to-sweep component is unknown, the verdict is that sweep's own, and its interval "
            "is the one within the sweep, which leaves out the variation between sweeps.",
        ]
    lines += ["", "Every sweep of each piece (its own verdicts by the protocol version in force when it ran):", ""]
    for piece, g in ran.groupby("piece", sort=False):
        for sweep, gs in g.groupby("sweep", sort=False):
            version = gs[Col.protocol].dropna()
            judged = f"protocol {int(version.iloc[0])}" if len(version) else "protocol unknown"
            own = "; ".join(f"{r.id} {short.get(r.verdict, r.verdict)}" for r in gs.itertuples())
            lines.append(f"* `{piece}`: `{sweep}` ({gs[Col.machine].iloc[0]}; {judged}): {own}")
    waiting = v[v[Col.verdict] == NOT_RUN]
    if not waiting.empty:
        groups = waiting.groupby("piece", sort=False)[Col.id].apply(list)
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
        machines = [_machine(i) for i in infos]
        self.info = dict(infos[0])
        self.info[Col.tables] = sorted({t for i in infos for t in i.get(Col.tables) or []})
        self.info[Col.unrunnable_cores] = sorted(
            set.intersection(*(set(i.get(Col.unrunnable_cores) or []) for i in infos))
        )
        if len({key for key, _ in machines}) == 1:
            self.info[Col.sweep_id] = " and ".join(i.get(Col.sweep_id, "?") for i in infos)
        else:  # the caption says which machine ran which sweep, and that panels are not to be compared
            self.info[Col.sweep_id] = " and ".join(
                f"{i.get(Col.sweep_id, '?')} ({m})" for i, (_, m) in zip(infos, machines)
            )
            cpus = dict.fromkeys((i.get(Col.host) or {}).get(Col.cpu_model, "?") for i in infos)
            self.info[Col.host] = {**infos[0].get(Col.host, {}), "cpu_model": " / ".join(cpus)}
            self.info["machines_differ"] = True


def _machine(info: dict) -> tuple[str, str]:
    """(what tells machines apart, how a caption names it): the recorded fingerprint, CPU
    family/model and name where the sweep recorded them (two instances of "AMD EPYC" can be
    different CPUs), else the CPU name alone."""
    cpu = (info.get(Col.host) or {}).get(Col.cpu_model, "?")
    m = (info.get(Col.manifest) or {}).get(Col.machine) or {}
    model = (
        f" {m[Col.cpu_family]}/{m[Col.cpu_model_number]}"
        if m.get(Col.cpu_family) and m.get(Col.cpu_model_number)
        else ""
    )
    fp = m.get(Col.fingerprint)
    return (fp or cpu, f"{cpu}{model}" + (f", machine {fp[:8]}" if fp else ""))


def draw_figures(
    out_dir: Path, show_reference: bool = True, processed_dir: Path | None = None
) -> list[tuple[str, Path]]:
    """The paper's figures (3-5) from the pieces' newest sweeps: each drawn once, from every
    piece whose benchmarks hold one of its tables (Fig. 5's panels from the two core counts'
    pieces, each panel from one piece), saved as `paper-<figure>.png/.pdf` in out_dir (the
    earlier `paper-*` files there are this function's own and are replaced). Returns
    [(caption, png)]; [] when no piece is committed."""
    out_dir = Path(out_dir)
    for old in out_dir.glob("paper-*.*"):
        if old.suffix in (".png", ".pdf"):
            old.unlink()
    folders = latest(processed_dir)
    # the same committed pieces on every render: the drawn files are kept (reading/cache.py)
    inputs = [("show_reference", str(bool(show_reference)).encode())]
    for piece, folder in sorted(folders.items()):
        inputs += cache.folder_inputs(folder, f"{piece}/{folder.name}")
    inputs += cache.folder_inputs(paths.reference_dir(), "reference")
    drawn = cache.files("paper-figures", inputs, lambda d: _draw(folders, d, show_reference), out_dir)
    return [(caption, out_dir / name) for caption, name in drawn]


def _draw(folders: dict[str, Path], out_dir: Path, show_reference: bool) -> list[list[str]]:
    import matplotlib.pyplot as plt

    from serverbench.harness.planning.pieces import pieces

    spec_of = pieces(PROFILE)
    views = {piece: process.Processed(folder) for piece, folder in folders.items()}
    drawn = []
    for spec in registry.figures():
        if spec.name not in catalog.figure_names().values():  # Figs. 3-5; the others are beyond the paper
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
        drawn.append([f"{spec.title}: {where}", png.name])
    return drawn


def plain_summary(claims_: list[scale.ClaimAtScale], ran: pd.DataFrame | None = None) -> str:
    """One sentence a reader takes in at once: how many of the claims judged at the paper's
    parameters hold, do not hold, are undecided or cannot be tested on this machine, each
    from every sweep of its pieces (a throughput claim once, over its core counts' pieces)."""
    # (plural, singular) of each group, in the order the sentence gives them
    forms = {
        "hold": ("hold", "holds"),
        "not": ("do not hold", "does not hold"),
        "open": ("are undecided", "is undecided"),
        "differ": ("differ between sweeps", "differs between sweeps"),
        "untestable": ("cannot be tested on a machine this size", "cannot be tested on a machine this size"),
        "error": ("could not be judged", "could not be judged"),  # the check itself failed: the table says why
    }
    kinds = {
        engine.SUPPORTED: "hold",
        engine.CONTRADICTED: "not",
        engine.NOT_TESTABLE: "untestable",
        engine.ERROR: "error",
        scale.DIFFER: "differ",
    }
    groups: dict[str, list[str]] = {k: [] for k in forms}
    for c in claims_:
        groups[kinds.get(c.verdict, "open")].append(c.id)
    parts = [f"{len(ids)} {forms[k][len(ids) == 1]} ({', '.join(ids)})" for k, ids in groups.items() if ids]
    machines = "; ".join(sorted({s.machine for c in claims_ for s in c.sweeps if s.machine})) or "unknown machine"
    n_sweeps = len({s.sweep for c in claims_ for s in c.sweeps})
    return (
        f"At the paper's own parameters ({machines}; {n_sweeps} sweep{'s' * (n_sweeps != 1)}), of the "
        f"{len(claims_)} claims judged, "
        + ", ".join(parts[:-1])
        + (" and " if len(parts) > 1 else "")
        + parts[-1]
        + "."
    )


def readme_lines(processed_dir: Path | None = None) -> str:
    """README's statement of what has been judged at the paper's own scale (a generated block):
    each claim's verdict from every sweep of its pieces, with how many sweeps agree, each
    piece's sweeps, and the pieces still to run."""
    v = verdicts(processed_dir)
    ran = v[v[Col.verdict] != NOT_RUN]
    missing = sorted(set(v.loc[v[Col.verdict] == NOT_RUN, "piece"]))
    how = "`./run_all.sh --profile paper --piece NAME`, one session on one machine each"
    if ran.empty:
        return f"No piece of the `paper` profile (the paper's own parameters) is committed yet ({how})."
    pairs, _ = atscale.both(all_sweeps(processed_dir))
    claims_ = [b.standing for b in pairs]
    out = [
        plain_summary(claims_, ran),
        "",
        "Each claim from every sweep of its pieces (combined by the version whose verdict stands, docs/protocol.md "
        "section 5; sweeps agreeing: each "
        f"sweep judged again by protocol {rejudge.version()} from its processed tables; beside it, the newest "
        "version's verdict where it does not stand yet):",
        "",
    ]
    for b in pairs:
        c = b.standing
        pieces_ = ", ".join(dict.fromkeys(s.piece for s in c.sweeps))
        one = "; one sweep per piece: between-sweep spread unknown" if c.one_sweep_only or len(c.sweeps) == 1 else ""
        newer = "" if c is b.newest else f"; protocol {b.newest.version}, exploratory: {b.newest.verdict}"
        out.append(
            f"* {quote(c.id)}: {c.verdict} (protocol {c.version}){newer}; sweeps agreeing: "
            f"{rejudge.agreement(c, processed_dir)} ({pieces_}{one})."
        )
    out += [
        "",
        "Sweeps: " + "; ".join(f"`{r.sweep}` ({r.machine})" for r in ran.drop_duplicates("sweep").itertuples()) + ".",
    ]
    if missing:
        out += ["", "Still to run: " + ", ".join(f"`{m}`" for m in missing) + f" ({how})."]
    return "\n".join(out)
