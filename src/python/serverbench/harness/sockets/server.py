"""A started socket server (harness.sockets.run): started by running.pinned with
stdin/stdout pipes and stderr to a file, pinned to its CPUs; reads its listening line,
stops it (stdin closed, then SIGTERM, then SIGKILL to its process group) and reaps it with
its rusage."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import time

from serverbench.harness.running import pinned
from serverbench.harness.running.host import killpg

STOP_WAIT_S = 10.0  # longest wait for the server's record after its stdin closes
TERM_WAIT_S = 3.0  # after SIGTERM, before SIGKILL


class Server:
    """A started server: Popen with stdin/stdout pipes, stderr to a file."""

    def __init__(self, argv, env, cpus, err_path, cgroup_procs=None):
        self.argv, self.cpus, self.err_path = argv, cpus, err_path
        self.ferr = open(err_path, "wb")
        self.t0 = time.perf_counter()
        self.proc = pinned.start(
            argv,
            env,
            cpus,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.ferr,
            raise_nofile=True,
            cgroup_procs=cgroup_procs,  # a memory-cap run: the server in a cgroup of the cap (sockets.run)
        )
        self.buf = b""
        self.status = None
        self.rusage = None

    def read_line(self, deadline: float) -> bytes | None:
        """The next stdout line, or None at EOF or the deadline."""
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        try:
            while b"\n" not in self.buf:
                left = deadline - time.perf_counter()
                if left <= 0 or not sel.select(left):
                    return None
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    return None
                self.buf += chunk
        finally:
            sel.close()
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def poll(self) -> bool:
        """True once the server has exited (and is reaped)."""
        if self.status is not None:
            return True
        pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status, self.rusage, self.wall_s = status, ru, time.perf_counter() - self.t0
        self.proc.returncode = status
        return True

    def stop(self) -> str | None:
        """Close stdin, wait for the exit; SIGTERM then SIGKILL the group. Returns the
        harness's own action if it had to use a signal, else None."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        action = None
        for wait_s, sig in ((STOP_WAIT_S, signal.SIGTERM), (TERM_WAIT_S, signal.SIGKILL), (TERM_WAIT_S, None)):
            end = time.perf_counter() + wait_s
            while time.perf_counter() < end:
                self._drain(0.05)
                if self.poll():
                    break
            if self.poll() or sig is None:
                break
            action = f"no exit {wait_s:g} s after its stdin closed: {signal.Signals(sig).name}"
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
        killpg(self.proc.pid)  # leftovers of its group
        if not self.poll():  # cannot happen after SIGKILL; reap for certain
            _, self.status, self.rusage = os.wait4(self.proc.pid, 0)
            self.wall_s = time.perf_counter() - self.t0
        self._drain(0)
        return action

    def _drain(self, timeout: float) -> None:
        sel = selectors.DefaultSelector()
        try:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if sel.select(timeout):
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                self.buf += chunk
        except (OSError, ValueError):
            pass
        finally:
            sel.close()

    def kill(self) -> None:
        killpg(self.proc.pid)
        try:
            os.waitpid(self.proc.pid, 0)
        except ChildProcessError:
            pass
        self.close()

    def close(self) -> None:
        for f in (self.proc.stdin, self.proc.stdout, self.ferr):
            try:
                f.close()
            except OSError:
                pass
