"""Report section "The conclusions on 2026 runtimes": each of the paper's claims
(C1-C12) decided with the paper's runtimes and again with each 2026 runtime in its
counterpart's place, side by side, from the same sweep (the `runtimes` profile runs them
beside each other), and one sentence per claim naming the runtime change that moves it.

A substitution is a view of the sweep in which the 2026 runtime's rows take its
counterpart's language name (and the counterpart's own rows are left out), so the claim
code, statistics and decision regions are exactly the paper's; nothing else changes.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from serverbench.analysis.claims import engine
from serverbench.analysis.claims.options import Options
from serverbench.analysis.reading import registry
from serverbench.analysis.reading.process import LANGUAGE_LABELS
from serverbench.rawdata.columns import Col

# (the paper's language, the 2026 runtime that takes its place, what the column says)
SUBSTITUTES = (
    ("go", "go[gc=nogreentea]", "Go 1.26 without Green Tea"),
    ("go", "rust_tokio", "Rust/tokio for Go"),
    ("go", "java_vthreads", "Java virtual threads for Go"),
    ("scala_akka", "scala_akka24", "Akka 2.4.12 (the paper's)"),
    ("scala_akka", "scala_pekko", "Pekko, JDK 17"),
    ("scala_akka", "scala_pekko_jdk25", "Pekko, JDK 25"),
    ("scala_akka", "scala_pekko_jdk25_compact", "Pekko, JDK 25, compact headers"),
)


class Substituted:
    """The processed sweep with `new` in `role`'s place (the interface the claims read)."""

    def __init__(self, P: Any, role: str, new: str):
        self._P, self.role, self.new = P, role, new
        self.info, self.folder = P.info, P.folder
        self.runs = self._swap(P.runs)
        self.spawn_max_limits = self._swap(P.spawn_max_limits)

    def _swap(self, d: pd.DataFrame) -> pd.DataFrame:
        if d is None or d.empty or Col.language not in d.columns:
            return d
        d = d[d[Col.language] != self.role].copy()
        d.loc[d[Col.language] == self.new, "language"] = self.role
        return d

    def values(self, table: str, metric: str) -> pd.DataFrame:
        return self._swap(self._P.values(table, metric))


def languages_in(P: Any) -> set[str]:
    r = P.runs
    return set(r[Col.language].dropna().unique()) if r is not None and not r.empty else set()


def table(P: Any, options: Options | None = None) -> pd.DataFrame:
    """One row per paper claim: the verdict with the paper's runtimes, then one column per
    2026 runtime this sweep ran, and the runtime changes that move the verdict."""
    have = languages_in(P)
    subs = [s for s in SUBSTITUTES if s[1] in have]
    opts = Options.coerce(options)
    paper_claims = [c for c in engine.all_claims() if c.id.startswith("C")]
    base = {c.id: engine.evaluate(c, P, opts).verdict for c in paper_claims}
    cols = {}
    for role, new, name in subs:
        view = Substituted(P, role, new)
        cols[name] = {c.id: engine.evaluate(c, view, opts).verdict for c in paper_claims}
    rows = []
    for c in paper_claims:
        row = {"claim": c.id, "sentence": c.sentence, "the paper's runtimes (this sweep)": base[c.id]}
        moves = []
        for name, v in cols.items():
            row[name] = v[c.id]
            if v[c.id] != base[c.id]:
                moves.append(f"{name}: {base[c.id]} -> {v[c.id]}")
        row["moved by"] = "; ".join(moves) if moves else "no runtime change moves it"
        rows.append(row)
    return pd.DataFrame(rows)


PROFILE = "runtimes"
RUNTIMES = "Go 1.26 without Green Tea, Pekko on JDK 17/25, Java virtual threads, Rust/tokio, Akka 2.4.12"


def committed_text(paper=None) -> str:
    """The section of a sweep without 2026 runtimes (the main report): the committed report of
    the newest `runtimes` sweep, linked relative to the main report's folder; how to run one
    only when none is committed (never 'ran none' while a committed sweep ran them)."""
    from serverbench.analysis.reporting import reportinfo

    run = (
        f"`./run_all.sh --profile {PROFILE}` runs the configurations that decide the paper's claims with each "
        "2026 runtime beside its 2018 counterpart"
    )
    found = reportinfo.report_of_profile(PROFILE, paper)
    if found is None:
        return (
            f"The 2026 runtimes ({RUNTIMES}) are the `{PROFILE}` profile's question, and no sweep of it is "
            f"committed yet: {run}; its report decides, claim by claim, the verdict with the paper's runtimes and "
            "with each 2026 runtime in its counterpart's place. Erlang stays at OTP 25, the newest this machine "
            "can install."
        )
    sweep, html = found
    link = reportinfo.link_from_main(html, paper)
    return (
        f"The 2026 runtimes ({RUNTIMES}) are the `{PROFILE}` profile's question: the newest committed sweep of "
        f"it, `{sweep}`, decides each of the paper's claims with the paper's runtimes and with each 2026 runtime "
        f"in its counterpart's place, in its report, [{link}]({link}). {run}. Erlang stays at OTP 25, the newest "
        "this machine can install."
    )


@registry.report_section("The conclusions on 2026 runtimes", order=80)
def runtimes_section(P) -> list:
    have = languages_in(P)
    present = [f"{LANGUAGE_LABELS.get(new, new)}" for _, new, _ in SUBSTITUTES if new in have]
    if not present:
        return [committed_text()]
    t = table(P)
    return [
        "Each of the paper's claims decided twice from this sweep: with the paper's runtimes, and with "
        "each 2026 runtime in its counterpart's place (its runs take the counterpart's name; the claim "
        "code, statistics and decision regions are unchanged). Runtimes in this sweep: "
        + ", ".join(present)
        + ". Erlang stays at OTP 25, the newest this machine can install. A verdict that differs names the "
        "change that moves it; every number behind each verdict is in the claims' evidence, computed the "
        "same way.",
        t,
    ]
