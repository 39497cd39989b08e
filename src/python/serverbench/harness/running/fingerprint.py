"""Which machine a sweep ran on, precisely enough to tell two VM instances apart: the
manifest's `machine` object (CPU model, family/model/stepping, microcode, kernel release
and build, memory, logical CPUs; the clock and SMT too, outside the hash), a short hash of
those (`fingerprint`), and a calibration loop timed at the start of the sweep. Two sweeps
are "the same machine" only when their fingerprints match; otherwise the ratio of their
calibration times says how much faster one machine ran the same fixed work
(docs/statistics.md, "Stability")."""

from __future__ import annotations

import hashlib
import json
import os
import platform
import statistics
import time
from pathlib import Path

from serverbench.rawdata.columns import Col

CALIBRATION_REPEATS = 5
CALIBRATION_LOOP = 2_000_000  # ~0.1-0.3 s of pure-Python integer work per repeat on the 2-core VM
STABLE_KEYS = ("cpu_model", "cpu_family", "cpu_model_number", "stepping", "microcode", "kernel_release",
               "kernel_build", "memory_bytes", "logical_cpus")  # fmt: skip


def _cpuinfo() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace").splitlines():
            if not line.strip():
                break  # the first CPU's block is enough
            k, _, v = line.partition(":")
            out.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return out


def _memory_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cpu_mhz(info: dict[str, str]) -> float | None:
    """The first CPU's clock as the kernel reports it (on a VM the host's nominal clock)."""
    try:
        return round(float(info["cpu MHz"]), 1)
    except (KeyError, ValueError):
        return None


def _threads_per_core() -> int | None:
    """SMT: how many logical CPUs share CPU 0's core (its thread_siblings_list, e.g. "0-1" or "0,2")."""
    try:
        text = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").read_text().strip()
        n = 0
        for part in text.split(","):
            a, _, b = part.partition("-")
            n += int(b) - int(a) + 1 if b else 1
        return n
    except (OSError, ValueError):
        return None


def _boot_id() -> str | None:
    """The kernel's random id of this boot: two sweeps with the same one ran on one instance
    between two restarts (the fingerprint cannot show that: it hashes what a kind shares)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip() or None
    except OSError:
        return None


def cpu_name(model: object) -> str:
    """A CPU's name as the reports print it: without the trademark signs the kernel reports
    ("Intel(R) Xeon(R) Processor" -> "Intel Xeon Processor")."""
    return " ".join(str(model or "CPU").replace("(R)", "").replace("(TM)", "").split())


def kind(m: dict | None) -> str | None:
    """A kind of machine as the data can show it: CPU name, family/model/stepping, logical
    CPUs and memory rounded to GiB (two boots of one VM type report memory a few KiB apart
    and another kernel build; neither makes another kind). None without a CPU family."""
    if not m or not m.get(Col.cpu_family) or not m.get(Col.cpu_model_number):
        return None
    cpu = cpu_name(m.get(Col.cpu_model))
    out = f"{cpu} {m[Col.cpu_family]}/{m[Col.cpu_model_number]}" + (
        f" stepping {m[Col.stepping]}" if m.get(Col.stepping) else ""
    )
    if m.get(Col.logical_cpus):
        out += f", {int(m[Col.logical_cpus])} CPUs"
    if m.get(Col.memory_bytes):
        out += f", {round(int(m[Col.memory_bytes]) / 2**30)} GiB"
    return out


def calibrate(repeats: int = CALIBRATION_REPEATS, loop: int = CALIBRATION_LOOP) -> dict:
    """The median wall time of a fixed integer loop (the same work on every machine)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        acc = 0
        for i in range(loop):
            acc = (acc + i * i) % 1_000_003
        times.append(time.perf_counter() - t0)
    return {
        "what": f"pure-Python loop of {loop:,} modular multiply-adds, median of {repeats}",
        "loop_s": statistics.median(times),
        "samples_s": times,
    }


def machine(calibration: bool = True) -> dict:
    """The manifest's `machine` object."""
    info = _cpuinfo()
    uname = platform.uname()
    m: dict = {
        "cpu_model": info.get("model name"),
        "cpu_family": info.get("cpu family"),
        "cpu_model_number": info.get("model"),
        "stepping": info.get(Col.stepping),
        "microcode": info.get(Col.microcode),
        "kernel_release": uname.release,
        "kernel_build": uname.version,
        "memory_bytes": _memory_bytes(),
        "logical_cpus": os.cpu_count(),
        "cpu_mhz": _cpu_mhz(info),  # not in the fingerprint: a VM may report another clock after a restart
        "threads_per_core": _threads_per_core(),
        "boot_id": _boot_id(),  # not in the fingerprint: tells one boot (an instance) from another
    }
    m[Col.fingerprint] = fingerprint(m)
    if calibration:
        m[Col.calibration] = calibrate()
    return m


def fingerprint(m: dict) -> str:
    """16 hex digits of sha256 over the stable facts (not the calibration, which varies)."""
    stable = {k: m.get(k) for k in STABLE_KEYS}
    return hashlib.sha256(json.dumps(stable, sort_keys=True).encode()).hexdigest()[:16]


def of_sweep(sweep_dir: Path) -> dict | None:
    """The `machine` object a sweep's manifest recorded (None for sweeps before it existed)."""
    from serverbench.rawdata.sweepfiles import read_manifest

    return read_manifest(sweep_dir).get(Col.machine)


def other_machine(sweep_dir: Path) -> str | None:
    """Why a sweep must not be resumed here: its manifest names another machine (another
    fingerprint), so that its comparisons and curves would mix machines; None when it is
    new, recorded no fingerprint, or was started on this machine."""
    had = of_sweep(sweep_dir)
    if not had or not had.get(Col.fingerprint):
        return None
    here = machine(calibration=False)
    if had[Col.fingerprint] == here[Col.fingerprint]:
        return None
    return (
        f"sweep {Path(sweep_dir).name} was started on another machine (fingerprint {had[Col.fingerprint]}, "
        f"{had.get(Col.cpu_model)}, {had.get(Col.logical_cpus)} CPUs); this one is {here[Col.fingerprint]} "
        f"({here.get(Col.cpu_model)}, {here.get(Col.logical_cpus)} CPUs). Resuming it here would mix machines "
        "within one sweep's comparisons: start a new sweep (another --sweep-id), e.g. one piece of the "
        "profile per machine"
    )


def compare(sweep_dirs: list[Path]) -> str:
    """One sentence: same machine (fingerprints match), or which differ and the
    calibration ratio to the first sweep; or that the sweeps predate fingerprints."""
    ms = [(Path(d).name, of_sweep(d)) for d in sweep_dirs]
    known = [(n, m) for n, m in ms if m and m.get(Col.fingerprint)]
    if len(known) < len(ms):
        missing = ", ".join(n for n, m in ms if not (m and m.get(Col.fingerprint)))
        return f"Not known to be the same machine: {missing} recorded no machine fingerprint."
    prints = {m[Col.fingerprint] for _, m in known}
    if len(prints) == 1:
        return f"Same machine: every sweep's fingerprint is {prints.pop()}."
    base = known[0][1].get(Col.calibration, {}).get(Col.loop_s)
    parts = []
    for n, m in known:
        c = m.get(Col.calibration, {}).get(Col.loop_s)
        ratio = f"{c / base:.2f}x the first's calibration time" if c and base else "no calibration"
        parts.append(f"{n}: {m[Col.fingerprint]} ({ratio})")
    return "Different machines (fingerprints differ): " + "; ".join(parts) + "."
