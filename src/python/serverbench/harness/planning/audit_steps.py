"""The audit's steps, generated from spec/cli.json's knobs (docs/spec.md "The paper variant").

For one benchmark and language the audit runs: ``fair`` (every knob fair), ``paper`` (every
knob at the original's value) and, for every knob the language has, one ``mixed`` step with
only that knob at its paper value. Knobs whose paper value equals the fair one for this
language (e.g. Go throughput's ``send``: the original copies too) give no step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from serverbench import contract
from serverbench.rawdata.columns import Col


@dataclass(frozen=True)
class Knob:
    flag: str
    param: str
    fair: str
    paper: str  # for one language
    doc: str


@dataclass(frozen=True)
class Step:
    name: str  # "fair", "paper" or the knob's param
    variant: str
    knobs: dict = field(default_factory=dict)  # param -> value passed on the command line


def paper_value(knob: Mapping, lang: str) -> str | None:
    p = knob[Col.paper]
    return p.get(lang) if isinstance(p, dict) else p


def knobs(bench: str, lang: str) -> list[Knob]:
    """The knobs `lang` has for `bench`, in cli.json order."""
    out = []
    for flag, f in contract.flags(bench).items():
        k = f.knob
        if not k or lang not in k[Col.languages] or f.param is None:
            continue
        out.append(Knob(flag, f.param, k[Col.fair], paper_value(k, lang), k.get("doc", "")))
    return out


def steps(bench: str, lang: str) -> list[Step]:
    """fair, paper, then one single-knob step per knob that differs from fair."""
    out = [Step("fair", "fair"), Step("paper", "paper")]
    for k in knobs(bench, lang):
        # send's fair value "payload" means --payload copy (its default): a paper "copy" is no change
        same = k.paper == k.fair or (k.param == "send" and k.paper == "copy")
        if k.paper is not None and not same:
            out.append(Step(k.param, "mixed", {k.param: k.paper}))
    return out


def step_of(variant: str, knob_values: dict | None, bench: str, lang: str) -> str:
    """The step name of a record: its variant, or the one knob a mixed record set."""
    if variant != "mixed":
        return variant
    changed = [k.param for k in knobs(bench, lang) if (knob_values or {}).get(k.param, k.fair) != k.fair]
    return changed[0] if len(changed) == 1 else "+".join(sorted(changed)) or "fair"
