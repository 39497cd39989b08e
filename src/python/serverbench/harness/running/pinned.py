"""The one way the harness starts a child process (a benchmark run, a socket server or
client, `serve`'s server): pinned to its CPUs, in a session of its own (its process group
can be ended whole), with no inherited descriptors, dying with the harness
(PR_SET_PDEATHSIG), optionally in a memory cgroup and with RLIMIT_NOFILE raised to the
hard limit (a socket program holds one descriptor per connection). All of it happens in
the child between fork and exec, so nothing runs unpinned or outside its cgroup.

`wait` reaps such a child with its rusage; a KeyboardInterrupt (or anything raised) while
waiting ends the child's process group, reaps it and re-raises."""

from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
import time

from serverbench.harness.running.host import killpg

PR_SET_PDEATHSIG = 1


def make_preexec(cpus: list[int], cgroup_procs: str | None = None, raise_nofile: bool = False):
    """Runs in the child between fork and exec: affinity, cgroup, open-file limit, die with
    the harness."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):  # pragma: no cover
        prctl = None
    cpuset = set(cpus)
    procs = cgroup_procs.encode() if cgroup_procs else None

    def preexec():
        os.sched_setaffinity(0, cpuset)
        if procs is not None:
            fd = os.open(procs, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if raise_nofile:
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))

    return preexec


def start(
    argv: list[str],
    env: dict,
    cpus: list[int],
    *,
    stdin=subprocess.DEVNULL,
    stdout=None,
    stderr=None,
    cgroup_procs: str | None = None,
    raise_nofile: bool = False,
) -> subprocess.Popen:
    """A started child (see the module docstring); OSError / SubprocessError when it could not
    be started."""
    return subprocess.Popen(
        argv,
        stdin=stdin,
        stdout=stdout,
        stderr=stderr,
        env=env,
        preexec_fn=make_preexec(cpus, cgroup_procs, raise_nofile),
        start_new_session=True,
        close_fds=True,
    )


def wait(proc: subprocess.Popen, *stop) -> tuple[int, resource.struct_rusage, float]:
    """(wait status, rusage, time.perf_counter() at the exit) of a started child. Then, or
    when anything is raised while waiting (Ctrl-C), every `stop` callable (its watchers) is
    called and what is left of its process group is ended; on a raise the child is reaped
    and the exception goes on."""
    try:
        _, status, ru = os.wait4(proc.pid, 0)
    except BaseException:
        for s in stop:
            s()
        killpg(proc.pid)
        try:
            os.waitpid(proc.pid, 0)
        except ChildProcessError:
            pass
        proc.returncode = -9
        raise
    t_exit = time.perf_counter()
    for s in stop:
        s()
    killpg(proc.pid)  # leftovers of the child's group (e.g. helper processes)
    proc.returncode = status
    return status, ru, t_exit
