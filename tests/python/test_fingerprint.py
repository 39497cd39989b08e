"""The machine fingerprint in every manifest, and "same machine" only when they match."""

from __future__ import annotations

import json

from serverbench.harness.running import fingerprint


def _sweep(tmp_path, name, machine):
    d = tmp_path / name
    d.mkdir()
    (d / "manifest.json").write_text(json.dumps({"sweep_id": name, **({"machine": machine} if machine else {})}))
    return d


def test_the_fingerprint_names_this_machine_and_ignores_the_calibration():
    a = fingerprint.machine(calibration=False)
    assert a["cpu_model"] and a["kernel_release"] and a["memory_bytes"] > 0 and a["logical_cpus"] >= 1
    assert len(a["fingerprint"]) == 16 and a["fingerprint"] == fingerprint.machine(calibration=False)["fingerprint"]
    other = {**a, "microcode": "0xdifferent"}
    assert fingerprint.fingerprint(other) != a["fingerprint"]  # a microcode update is another machine
    assert a["threads_per_core"] >= 1 and a["cpu_mhz"] > 0  # the report's clock and SMT rows (Linux)
    assert fingerprint.fingerprint({**a, "cpu_mhz": 1.0}) == a["fingerprint"]  # a VM's reported clock may move
    c = fingerprint.calibrate(repeats=3, loop=20_000)
    assert c["loop_s"] > 0 and len(c["samples_s"]) == 3


def test_same_machine_only_when_fingerprints_match(tmp_path):
    m = fingerprint.machine(calibration=False)
    m1 = {**m, "calibration": {"loop_s": 1.0}}
    a, b = _sweep(tmp_path, "a", m1), _sweep(tmp_path, "b", m1)
    assert fingerprint.compare([a, b]).startswith("Same machine")
    m2 = {**m, "kernel_build": "#2", "calibration": {"loop_s": 1.9}}
    m2["fingerprint"] = fingerprint.fingerprint(m2)
    c = _sweep(tmp_path, "c", m2)
    text = fingerprint.compare([a, c])
    assert text.startswith("Different machines") and "1.90x the first's calibration time" in text
    old = _sweep(tmp_path, "old", None)
    assert "old recorded no machine fingerprint" in fingerprint.compare([a, old])
