"""The labs' self-checks: an exercise, the judges of an answer, and the check that prints
`correct` or a hint, then sets the student's prediction beside the measurement.

An exercise computes its right answer from the runs (`solve`), so a check compares a
student with *their* measurements. A prediction is written before the measurement cells
run; after the answer is judged, the check says how far the prediction was from what was
measured, because the gap between the two is where a student's model of the machine was
wrong. common.py re-exports all of this for the lab modules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from math import floor, isfinite, log10
from typing import Any


@dataclass
class Exercise:
    key: str
    question: str
    solve: Callable[[Any], Any]  # data -> the right answer (from the measurements)
    judge: Callable[[Any, Any], tuple[bool, str]]  # (answer, truth) -> (correct?, hint)
    why: Callable[[Any, Any], str]  # (data, truth) -> the explanation shown with solutions
    solution: Callable[[Any], Any] | None = None  # truth -> the answer to show (default: truth itself)
    options: dict[str, str] | None = None  # a multiple-choice exercise: letter -> the option's text
    fixed: bool = False  # the answer does not depend on the runs (arithmetic, or a mechanism)


def within_factor(factor: float, unit: str = "") -> Callable[[Any, Any], tuple[bool, str]]:
    def judge(answer, truth):
        if not _number(answer) or answer <= 0:
            return False, f"answer with a positive number{(' in ' + unit) if unit else ''}, e.g. 12.5"
        if truth / factor <= answer <= truth * factor:
            return True, ""
        side = "too low" if answer < truth else "too high"
        return False, (
            f"{side} (more than {factor:g}x off the measurement); look again at the table above and recompute"
        )

    return judge


def within_abs(tol: float) -> Callable[[Any, Any], tuple[bool, str]]:
    def judge(answer, truth):
        if not _number(answer):
            return False, "answer with a number"
        if abs(answer - truth) <= tol:
            return True, ""
        return False, f"{'too low' if answer < truth else 'too high'} (off by more than {tol:g})"

    return judge


def one_of(options, hint: str | None = None) -> Callable[[Any, Any], tuple[bool, str]]:
    """A choice among options (a list, or a function giving it when an answer is judged, so
    that a module's exercises ask nothing of the spec at import); a wrong one gets `hint`
    (what to look at, never the answer)."""

    def judge(answer, truth):
        opts = [str(o).lower() for o in (options() if callable(options) else options)]
        a = str(answer).strip().lower()
        if a not in opts:
            return False, f"answer with one of: {', '.join(repr(o) for o in opts)}"
        good = {str(t).lower() for t in (truth if isinstance(truth, (set, list, tuple)) else [truth])}
        if a in good:
            return True, ""
        return False, hint or "not what the measurements say; compare the numbers again"

    return judge


def choice(key: str, question: str, options: dict[str, str], right: str, look_at: str, why: str) -> Exercise:
    """A 'why / which mechanism' exercise: the student answers with the letter of the
    mechanism. The right letter does not depend on the runs (fixed); a wrong letter gets a
    hint naming what to look at."""
    letters = list(options)
    return Exercise(
        key,
        f"{question}: {', '.join(repr(x) for x in letters[:-1])} or {letters[-1]!r}",
        lambda data: right,
        one_of(letters, hint=f"not that mechanism; look at {look_at}"),
        lambda data, t: f"{t}) {options[t]}. {why}",
        options=options,
        fixed=True,
    )


# ---------------------------------------------------------------------------------------
def _number(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float)) and isfinite(v)


def human(v) -> str:
    """A number for people: 2-3 significant digits, thousands separated (40,302 -> 40,300;
    0.7483 -> 0.748; 6 -> 6). Not for missing values: the caller says what is missing."""
    x = float(v)
    if x == 0:
        return "0"
    if abs(x) >= 999.5:  # (999.6 would print as 1e+03 below)
        return f"{round(x, 2 - int(floor(log10(abs(x))))):,.0f}"
    return f"{x:.3g}"


def show_truth(truth) -> str:
    if isinstance(truth, (set, list, tuple)):
        return " or ".join(map(str, sorted(truth)))
    if isinstance(truth, float):
        return f"{truth:,.0f}" if abs(truth) >= 1000 else f"{truth:.3g}"
    return str(truth)


def missing(truth) -> bool:
    return truth is None or (isinstance(truth, float) and not isfinite(truth))


def shown_answer(exercise: Exercise, truth):
    """The value a student's answer is compared with: the solution's form of the truth."""
    if exercise.solution is not None:
        return exercise.solution(truth)
    return truth


def prediction_line(exercise: Exercise, prediction, truth, reveal: bool) -> str:
    """One line setting the prediction beside the measurement (or a reminder to write one).
    With reveal=False (a wrong answer) the measurement is not shown: it would be the answer."""
    if prediction is None:
        return (
            "No prediction was written: next time set the prediction variable before you run the "
            "measurement cells, and this line will set it beside what you measured."
        )
    if not reveal:
        return f"You predicted {_shown(prediction)}: it is set beside the measurement once your answer is right."
    measured = shown_answer(exercise, truth)
    label = "the answer is" if exercise.fixed else "measured"
    if _number(prediction) and _number(measured):
        p, m = float(prediction), float(measured)
        head = f"You predicted {human(p)}; {label} {human(m)}"
        if p == m:
            return f"{head}: exactly what you predicted."
        if p > 0 and m > 0:
            f = max(p / m, m / p)
            if f <= 1.25:
                return f"{head}: within {round((f - 1) * 100)} %, so your model of what happens held."
            by = f"{f:.1f}" if f < 10 else f"{f:,.0f}"
            return f"{head}: off by {by}x ({'too high' if p > m else 'too low'}) — what did you not account for?"
        return f"{head}: off by {human(abs(p - m))} — what did you not account for?"
    good = {str(t).strip().lower() for t in (measured if isinstance(measured, (set, list, tuple)) else [measured])}
    head = f"You predicted {_shown(prediction)}; {label} {_shown(measured)}"
    if str(prediction).strip().lower() in good:
        return f"{head}: your reasoning before the runs held."
    return f"{head} — what did you not account for?"


def _shown(v) -> str:
    if isinstance(v, (set, list, tuple)):
        return " or ".join(repr(str(x)) for x in sorted(v))
    if _number(v):
        return human(v)
    return repr(v)


def check(exercise: Exercise, answer, data, solutions: bool = False, prediction=None) -> bool | None:
    """Print 'correct' or a hint, then the prediction beside the measurement. With
    solutions=True and no answer, use the solution. Returns the verdict (None: not judged)."""
    try:
        truth = exercise.solve(data)
    except (KeyError, ValueError, IndexError) as e:
        print(f"cannot check {exercise.key}: the runs needed are missing ({e})")
        return None
    if missing(truth):
        print(f"cannot check {exercise.key}: the runs needed for it are missing or failed in this sweep")
        return None
    filled = False
    if answer is None and solutions:
        if exercise.solution is not None:
            answer = exercise.solution(truth)
        else:
            answer = truth if not isinstance(truth, (set, list, tuple)) else sorted(truth)[0]
        print(f"solution: {show_truth(answer if exercise.solution is not None else truth)}")
        filled = True
    if answer is None:
        print(f"no answer yet: set the answer variable in the cell above to {exercise.question}")
        return None
    ok, hint = exercise.judge(answer, truth)
    print("correct" if ok else f"hint: {hint}")
    if solutions or ok:
        print("why: " + exercise.why(data, truth))
    if not (filled and prediction is None):  # a teacher's filled-in copy needs no reminder
        print(prediction_line(exercise, prediction, truth, reveal=bool(ok or solutions)))
    return ok
