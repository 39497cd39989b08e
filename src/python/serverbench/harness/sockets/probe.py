"""The server seen from /proc while a socket client runs (harness.sockets), and the
kernel-memory guard of large socket runs.

`Probe` is one thread started when the client starts and stopped when it has been reaped:

* saturation (echo_flood, mode saturate): over a window inside the client's sending
  window -- from min(SETTLE_FRACTION x duration_s, SETTLE_MAX_S) after the client was
  started (connection set-up and the server's start-up left out) to END_MARGIN before
  duration_s after it (the client stops sending at duration_s after its own start, which
  is a little later) -- the server's process tree's user and system
  CPU % (/proc/<pid>/stat utime/stime deltas), its context switches per second
  (voluntary + nonvoluntary summed over its threads, /proc/<pid>/task/*/status, delta
  over the window; a thread that exits inside the window takes its count with it, and
  none does while every connection stays open), the machine's (/proc/stat `ctxt`), and
  peaks sampled every INTERVAL_S: the server tree's RSS, the kernel's TCP memory
  (/proc/net/sockstat `TCP: ... mem` pages x page size) and sockets in use (both are the
  whole network namespace's: every process's sockets count, not only the run's). Every
  value is null when it could not be measured (the window never began, a file unreadable).
* the server's memory over the whole run (a benchmark whose package sets probe_peak_rss:
  im, where bytes per idle client are a difference of peaks): every INTERVAL_S from the
  client's start until it is reaped, the server tree's RSS (the tree looked up again every
  TREE_EVERY samples, so a daemon its launcher started is in it); its peak is
  server_rss_peak_bytes.
* the guard (any socket run with at least GUARD_MIN_CONNECTIONS connections): every
  INTERVAL_S, if the kernel's TCP memory reached TCP_HIGH_FRACTION of net.ipv4.tcp_mem's hard
  limit (its third value: past it the kernel refuses socket memory and drops segments; the
  pressure threshold before it is a normal regime in which the kernel trims buffers, and a
  16,384 x 512 KiB flood lives there) or
  the host's MemAvailable fell below the harness's host floor, it kills the client's
  process group (its sockets close with it) and says which floor; the caller records the
  run `over_memory_budget` and stops the server as after any run. `floor_crossed()` is the
  same test the harness makes before such a run (sockets.limits.check_memory_floors).

The /proc readers are module-level functions of procfs.py, called through that module, so
tests can replace one (monkeypatch procfs.<name>).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from serverbench import catalog
from serverbench.harness.running import host
from serverbench.harness.running.environment import CLK_TCK
from serverbench.harness.sockets import procfs
from serverbench.rawdata.columns import Col

INTERVAL_S = 0.1  # how often peaks and the guard are sampled
SETTLE_FRACTION, SETTLE_MAX_S = 0.2, 1.0  # the window starts min(0.2 x duration_s, 1 s) after the client
END_MARGIN_FRACTION, END_MARGIN_MAX_S = 0.1, 0.25  # ... and ends min(0.1 x duration_s, 0.25 s) before its end
GUARD_MIN_CONNECTIONS = 1024  # runs this large are checked before and guarded during the run
TCP_HIGH_FRACTION = 0.9  # the guard stops a run at 90 % of tcp_mem's hard limit, before the kernel drops
TREE_EVERY = 10  # whole-run RSS sampling looks the server's process tree up again every this many samples

# The raw record's saturation fields (null outside saturate mode or when not measurable).
FIELDS = (
    "saturation_window_s",
    "server_cpu_user_pct",
    "server_cpu_system_pct",
    "server_ctx_switches_per_s",
    "host_ctx_switches_per_s",
    "server_threads",
    "server_rss_peak_bytes",
    "tcp_mem_bytes_peak",
    "sockets_used_peak",
)


# ---- the floors ---------------------------------------------------------------------------
def host_floor_bytes(task) -> int:
    """The host's memory floor for a run: the task's own, else the harness's one default
    (a search's host_floor_bytes default, planning.search.HOST_FLOOR_BYTES)."""
    from serverbench.harness.planning.search import HOST_FLOOR_BYTES

    return int(task.host_floor_bytes if task.host_floor_bytes is not None else HOST_FLOOR_BYTES)


def tcp_guard_pages() -> int | None:
    """The kernel TCP memory (pages) at which the guard stops a run: TCP_HIGH_FRACTION of tcp_mem's hard limit."""
    tm = procfs.read_tcp_mem()
    return int(tm[2] * TCP_HIGH_FRACTION) if tm else None


def floor_crossed(host_floor: int, tcp_guard: int | None = None) -> str | None:
    """Why the machine is past a floor now, naming it; None when both hold."""
    if tcp_guard is None:
        tcp_guard = tcp_guard_pages()
    ss = procfs.read_sockstat()
    if ss is not None and tcp_guard is not None and ss["tcp_mem_pages"] >= tcp_guard:
        return (
            f"kernel TCP memory {ss['tcp_mem_pages']} pages ({ss['tcp_mem_pages'] * procfs.PAGE_BYTES} bytes, "
            f"/proc/net/sockstat) reached {TCP_HIGH_FRACTION:.0%} of net.ipv4.tcp_mem's hard limit: {tcp_guard} "
            f"pages ({tcp_guard * procfs.PAGE_BYTES} bytes)"
        )
    avail = procfs.read_mem_available()
    if avail is not None and avail < host_floor:
        return (
            f"the host's MemAvailable {avail} bytes fell below the harness's host floor of {host_floor} bytes "
            "(spawn_max.host_floor_bytes)"
        )
    return None


# ---- the probe ------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Endpoint:
    """The server tree's counters at one end of the saturation window."""

    t: float  # time.perf_counter(), just before the CPU times are read
    cpu: tuple[int, ...] | None  # (user, system) ticks of the tree; None: unreadable
    ctx: tuple[int, ...] | None  # (context switches, threads) of the tree
    host_ctxt: int | None  # the host's context switches (/proc/stat ctxt)


class Probe:
    """See the module docstring. start(client_pid) when the client has started; stop()
    after it has been reaped; then fields() for the raw record and `stopped` (why the
    guard ended the run, or None)."""

    def __init__(self, server_pid: int, saturate_s: float | None, host_floor: int | None, whole_rss: bool = False):
        self.server_pid = server_pid
        self.whole_rss = whole_rss  # sample the server tree's RSS over the whole run (probe_peak_rss)
        self._rss_peak: int | None = None
        self._samples = 0
        self.saturate_s = saturate_s  # the client's duration_s in saturate mode, else None
        self.host_floor = host_floor  # None: no guard
        self.tcp_guard = tcp_guard_pages() if host_floor is not None else None
        self.stopped: str | None = None
        self.client_pid: int | None = None
        self._first: Endpoint | None = None
        self._last: Endpoint | None = None
        self._peaks: dict = {}
        self._tree: list[int] = [server_pid]
        self._halt = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="serverbench-socket-probe", daemon=True)

    @property
    def active(self) -> bool:
        return self.saturate_s is not None or self.host_floor is not None or self.whole_rss

    def start(self, client_pid: int, t0: float | None = None) -> None:
        """t0: time.perf_counter() just before the client was started (default: now)."""
        self.client_pid, self.t0 = client_pid, time.perf_counter() if t0 is None else t0
        if self.active:
            self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread.is_alive():
            self._thread.join()

    def _loop(self) -> None:
        if self.saturate_s is not None:
            d = self.saturate_s
            w0 = self.t0 + min(SETTLE_MAX_S, SETTLE_FRACTION * d)
            w1 = self.t0 + d - min(END_MARGIN_MAX_S, END_MARGIN_FRACTION * d)
        else:
            w0 = w1 = float("inf")
        while not self._halt.is_set():
            now = time.perf_counter()
            if self.host_floor is not None and self._guard():
                return
            if self.whole_rss:
                self._rss_sample()
            if now >= w0 and self._first is None:
                self._tree = procfs.process_tree(self.server_pid)
                self._first = self._endpoint()
            if self._first is not None and self._last is None:
                self._peak_sample()
                if now >= w1:
                    self._last = self._endpoint()
                    if self.host_floor is None and not self.whole_rss:
                        return
            nxt = min(t for t in (now + INTERVAL_S, w0, w1) if t > now)
            self._halt.wait(max(0.0, nxt - time.perf_counter()))

    def _guard(self) -> bool:
        why = floor_crossed(self.host_floor or 0, self.tcp_guard)
        if why is None:
            return False
        self.stopped = why
        if self.client_pid is not None:
            host.killpg(self.client_pid)
        return True

    def _endpoint(self) -> Endpoint:
        t = time.perf_counter()  # just before the CPU times are read (the tree's look-up comes before)
        cpu = [procfs.read_cpu_ticks(p) for p in self._tree]
        ctx = [procfs.read_ctx_switches(p) for p in self._tree]
        return Endpoint(
            t,
            None if cpu[0] is None else tuple(map(sum, zip(*[c for c in cpu if c]))),
            None if ctx[0] is None else tuple(map(sum, zip(*[c for c in ctx if c]))),
            procfs.read_host_ctxt(),
        )

    def _rss_sample(self) -> None:
        if self._samples % TREE_EVERY == 0:
            self._tree = procfs.process_tree(self.server_pid)
        self._samples += 1
        rss = [procfs.read_rss(p) for p in self._tree]
        if rss[0] is not None:
            total = sum(r for r in rss if r)
            self._rss_peak = total if self._rss_peak is None else max(total, self._rss_peak)

    def _peak_sample(self) -> None:
        rss = [procfs.read_rss(p) for p in self._tree]
        ss = procfs.read_sockstat()
        vals = {
            "server_rss_peak_bytes": None if rss[0] is None else sum(r for r in rss if r),
            "tcp_mem_bytes_peak": None if ss is None else ss["tcp_mem_pages"] * procfs.PAGE_BYTES,
            "sockets_used_peak": None if ss is None else ss.get("sockets_used"),
        }
        for k, v in vals.items():
            if v is not None:
                self._peaks[k] = max(v, self._peaks.get(k, v))

    def fields(self) -> dict:
        """The saturation fields of the raw record (FIELDS; null when not measured)."""
        out: dict = dict.fromkeys(FIELDS)
        if self.whole_rss:
            out[Col.server_rss_peak_bytes] = self._rss_peak
        a, b = self._first, self._last
        if a is None or b is None or b.t <= a.t:
            return out
        dt = b.t - a.t
        out[Col.saturation_window_s] = round(dt, 6)
        if a.cpu and b.cpu:
            out[Col.server_cpu_user_pct] = 100.0 * (b.cpu[0] - a.cpu[0]) / CLK_TCK / dt
            out[Col.server_cpu_system_pct] = 100.0 * (b.cpu[1] - a.cpu[1]) / CLK_TCK / dt
        if a.ctx and b.ctx:
            out[Col.server_ctx_switches_per_s] = max(0, b.ctx[0] - a.ctx[0]) / dt
            out[Col.server_threads] = b.ctx[1]
        if a.host_ctxt is not None and b.host_ctxt is not None:
            out[Col.host_ctx_switches_per_s] = (b.host_ctxt - a.host_ctxt) / dt
        out.update(self._peaks)
        return out


def has_probe_fields(task) -> bool:
    """Whether the task's records carry the saturation fields (its package's probe_fields)."""
    return catalog.benchmark(task.benchmark).socket_hooks.probe_fields


def for_task(task, server_pid: int) -> Probe:
    """The probe a socket task needs: saturation sampling in its package's probe_mode (the
    echo flood's saturate mode), the guard from GUARD_MIN_CONNECTIONS connections (it does
    nothing for other runs)."""
    p = task.params
    hooks = catalog.benchmark(task.benchmark).socket_hooks
    mode = hooks.probe_mode
    saturate = mode is not None and p.get(Col.mode) == mode
    large = int(p.get(Col.connections, 0)) >= GUARD_MIN_CONNECTIONS
    return Probe(
        server_pid,
        float(p[Col.duration_s]) if saturate else None,
        host_floor_bytes(task) if large else None,
        hooks.probe_peak_rss,
    )


def apply(rec: dict, task, probe: Probe) -> None:
    """The probe's findings into the raw record: the saturation fields (every record of a
    benchmark with probe_fields has them, null unless measured) and, if the guard stopped
    the run, its status."""
    if has_probe_fields(task):
        rec.update(probe.fields())
    if probe.stopped:
        rec[Col.status] = "over_memory_budget"
        rec[Col.status_reason] = f"stopped by the harness (client killed, server stopped): {probe.stopped}"
