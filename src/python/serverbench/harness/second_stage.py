"""A profile's [second_stage] table (docs/statistics.md, "The second stage"): after the
profile's own trials, extra rounds for the comparisons whose interval still touches a
decision boundary. The rule is fixed before the sweep: its share of the first stage's
measured time, a deadline for both stages together (on a slower machine stage 1 leaves
less, so the profile's wall-time target holds), and the rounds each chosen comparison
group gets (serverbench.stages runs it)."""

from __future__ import annotations

from serverbench.harness.values import ProfileError, bool_value, int_value

DEFAULTS = {"enabled": True, "budget_fraction": 0.1, "deadline_s": None, "rounds": 3}
OVERHEAD_S = 0.15  # harness time per run beside the run's own wall time (the stage's cost estimate)


def budget_s(settings: dict, stage1_s: float) -> float:
    """The second stage's budget: budget_fraction of stage 1's measured time, and no more
    than what stage 1 left of deadline_s (none: no cap)."""
    budget = settings["budget_fraction"] * stage1_s
    if settings.get("deadline_s") is not None:
        budget = min(budget, max(0.0, settings["deadline_s"] - stage1_s))
    return budget


def resolve(table, source: str) -> dict:
    """The resolved [second_stage] table of a profile (absent: disabled); bad keys or values
    raise ProfileError naming them."""
    if table is None:
        return {**DEFAULTS, "enabled": False}
    if not isinstance(table, dict):
        raise ProfileError(f"{source}: second_stage must be a table")
    for k in table:
        if k not in DEFAULTS:
            raise ProfileError(f"{source}: unknown key second_stage.{k}; known: {', '.join(sorted(DEFAULTS))}")
    out = {**DEFAULTS, **table}
    out["enabled"] = bool_value(out["enabled"], "second_stage.enabled")
    frac = out["budget_fraction"]
    if isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1:
        raise ProfileError(f"{source}: second_stage.budget_fraction must be a number in (0, 1], not {frac!r}")
    out["budget_fraction"] = float(frac)
    dl = out["deadline_s"]
    if dl is not None and (isinstance(dl, bool) or not isinstance(dl, (int, float)) or not dl > 0):
        raise ProfileError(f"{source}: second_stage.deadline_s must be a positive number of seconds, not {dl!r}")
    out["deadline_s"] = None if dl is None else float(dl)
    out["rounds"] = int_value(out["rounds"], "second_stage.rounds", minimum=1)
    return out
