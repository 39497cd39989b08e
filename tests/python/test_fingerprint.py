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


def test_a_kind_of_machine_is_what_the_data_can_show():
    """Two boots of one VM type (another kernel build, memory 4 KiB apart) are one kind; two CPU
    models sold as "AMD EPYC" are two kinds (issue: the fingerprint told the first apart and
    printed the second as one machine)."""
    from serverbench.analysis.claims.record import kind_of, machine_kind
    from serverbench.harness.running.fingerprint import kind

    a = {"cpu_model": "AMD EPYC", "cpu_family": "25", "cpu_model_number": "17", "stepping": "1",
         "kernel_release": "6.18.44-fc-v657", "memory_bytes": 25276510208, "logical_cpus": 2}  # fmt: skip
    b = {**a, "kernel_release": "6.18.44-fc-v595", "memory_bytes": 25276514304}
    c = {**a, "cpu_model_number": "1"}
    assert kind(a) == kind(b) == "AMD EPYC 25/17 stepping 1, 2 CPUs, 24 GiB"
    assert kind(c) != kind(a) and "25/1 " in kind(c)
    assert kind({"cpu_model": "AMD EPYC"}) is None  # a sweep older than the manifest's machine object
    assert machine_kind({"cpu_model": "AMD EPYC", "logical_cpus": 2}) == "AMD EPYC, 2 CPUs"
    assert kind_of({"host": {"cpu_model": "AMD EPYC", "logical_cpus": 2}, "manifest": {"machine": c}}) == kind(c)
