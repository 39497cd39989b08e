"""The teaching material agrees with itself: each lab's class time, the sweeps it names and
its expected values are the same in the notebooks, docs/teaching.md, docs/instructor.md and
the lesson plan. The one home of a lab's class time is its module's CLASS_MINUTES; of its
expected values, the exercise's own `solve` (the instructor guide's generated table)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from serverbench.teaching import guide, lab1, lab2, lab3, lab4

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = {
    "lab1": "lab1_message_cost.ipynb",
    "lab2": "lab2_processes_are_memory.ipynb",
    "lab3": "lab3_throughput_vs_cores.ipynb",
    "lab4": "lab4_benchmarking_pitfalls.ipynb",
}
MODULES = {"lab1": lab1, "lab2": lab2, "lab3": lab3, "lab4": lab4}
DOCS = ("docs/teaching.md", "docs/instructor.md", "docs/lesson-plan-lab1.md")
SWEEP_ID = re.compile(r"\b((?:lab[1-4]|quick|audit|paper-[a-z0-9-]+?|runtimes|dimension)-\d{8}T\d{6}Z)\b")


def notebook_text(lab: str) -> str:
    nb = json.loads((ROOT / "notebooks" / "teaching" / NOTEBOOKS[lab]).read_text(encoding="utf-8"))
    return "\n".join("".join(c["source"]) for c in nb["cells"])


def class_time_in_notebook(lab: str) -> str:
    m = re.search(r"\*\*Time:\*\* ([0-9-]+) minutes", notebook_text(lab))
    assert m, f"{NOTEBOOKS[lab]} states no '**Time:** N minutes'"
    return m.group(1)


def class_time_in_teaching_md(lab: str) -> str:
    for line in (ROOT / "docs/teaching.md").read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| `{lab}_"):
            m = re.search(r"\| ([0-9-]+) min[^|]*\|\s*$", line)
            assert m, f"docs/teaching.md's row for {lab} has no class time: {line}"
            return m.group(1)
    raise AssertionError(f"docs/teaching.md has no row for {lab}")


@pytest.mark.parametrize("lab", sorted(NOTEBOOKS))
def test_each_lab_has_one_class_time(lab):
    want = MODULES[lab].CLASS_MINUTES
    assert class_time_in_notebook(lab) == want, f"{NOTEBOOKS[lab]} (rebuild with notebooks/teaching/_build.py)"
    assert class_time_in_teaching_md(lab) == want, "docs/teaching.md's labs table"


def test_the_lesson_plan_quotes_lab_1s_class_time():
    text = (ROOT / "docs/lesson-plan-lab1.md").read_text(encoding="utf-8")
    quoted = set(re.findall(r"planned for ([0-9-]+) minutes", text))
    assert quoted == {lab1.CLASS_MINUTES}


def test_the_lesson_plan_fills_50_minutes_without_gaps():
    text = (ROOT / "docs/lesson-plan-lab1.md").read_text(encoding="utf-8")
    spans = [tuple(map(int, m)) for m in re.findall(r"^\| (\d+)-(\d+) \|", text, flags=re.M)]
    assert spans and spans[0][0] == 0 and spans[-1][1] == 50
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])), spans


def sources() -> dict[str, str]:
    out = {f"notebooks/teaching/{nb}": notebook_text(lab) for lab, nb in NOTEBOOKS.items()}
    out.update({d: (ROOT / d).read_text(encoding="utf-8") for d in DOCS})
    return out


def test_every_sweep_named_in_the_teaching_material_is_committed():
    missing = {
        (where, sid)
        for where, text in sources().items()
        for sid in SWEEP_ID.findall(text)
        if not (ROOT / "data" / "raw" / sid).is_dir()
    }
    assert not missing, f"sweeps named but not in data/raw: {sorted(missing)}"


def test_the_instructor_guide_names_each_labs_committed_sweep():
    text = (ROOT / "docs/instructor.md").read_text(encoding="utf-8")
    for lab, sid in guide.SWEEPS.items():
        assert f"Sweep `{sid}`" in text, f"docs/instructor.md does not name {lab}'s sweep {sid}"
        assert (ROOT / "data" / "raw" / sid).is_dir()


def guide_rows() -> dict[tuple[str, str], str]:
    """(lab, exercise) -> the expected value docs/instructor.md shows."""
    rows, lab = {}, None
    for line in (ROOT / "docs/instructor.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"### Lab (\d):", line):
            lab = f"lab{m.group(1)}"
        elif lab and (m := re.match(r"\| `(\w+)` \| .* \| ([^|]+) \| [^|]+ \|$", line)):
            rows[(lab, m.group(1))] = m.group(2).strip()
    return rows


def test_every_exercise_has_an_expected_value_in_the_instructor_guide():
    rows = guide_rows()
    for lab, mod in MODULES.items():
        for key in mod.EXERCISES:
            assert (lab, key) in rows, f"docs/instructor.md has no row for {lab} `{key}`"
            assert rows[(lab, key)] != "not in this sweep", f"{lab} `{key}` has no expected value"


def number(text: str) -> float:
    return float(text.replace(",", ""))


def test_lab2s_limit_is_the_exercises_own_arithmetic():
    """The question asks for budget / bytes per process; the expected value is that quotient
    (of the guide's own `bytes` row and the lab's search budget), not the search's bracket."""
    rows = guide_rows()
    data = guide.lab_data("lab2")
    budget = data.runs.loc[data.runs["table"] == "spawn_max", "memory_budget_bytes"].dropna().iloc[0]
    want = budget / number(rows[("lab2", "bytes")])
    assert number(rows[("lab2", "limit")]) == pytest.approx(want, rel=0.01)


def test_the_generated_guide_is_current():
    text = (ROOT / "docs/instructor.md").read_text(encoding="utf-8")
    assert guide.markdown() in text, "docs/instructor.md is stale: python -m serverbench docs"
