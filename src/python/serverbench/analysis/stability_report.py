"""Report section "Stability of the verdicts": when the reported sweep is one repeat of a
`python -m serverbench stability` run (`<prefix>-r1`, `-r2`, ... side by side under the
same raw folder), every repeat's verdicts are recomputed from its own raw log and shown
claim by claim, with whether they agree (docs/statistics.md, "Stability")."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from serverbench import paths
from serverbench.analysis import registry
from serverbench.harness import fingerprint

REPEAT = re.compile(r"^(?P<prefix>.+)-r(?P<k>\d+)$")


def repeats_of(sweep_dir: Path) -> list[Path]:
    """The raw folders of every repeat of the stability run `sweep_dir` belongs to, in
    repeat order; [] when it is not a repeat or has no sibling with a raw log."""
    m = REPEAT.match(sweep_dir.name)
    if not m:
        return []
    found = []
    for d in sweep_dir.parent.glob(f"{glob_escape(m['prefix'])}-r*"):
        mm = REPEAT.match(d.name)
        if mm and mm["prefix"] == m["prefix"] and d.is_dir() and any(d.glob("runs*.jsonl")):
            found.append((int(mm["k"]), d))
    return [d for _, d in sorted(found)] if len(found) >= 2 else []


def glob_escape(s: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", s)


def agreement_table(dirs: list[Path], spawn_metric: str = "all_ready_s") -> pd.DataFrame:
    """One row per claim: its verdict in each repeat and whether they all agree."""
    from serverbench.analysis import verdicts_for_sweep

    verdicts = [verdicts_for_sweep(d, spawn_metric) for d in dirs]
    ids = list(dict.fromkeys(k for v in verdicts for k in v))
    rows = []
    for cid in ids:
        vs = [v.get(cid, "(missing)") for v in verdicts]
        rows.append(
            {"claim": cid, **{d.name: v for d, v in zip(dirs, vs)}, "agree": "yes" if len(set(vs)) == 1 else "NO"}
        )
    return pd.DataFrame(rows)


def _sweep_dir(P) -> Path:
    # sweep.json says data/raw/<id> (no machine path); the raw folder may be elsewhere
    # (SERVERBENCH_DATA), so look for <id> where this installation keeps raw logs
    d = Path(str(P.info.get("sweep_dir") or ""))
    return d if d.is_absolute() else paths.raw_dir() / d.name


def _manifest(d: Path) -> dict:
    from serverbench.records import read_manifest

    return read_manifest(d)


def _profile_name(man: dict) -> str | None:
    p = man.get("profile")
    return p.get("name") if isinstance(p, dict) else p


def newest_stability_run(raw_root: Path, profile: str | None) -> list[Path]:
    """The repeats of the newest stability run of `profile` under raw_root (by the first
    repeat's created_utc); [] when there is none."""
    groups: dict[str, list] = {}
    for d in Path(raw_root).glob("*-r*"):
        m = REPEAT.match(d.name)
        if m and d.is_dir() and any(d.glob("runs*.jsonl")):
            groups.setdefault(m["prefix"], []).append((int(m["k"]), d))
    best, best_key = [], ""
    for members in groups.values():
        dirs = [d for _, d in sorted(members)]
        man = _manifest(dirs[0])
        if len(dirs) >= 2 and _profile_name(man) == profile and str(man.get("created_utc", "")) >= best_key:
            best, best_key = dirs, str(man.get("created_utc", ""))
    return best


def _commit(d: Path) -> str:
    return str((_manifest(d).get("git") or {}).get("commit") or "?")[:7]


@registry.report_section("Stability of the verdicts", order=95)
def stability(P) -> list:
    here = _sweep_dir(P)
    dirs = repeats_of(here)
    if dirs:
        T = agreement_table(dirs)
        n = int((T["agree"] == "yes").sum())
        return [
            f"This sweep is one of {len(dirs)} independent repeats of a stability run "
            f"({', '.join(d.name for d in dirs)}: the same profile, each with its own seed and run "
            f"order). Each repeat's verdicts are recomputed here from its own raw log. "
            f"**{n} of {len(T)} claims get the same verdict in every repeat.** A claim whose effect "
            "lies near its decision boundary should come out *inconclusive* every time rather than flip. "
            + fingerprint.compare(dirs),
            T,
        ]
    how = (
        "`python -m serverbench stability --profile quick --repeats 2` runs the claim-deciding "
        "configurations as independent sweeps (`<prefix>-r1`, `-r2`, ...); docs/statistics.md "
        "gives the last measured result."
    )
    others = newest_stability_run(here.parent, P.info.get("profile"))
    if not others:
        return [f"This sweep is not one repeat of a stability run, and no stability run of its profile is here. {how}"]
    T = agreement_table(others)
    n = int((T["agree"] == "yes").sum())
    from serverbench.analysis import verdicts_for_sweep

    mine = verdicts_for_sweep(here)
    col = f"this sweep ({here.name})"
    T.insert(len(T.columns) - 1, col, [mine.get(c, "(missing)") for c in T["claim"]])
    repeat_cols = [d.name for d in others]
    T["this sweep agrees"] = ["yes" if all(r[c] == r[col] for c in repeat_cols) else "NO" for _, r in T.iterrows()]
    same = int((T["this sweep agrees"] == "yes").sum())
    commits = sorted({_commit(d) for d in others})
    return [
        f"This sweep is not one repeat of a stability run. The newest stability run of its profile "
        f"here is {', '.join(d.name for d in others)} (code {', '.join(commits)}; this sweep: code "
        f"{_commit(here)}). Every verdict below is recomputed from its sweep's own raw log: "
        f"{n} of {len(T)} claims agree across the repeats, and this sweep agrees with all of them "
        f"on {same}. A difference can come from the machine (another session's CPU, its load) or "
        f"from code changed between the commits. {fingerprint.compare([*others, here])} {how}",
        T,
    ]
