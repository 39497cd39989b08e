"""Report section: "Does the paper's advice hold for a whole server?" (the IM case study,
docs/im.md). One table puts each of the paper's four recommendations beside the
micro-benchmark claims that decide it and the case-study claim that asks it of a whole
server (IM5, ref. [4]'s chaos, its own row), with ngircd's and InspIRCd's numbers beside
ours; then the numbers per server, the figures, and the frozen protocol that judged them.
Every number comes from this sweep's raw logs (benchmarks/im/tables.py); every verdict is
the one the report's claims table gives (the sweep's claims.csv), a micro-benchmark claim
this sweep could not test taken from the committed `paper` pieces at the paper's scale."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from serverbench import paths, protocol
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.benchmarks import im
from serverbench.benchmarks.im import design as design5
from serverbench.benchmarks.im import report_v5
from serverbench.benchmarks.im import tables as T
from serverbench.benchmarks.im.columns import Col
from serverbench.benchmarks.im.report_numbers import _numbers, per_server

TITLE = im.TITLE
RUN = "./run_all.sh --profile im"
NO_SWEEP = (
    f"This sweep ran no IM case study, so the paper's advice is not yet asked of a whole server here (`{RUN}` runs it)."
)
INTRO = """\
The paper turns its micro-benchmarks into four recommendations for engineering servers and
names an instant-messaging server as the test they need (Sec. 5, ref. [4]). Here each
language's IRC-subset server (docs/im.md: a process per connection, a chat-session process
per conversation, a process per channel, under supervision) takes the same load from one
open-loop generator, pinned to its own CPU, over loopback; ngIRCd (C) and InspIRCd (C++)
take the same load as production anchors, with the socket options they ship with: neither
sets TCP_NODELAY, so Nagle's algorithm is on in both, while every server of ours turns it
off (docs/im.md){nodelay}. The predictions {first}-{last} were registered before
any IM data, in protocol {registered}; protocol {version} (sha256 `{sha}`) judges this sweep."""


@dataclass(frozen=True)
class Advice:
    """One of the paper's recommendations, the claims that decide it in the micro-benchmarks
    and the case-study claim that asks it of a whole server."""

    words: str
    micro: tuple[str, ...]
    case: str


ADVICE = (
    Advice("latency: Go and Erlang", ("C1", "C2"), "IM1"),
    Advice("dormant processes: Scala/Akka", ("C3",), "IM2"),
    Advice("spawning: Erlang and Go", ("C4", "C4b"), "IM3"),
    Advice("throughput: Go", ("C6",), "IM4"),
    Advice("chaos costs Erlang no throughput, loses no message (ref. [4])", (), "IM5"),
)


def _label(s: str) -> str:
    return LANGUAGE_LABELS.get(s, s)


def _word(v) -> str:
    from serverbench.analysis.reporting import vocabulary

    return vocabulary.word(str(v)) if isinstance(v, str) and v else "not judged"


def sweep_verdicts(P) -> dict[str, str]:
    """{claim: verdict} of this sweep, from the claims table the report computed (claims.csv
    beside the processed tables); judged here only when that file is absent."""
    f = Path(P.folder) / "claims.csv"
    if f.exists():
        t = pd.read_csv(f)
        return {str(i): str(v) for i, v in zip(t[Col.id], t[Col.verdict])}
    from serverbench.analysis.claims import check_all

    ids = {a.case for a in ADVICE} | {m for a in ADVICE for m in a.micro}
    return {v.id: v.verdict for v in check_all(P, ids=ids)}


def paper_scale_verdicts() -> dict[str, str]:
    """{claim: its verdict over the committed `paper` pieces} (reporting.paperscale)."""
    from serverbench.analysis.reporting import paperscale

    try:
        return {c.id: c.verdict for c in paperscale.at_scale()}
    except (OSError, ValueError, KeyError):
        return {}


def _micro(ids, here: dict[str, str], paper: dict[str, str]) -> str:
    if not ids:
        return "no micro-benchmark (the paper's ref. [4])"
    parts = []
    for cid in ids:
        v = here.get(cid)
        if v is not None and not v.startswith("not testable"):
            parts.append(f"{cid} {_word(v)} (this sweep)")
        elif cid in paper:
            parts.append(f"{cid} {_word(paper[cid])} (paper scale)")
        else:
            parts.append(f"{cid} not judged yet")
    return "; ".join(parts)


def advice_table(P, t: pd.DataFrame) -> pd.DataFrame:
    here, paper = sweep_verdicts(P), paper_scale_verdicts()
    ours = [s for s in ("go", "erlang", "scala_akka")]
    rows = []
    for a in ADVICE:
        nums = _numbers(t, a.case, [*ours, *T.production()])
        rows.append(
            {
                "recommendation": a.words,
                "micro-benchmark verdict": _micro(a.micro, here, paper),
                "case-study verdict": f"{a.case} {_word(here.get(a.case))}",
                "Go / Erlang / Scala/Akka": " / ".join(nums[: len(ours)]),
                **{_label(s): v for s, v in zip(T.production(), nums[len(ours) :])},
            }
        )
    return pd.DataFrame(rows)


@registry.report_section(TITLE, order=75)
def section(P) -> list:
    if T.all_runs(P).empty and T.all_runs(P, T.SEARCH_TABLE).empty:
        return committed_section()
    v = protocol.version_for(P.info.get(Col.first_started_utc))
    t = per_server(P)
    prod = ", ".join(_label(s) for s in T.production())
    intro = INTRO.format(
        first=ADVICE[0].case,
        last=ADVICE[-1].case,
        registered=registered_in(ADVICE[0].case),
        version=v,
        sha=protocol.sha256(v)[:16],
        nodelay=f"; protocol {design5.VERSION} runs both a second time with TCP_NODELAY on their accepted "
        "sockets, rows of their own"
        if design5.is_v5(P)
        else "",
    )
    if t.empty:  # a figure-only piece (fan-out): no part of it judges a prediction or fills a server's row
        return [intro, "This sweep ran no part that judges a prediction; its parts follow."] + (
            report_v5.blocks(P) if design5.is_v5(P) else []
        )
    return [
        intro,
        "Each recommendation, the micro-benchmark claims that decide it and the case-study claim that asks it "
        "of a whole server (the claims table has their reasons and intervals); the last columns are the "
        "servers' numbers (median of rounds; IM2, where the sweep ran its memory-cap search: the idle clients "
        "held within the cap, one search per server; IM4: the sustainable rate at the SLO from the one rate search):",
        advice_table(P, t),
        registry.FigureRef("fig_im_latency"),
        "The numbers per server (medians of rounds; a run the generator limited is never a server's result; "
        f"'at least' marks a rate the search did not establish). {t.attrs['where']}:",
        t.round(4),
        registry.FigureRef("fig_im_capacity"),
        registry.FigureRef("fig_im_fanout_chaos"),
        _chaos_words(P, prod),
    ] + (report_v5.blocks(P) if design5.is_v5(P) else [])


def _chaos_words(P, prod: str) -> str:
    """What chaos kills in this sweep's design, and what the numbers table's chaos columns are."""
    if not design5.is_v5(P):
        return (
            "**Chaos.** A chat-session process is killed every interval and restarted by its supervisor, as RD-IM's "
            f"rhesus does; the messages in its mailbox are lost and counted. {prod} have no session processes, so "
            "nothing of theirs can be killed: they have no chaos rows (a design choice, shown, not hidden)."
        )
    c = design5.im()["chaos"]
    return (
        f"**Chaos.** As RD-IM's rhesus does, any IM process (a connection, a chat session or a channel) is killed "
        f"at random; a session or channel restarts under its supervisor with an empty mailbox, a killed connection "
        f"is a client gone. chaos_kept is the sustainable rate with chaos at {c['search_kills_per_s']:g} kills/s "
        f"over the rate without; chaos_lost is what IM5(b) judges: the messages lost when {c['loss_target']} "
        f"processes are killed at {c['queued_control_kills_per_s']:g}/s (the IM5 table below has the loss per kill "
        f"of any process and the positive control). {prod} have no session processes, so they have no chaos rows "
        "(a design choice, shown, not hidden)."
    )


# ---------------------------------------------------------------- README's block (docsgen: readme-im)

PROFILE = "im"  # its report opens with this section (DECLARED.subject), not with the paper pieces' warm-up


def committed_sweeps(processed_dir: Path | None = None) -> list[Path]:
    """The processed sweeps of the `im` profile with a claims table, oldest first (by the time
    that ends a sweep's id: a piece's name, im-rate- or im-storm-, says nothing of its age)."""
    import json

    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    out = []

    def age(info: Path) -> tuple[str, str]:  # an id without a time (a test's) counts as the oldest
        found = re.search(r"\d{8}T\d{6}Z", info.parent.name)
        return (found.group(0) if found else "", info.parent.name)

    for info in sorted(root.glob("*/sweep.json"), key=age):
        try:
            prof = json.loads(info.read_text(encoding="utf-8")).get(Col.profile)
        except (OSError, ValueError):
            continue
        if prof == PROFILE and (info.parent / "claims.csv").exists():
            out.append(info.parent)
    return out


def picked(processed_dir: Path | None = None) -> dict[str, tuple[str, str, int | None]]:
    """Each IM prediction's verdict in the newest committed IM sweep that could judge it,
    among the sweeps of the newest protocol version that asked it: {id: (sweep id, verdict,
    protocol version)}. A piece (rate, storm, fanout) judges only its own predictions, so the
    newest sweep alone would show the others 'not testable'; a newer version's design
    supersedes an older one's (protocol 5's chaos can lose messages, protocol 3's could not),
    so an older version's verdict never stands in for a newer one that could not judge."""
    ids = [c for c in protocol.claim_ids() if c.startswith("IM")]
    root = Path(processed_dir) if processed_dir else paths.processed_dir()
    tables = [
        (d.name, pd.read_csv(d / "claims.csv").set_index("id")) for d in reversed(committed_sweeps(processed_dir))
    ]

    def version(t: pd.DataFrame, c: str) -> int | None:
        v = t.loc[c, "protocol"] if Col.protocol in t.columns else None
        return int(v) if v is not None and pd.notna(v) else None

    out = {}
    for c in ids:
        having = [(n, t) for n, t in tables if c in t.index]
        newest = max((version(t, c) or 0 for _, t in having), default=0)
        having = [(n, t) for n, t in having if (version(t, c) or 0) == newest]
        judged = [(n, t) for n, t in having if not _word(t.loc[c, "verdict"]).startswith("not testable")]
        ran = [(n, t) for n, t in having if _ran(root / n, c)]  # not testable where it ran: say where
        if judged or ran or having:
            name, t = (judged or ran or having)[0]
            out[c] = (name, _word(t.loc[c, "verdict"]), version(t, c))
    return out


# the part of a sweep that judges each prediction: the runs of a table ("im") or of a search
# (benchmarks/im/search.py's names; every search's table is im_rate); a piece that ran none of
# it says nothing of the prediction
PARTS = {
    "IM1": ("table", "im"),
    "IM2": ("search_name", "im_memory"),
    "IM3": ("table", "im"),
    "IM4": ("search_name", "im_rate"),
    "IM5": ("search_name", "im_chaos_loss"),
}


def _ran(processed: Path, claim: str) -> bool:
    """Whether a processed sweep holds runs of the part that judges the claim (PARTS)."""
    runs = processed / "runs.csv"
    if claim not in PARTS or not runs.exists():
        return False
    column, value = PARTS[claim]
    t = pd.read_csv(runs, usecols=lambda c: c == column, dtype=str)
    return column in t.columns and value in set(t[column].dropna())


def committed_section(processed_dir: Path | None = None) -> list:
    """The section in the report of a sweep without IM runs (the main report): each
    prediction's verdict from the newest committed IM sweep that could judge it (picked()),
    with that sweep's report linked relative to the main report's folder; NO_SWEEP only when
    no IM sweep is committed."""
    from serverbench.analysis.reporting import reportinfo

    chosen = picked(processed_dir)
    if not chosen:
        return [NO_SWEEP]

    def report(name: str) -> str:
        html = reportinfo.report_of(name)
        link = reportinfo.link_from_main(html) if html else None
        if link:
            return f"`{name}`: [{link}]({link})"
        render = f"python -m serverbench notebooks --no-run --profile {PROFILE} --sweep-id {name}"
        return f"`{name}`: not rendered yet (`{render}`)"

    table = pd.DataFrame(
        [
            {
                "claim": c,
                "prediction": protocol.claim(c)["sentence"].rstrip("."),
                "verdict": verdict,
                "sweep": name,
                "protocol": version,
            }
            for c, (name, verdict, version) in chosen.items()
        ]
    )
    reports = "; ".join(report(n) for n in dict.fromkeys(n for n, _, _ in chosen.values()))
    return [
        f"The paper's advice asked of a whole server is the `{PROFILE}` profile's case study (docs/im.md), run "
        "whole or in pieces (a piece runs some of its parts). Each prediction's verdict below is that of the newest "
        "committed IM sweep that could judge it; each sweep's report has the servers' numbers, the figures and the "
        f"verdict's evidence ({reports}).",
        table,
    ]


def registered_in(cid: str) -> int:
    """The first protocol version that has claim cid."""
    for v in protocol.versions():
        with protocol.in_force(v):
            if cid in protocol.claim_ids():
                return v
    raise KeyError(f"no protocol version has claim {cid}")


def readme_block(processed_dir: Path | None = None) -> str:
    """What the case study is and how to run it, its predictions in the protocol's words,
    and the newest committed IM sweep's verdicts (none before one is committed)."""
    ids = [c for c in protocol.claim_ids() if c.startswith("IM")]
    claims_list = "\n".join(f"* **{c}** \u201c{protocol.claim(c)['sentence'].rstrip('.')}\u201d" for c in ids)
    chosen = picked(processed_dir)
    if chosen:
        from serverbench.analysis.reporting import reportinfo

        def link(name: str) -> str:
            html = reportinfo.report_of(name)
            where = html.relative_to(paths.paper_dir().parent).as_posix() if html else None  # from README's folder
            return f"[`{name}`]({where})" if where else f"`{name}`"

        found = "; ".join(
            f"{c} {v} ({link(n)}{'' if p is None else f', protocol {p}'})" for c, (n, v, p) in chosen.items()
        )
        result = f"Each prediction's verdict in the newest committed IM sweep that could judge it: {found}."
    else:
        result = "No IM sweep is committed yet, so these predictions have no verdict here."
    return (
        "**The case study (benchmark `im`, [docs/im.md](docs/im.md)).** The paper ends by proposing an "
        "instant-messaging server as the test its advice needs (Sec. 5, ref. [4]). Each language's server speaks "
        "a subset of IRC, so ngIRCd and InspIRCd take the same load from the same open-loop generator as "
        "production anchors. The paper's four recommendations and ref. [4]'s chaos result are predictions "
        f"registered in protocol {registered_in(ids[0])} before any IM data:\n\n{claims_list}\n\n"
        f"Run it with `{RUN}` (one sweep; notebooks/im.ipynb and the report's section \u201c{TITLE}\u201d "
        f"analyse it). {result}"
    )
