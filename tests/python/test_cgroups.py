"""Memory budgets on cgroup v1 and v2 (harness.running.cgroups, limits.detect_enforcement,
limits.check_budgets).

cgroup v2 is tested against a fake tree: FakeKernel plays the kernel's part of the file
protocol (interface files appear on mkdir, controllers follow the parent's
subtree_control, no internal processes, a busy cgroup cannot be removed). No real kernel
OOM-kills anything there. cgroup v1 is this machine's: tested for real."""

from __future__ import annotations

import errno
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harness_fakes import MODE, SMALL, fake, fakes, spec
from serverbench import cli
from serverbench.harness import host_info
from serverbench.harness.planning.plan import make_plan
from serverbench.harness.planning.profiles import ProfileError, load_profile
from serverbench.harness.recording.sweep import run_sweep
from serverbench.harness.running import cgroups, limits, pinned
from serverbench.harness.running.launch import Launcher

MiB = 2**20
OWN = "user.slice/session-1.scope"
V2_EVENTS = "low 0\nhigh 0\nmax 0\noom 0\noom_kill {n}\n"


class FakeKernel:
    def __init__(self, root: Path, oom_kills: int = 0, peak: int = 0, max_limit: int = 2**62):
        self.root, self.oom_kills, self.peak, self.max_limit = root, oom_kills, peak, max_limit
        self.removed: dict[str, str] = {}  # cgroup -> its cgroup.procs when it was removed

    def install(self, monkeypatch):
        monkeypatch.setattr(cgroups, "_mkdir", self.mkdir)
        monkeypatch.setattr(cgroups, "_rmdir", self.rmdir)
        monkeypatch.setattr(cgroups, "_write", self.write)

    def mkdir(self, path: str) -> None:
        os.mkdir(path)
        parent = Path(path).parent
        files = {"cgroup.procs": ""}
        if (parent / "memory.limit_in_bytes").exists():  # v1 memory hierarchy
            files.update(
                {
                    "memory.limit_in_bytes": "9223372036854771712",
                    "memory.memsw.limit_in_bytes": "9223372036854771712",
                    "memory.oom_control": f"oom_kill_disable 0\nunder_oom 0\noom_kill {self.oom_kills}\n",
                    "memory.max_usage_in_bytes": str(self.peak),
                    "memory.failcnt": "0",
                }
            )
        else:
            enabled = (parent / "cgroup.subtree_control").read_text().split()
            files.update({"cgroup.controllers": " ".join(enabled), "cgroup.subtree_control": ""})
            if "memory" in enabled:
                files.update(
                    {
                        "memory.max": "max",
                        "memory.swap.max": "max",
                        "memory.events": V2_EVENTS.format(n=self.oom_kills),
                        "memory.peak": str(self.peak),
                    }
                )
        for name, text in files.items():
            (Path(path) / name).write_text(text)

    def rmdir(self, path: str) -> None:
        if not os.path.isdir(path):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        procs = (Path(path) / "cgroup.procs").read_text()
        if any(Path("/proc", p).exists() for p in procs.split()):  # the kernel lists live members only
            raise OSError(errno.EBUSY, "Device or resource busy", path)
        if any(p.is_dir() for p in Path(path).iterdir()):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", path)
        self.removed[path] = procs
        shutil.rmtree(path)

    def write(self, path: str, text: str) -> None:
        p = Path(path)
        if not p.exists():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
        if p.name == "cgroup.subtree_control":
            have = set((p.parent / "cgroup.controllers").read_text().split())
            enabled = set(p.read_text().split())
            for tok in text.split():
                if tok[1:] not in have:
                    raise OSError(errno.ENOENT, "No such file or directory", path)
                if tok[0] == "+" and p.parent != self.root and (p.parent / "cgroup.procs").read_text().split():
                    raise OSError(errno.EBUSY, "Device or resource busy", path)
                enabled = enabled | {tok[1:]} if tok[0] == "+" else enabled - {tok[1:]}
            p.write_text(" ".join(sorted(enabled)))
        elif p.name == "cgroup.procs":  # a process is in one cgroup: it leaves the old one
            for other in self.root.rglob("cgroup.procs"):
                other.write_text("".join(x + "\n" for x in other.read_text().split() if x != text.strip()))
            p.write_text(p.read_text() + text.strip() + "\n")
        elif p.name in ("memory.max", "memory.limit_in_bytes") and int(text) > self.max_limit:
            raise OSError(errno.EINVAL, "Invalid argument", path)
        else:
            p.write_text(text)


def v2_tree(tmp_path: Path, monkeypatch, procs=(), **kernel) -> tuple[FakeKernel, Path]:
    """A unified hierarchy with memory delegated to OWN, which holds `procs`."""
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "cgroup.controllers").write_text("cpu io memory pids")
    (root / "cgroup.subtree_control").write_text("memory pids")
    (root / "cgroup.procs").write_text("1\n")
    k = FakeKernel(root, **kernel)
    k.install(monkeypatch)
    k.mkdir(str(root / "user.slice"))
    k.write(str(root / "user.slice" / "cgroup.subtree_control"), "+memory")
    k.mkdir(str(root / OWN))
    (root / OWN / "cgroup.procs").write_text("".join(f"{p}\n" for p in procs))
    return k, root


def v1_tree(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "cgroup"
    own = root / "memory" / "session"
    own.mkdir(parents=True)
    (own / "memory.limit_in_bytes").write_text("9223372036854771712")
    FakeKernel(root).install(monkeypatch)
    return root


def dead_pid() -> int:
    p = subprocess.Popen(["true"])
    p.wait()
    return p.pid


# --- which enforcement --------------------------------------------------------------------
def test_v2_is_chosen_on_a_unified_tree_and_the_harness_leaves_the_cgroup_it_enables(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch, procs=[os.getpid()])
    mode, sub, how = limits.detect_enforcement("auto", str(root), f"0::/{OWN}\n")
    own = root / OWN
    assert (mode, sub) == ("cgroup", str(own / f"serverbench-{os.getpid()}"))
    assert how.startswith(f"cgroup v2 memory child under {sub} (memory.max, memory.swap.max=0)")
    assert limits.mechanism(mode, sub) == "cgroup2"
    # no internal processes: the harness moved into a leaf before +memory was enabled in OWN
    assert "moved itself" in how
    assert (own / "cgroup.procs").read_text().split() == []
    assert (own / f"serverbench-harness-{os.getpid()}" / "cgroup.procs").read_text().split() == [str(os.getpid())]
    assert "memory" in (own / "cgroup.subtree_control").read_text().split()
    assert "memory" in Path(sub, "cgroup.subtree_control").read_text().split()
    assert [d.name for d in Path(sub).iterdir() if d.is_dir()] == []  # the probe leaf is gone


def test_v2_without_a_move_when_memory_is_already_enabled(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch)
    k.write(str(root / OWN / "cgroup.subtree_control"), "+memory")
    mode, sub, how = limits.detect_enforcement("cgroup", str(root), f"0::/{OWN}\n")
    assert mode == "cgroup" and limits.mechanism(mode, sub) == "cgroup2" and "moved" not in how


def test_v2_refused_when_other_processes_share_the_cgroup(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch, procs=[os.getpid(), 1])
    mode, sub, how = limits.detect_enforcement("auto", str(root), f"0::/{OWN}\n")
    assert (mode, sub) == ("watchdog", None)
    assert "1 other process(es)" in how and how.endswith("psutil RSS watchdog")
    assert (root / OWN / "cgroup.procs").read_text().split() == [str(os.getpid()), "1"]  # nobody moved


def test_v2_refused_without_the_memory_controller(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch)
    (root / OWN / "cgroup.controllers").write_text("pids")
    with pytest.raises(RuntimeError, match="memory controller is not delegated"):
        limits.detect_enforcement("cgroup", str(root), f"0::/{OWN}\n")


def test_v1_is_chosen_on_a_v1_tree(tmp_path, monkeypatch):
    root = v1_tree(tmp_path, monkeypatch)
    mode, parent, how = limits.detect_enforcement("auto", str(root), "4:memory:/session\n0::/\n")
    assert (mode, parent, how) == (
        "cgroup",
        str(root / "memory" / "session"),
        "cgroup v1 memory child of the harness's cgroup",
    )
    assert limits.mechanism(mode, parent) == "cgroup1"


def test_watchdog_when_there_is_neither(tmp_path, monkeypatch):
    FakeKernel(tmp_path).install(monkeypatch)
    mode, parent, how = limits.detect_enforcement("auto", str(tmp_path), "0::/\n")
    assert (mode, parent) == ("watchdog", None) and "no cgroup v2 hierarchy" in how
    with pytest.raises(RuntimeError, match="'cgroup' is not possible here"):
        limits.detect_enforcement("cgroup", str(tmp_path), "0::/\n")


# --- one run's leaf -----------------------------------------------------------------------
def test_a_v2_leaf_gets_the_budget_and_no_swap(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch)
    _, sub, _ = limits.detect_enforcement("cgroup", str(root), f"0::/{OWN}\n")
    cg = cgroups.create(sub, "serverbench-1-1", 200 * MiB)
    assert isinstance(cg, cgroups.CgroupV2)
    assert Path(cg.path, "memory.max").read_text() == str(200 * MiB)
    assert Path(cg.path, "memory.swap.max").read_text() == "0"
    assert cg.peak() == 0 and cg.oom_events() == 0
    cg.remove()
    assert not os.path.exists(cg.path)


@pytest.mark.parametrize("oom_kills,status", [(1, "over_memory_budget"), (0, "crashed")])
def test_a_v2_run_killed_with_oom_kill_in_memory_events_is_over_budget(tmp_path, monkeypatch, oom_kills, status):
    k, root = v2_tree(tmp_path, monkeypatch, oom_kills=oom_kills, peak=123 * MiB)
    _, sub, _ = limits.detect_enforcement("cgroup", str(root), f"0::/{OWN}\n")
    lau = Launcher(
        sweep_id="t",
        host=host_info(),
        allowed_cpus=sorted(os.sched_getaffinity(0)),
        commands={"go": ["sh", "-c", "kill -9 $$"]},  # dies by SIGKILL, as the OOM killer's victims do
        enforcement="cgroup",
        cgroup_parent=sub,
    )
    rec, _ = lau.run(spec(budget=100 * MiB))
    assert rec["status"] == status and rec["memory_enforcement"] == "cgroup" and rec["signal"] == 9
    if oom_kills:
        assert rec["status_reason"] == (
            "killed by the kernel OOM killer in its memory cgroup "
            f"(limit {100 * MiB} bytes, peak usage {123 * MiB} bytes)"
        )
    (leaf, procs), *_ = [(p, v) for p, v in k.removed.items() if Path(p).name.startswith(f"serverbench-{os.getpid()}-")]
    assert Path(leaf).parent == Path(sub) and procs.split() != []  # the child entered the leaf before exec
    assert [d.name for d in Path(sub).iterdir() if d.is_dir()] == []  # and the leaf is gone


def test_stale_cgroups_of_dead_harnesses_are_removed(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch)
    own, gone, me = root / OWN, dead_pid(), os.getpid()
    k.write(str(own / "cgroup.subtree_control"), "+memory")
    for d in (f"serverbench-{gone}", f"serverbench-harness-{gone}", f"serverbench-{me}-7", "unrelated"):
        k.mkdir(str(own / d))
    k.write(str(own / f"serverbench-{gone}" / "cgroup.subtree_control"), "+memory")
    k.mkdir(str(own / f"serverbench-{gone}" / f"serverbench-{gone}-3"))
    assert cgroups.cleanup_stale(str(own)) == 3
    assert sorted(d.name for d in own.iterdir() if d.is_dir()) == [f"serverbench-{me}-7", "unrelated"]


# --- bad budgets, before anything runs ----------------------------------------------------
def plan_for(lang: str, overrides: dict):
    return make_plan(load_profile("smoke", {**SMALL, "pingping.enabled": False, **overrides}), [lang])


def test_budget_below_a_jvm_floor_is_refused():
    prof = {"spawn.enabled": False, "spawn_max.enabled": True, "spawn_max.budget_bytes": "64MiB"}
    with pytest.raises(ProfileError, match=r"memory budget 67108864 bytes \(64 MiB\) is below the floor of 100663296"):
        limits.check_budgets(plan_for("scala_akka", prof), {}, "watchdog", None)
    ok = {**prof, "spawn_max.budget_bytes": "128MiB"}  # heap 64 MiB + 32 MiB beside it fits
    limits.check_budgets(plan_for("scala_akka", ok), {}, "watchdog", None)
    # the floor is the JVM's: a fake command (not java) for the same language has only the general one
    limits.check_budgets(plan_for("scala_akka", prof), {"scala_akka": fake()}, "watchdog", None)


def test_budget_the_kernel_refuses_is_refused(tmp_path, monkeypatch):
    k, root = v2_tree(tmp_path, monkeypatch, max_limit=300 * MiB)
    mode, sub, _ = limits.detect_enforcement("cgroup", str(root), f"0::/{OWN}\n")
    plan = plan_for("go", {"defaults.memory_budget_bytes": "400MiB"})
    with pytest.raises(
        ProfileError, match=r"memory budget 419430400 bytes \(400 MiB\): the kernel refused it as memory.max"
    ):
        limits.check_budgets(plan, {"go": fake()}, mode, sub)
    limits.check_budgets(plan_for("go", {"defaults.memory_budget_bytes": "200MiB"}), {"go": fake()}, mode, sub)
    assert [d.name for d in Path(sub).iterdir() if d.is_dir()] == []  # probes removed


def test_cli_refuses_a_budget_below_the_floor_in_one_line(tmp_path, monkeypatch):
    import sys

    from serverbench import contract

    # a unit test with nothing built: an executable that exists stands in for Go's (it never starts)
    monkeypatch.setattr(contract, "executable", lambda lang, settings=None: Path(sys.executable))
    out, err = io.StringIO(), io.StringIO()
    argv = ["run", "--profile", "smoke", "--languages", "go", "--set", 'defaults.memory_budget_bytes="8MiB"']
    code = cli.run([*argv, "--set", "spawn_max.enabled=false", "--raw-dir", str(tmp_path)], out, err)
    assert code == 2 and len(err.getvalue().splitlines()) == 1, err.getvalue()
    assert "memory budget 8388608 bytes (8 MiB) is below the floor of 16777216 bytes" in err.getvalue()
    assert list(tmp_path.iterdir()) == []  # nothing written


# --- this machine, for real ---------------------------------------------------------------
REAL_MODE, REAL_PARENT, _ = limits.detect_enforcement("auto")
real_v1 = pytest.mark.skipif(
    MODE != "cgroup" or limits.mechanism(REAL_MODE, REAL_PARENT) != "cgroup1", reason="no cgroup v1 memory here"
)


@real_v1
def test_real_v1_child_takes_the_budget_and_kills_an_allocator_past_it():
    cg = cgroups.create(REAL_PARENT, f"serverbench-{os.getpid()}-real", 64 * MiB)
    assert isinstance(cg, cgroups.CgroupV1)
    try:
        assert Path(cg.path, "memory.limit_in_bytes").read_text().strip() == str(64 * MiB)
        grab = "b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096])"
        p = subprocess.Popen([sys.executable, "-c", grab], preexec_fn=pinned.make_preexec([0], cg.procs_path))
        assert p.wait(timeout=60) == -9 and cg.oom_events() > 0
        assert cg.peak() is not None and cg.peak() >= 60 * MiB
    finally:
        cg.remove()
    assert not os.path.exists(cg.path)
    assert cgroups.refusal(REAL_PARENT, 64 * MiB) is None


@pytest.mark.slow
@real_v1
def test_manifest_names_the_mechanism(tmp_path):
    d = run_sweep(
        "smoke", sweep_id="m", raw_root=tmp_path, progress=False, overrides=SMALL, commands=fakes(), languages=["go"]
    )
    me = json.loads((d / "manifest.json").read_text())["memory_enforcement"]
    assert me == {"mode": "cgroup", "mechanism": "cgroup1", "how": "cgroup v1 memory child of the harness's cgroup"}
