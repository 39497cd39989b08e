#!/usr/bin/env python3
"""The generator's cost against a server's (docs/im.md, "The generator's cost").

Starts an im server pinned to CPU 0 and the generator pinned to CPU 1 in latency mode,
and reports, per scheduled message (one send and one receive for the generator, one
relay for the server), the CPU seconds (user + system, from /proc/<pid>/stat, sampled
every 0.1 s) each side spent over a window inside the measured schedule (its first and
last half second left out, so that registration and the drain do not count). Each rate
is repeated and the median printed, beside the generator's own record (its measured
window's CPU share and validity) and the load average.

usage: measure_cost.py SERVER_COMMAND... -- [--rates 5000,20000] [--repeats 3]
         [--clients 1000] [--duration-s 10] [--generator PATH]
e.g.   src/im_loadgen/measure_cost.py src/go/bin/serverbench -- --rates 5000,20000
       src/im_loadgen/measure_cost.py src/im_loadgen/bin/serverbench-im-loadgen -- --rates 100000  (the sink)
       src/im_loadgen/measure_cost.py src/ircd/serverbench-ircd ngircd -- --rates 5000

Standard library only. Bounded in time: each generator run is killed after its schedule
plus a minute, and the server is stopped (stdin closed, then SIGKILL) in every case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TICK_S = os.sysconf("SC_CLK_TCK")
SAMPLE_S = 0.1
EDGE_S = 0.5  # left out at each end of the schedule


def tree_cpu_s(root: int, skip_root: bool) -> float:
    """User + system CPU seconds of root and its descendants (live ones)."""
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    rest = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            stats[int(d)] = (int(rest[1]), int(rest[11]) + int(rest[12]))
    total, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats and not (skip_root and pid == root):
            total += stats[pid][1]
        todo.extend(p for p, (ppid, _) in stats.items() if ppid == pid)
    return total / TICK_S


class Sampler(threading.Thread):
    """(monotonic s, generator CPU s, server CPU s) every SAMPLE_S until stopped."""

    def __init__(self, gen_pid: int, server_pid: int, server_skip_root: bool):
        super().__init__(daemon=True)
        self.args = (gen_pid, server_pid, server_skip_root)
        self.samples: list[tuple[float, float, float]] = []
        self.stop = threading.Event()

    def run(self) -> None:
        gen, server, skip = self.args
        while not self.stop.wait(SAMPLE_S):
            self.samples.append((time.monotonic(), tree_cpu_s(gen, False), tree_cpu_s(server, skip)))


def start_server(cmd: list[str]) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        ["taskset", "-c", "0", *cmd, "im", "server", "--port", "0"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    line = proc.stdout.readline()
    try:
        return proc, int(json.loads(line)["port"])
    except (ValueError, KeyError) as e:
        proc.kill()
        sys.exit(f"error: the server did not print its listening line: {line!r} ({e})")


def one_run(args, server_cmd: list[str], rate: float, seed: int) -> dict:
    server, port = start_server(server_cmd)
    skip_root = os.path.basename(server_cmd[0]) == "serverbench-ircd"  # its Python launcher
    try:
        cmd = [
            "taskset",
            "-c",
            "1",
            args.generator,
            "im",
            "client",
            "--port",
            str(port),
            "--mode",
            "latency",
            "--clients",
            str(args.clients),
            "--rate-per-s",
            str(rate),
            "--duration-s",
            str(args.duration_s),
            "--warmup-s",
            "1",
            "--drain-s",
            "2",
            "--seed",
            str(seed),
        ]
        gen = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
        sampler = Sampler(gen.pid, server.pid, skip_root)
        sampler.start()
        out, _ = gen.communicate(timeout=args.duration_s + 60 + args.clients * 0.05)
        sampler.stop.set()
        sampler.join()
        rec = json.loads(out)
        m = rec["metrics"]
        # the generator exits once every message is in (a short drain), so the schedule
        # ended about at the last sample; the window leaves EDGE_S out at either end
        s = sampler.samples
        t_end = s[-1][0]
        lo, hi = t_end - args.duration_s + EDGE_S, t_end - EDGE_S
        win = [x for x in s if lo <= x[0] <= hi]
        span = win[-1][0] - win[0][0]
        msgs = rate * span
        return {
            "gen_us": (win[-1][1] - win[0][1]) / msgs * 1e6,
            "server_us": (win[-1][2] - win[0][2]) / msgs * 1e6,
            "gen_record_us": m["client_cpu_share"] * m["schedule_s"] / max(m["messages_sent"], 1) * 1e6,
            "share": m["client_cpu_share"],
            # the busy-polling generator's CPU is all its wall time: its work is its loop's
            # busy time (absent from an older generator's record: nan)
            "gen_busy_us": (m.get("client_busy_per_message_s") or float("nan"))
            * (m["messages_sent"] + m["messages_delivered"])
            / max(m["messages_sent"], 1)
            * 1e6,
            "busy": m.get("client_busy_share", float("nan")),
            "late_p99_ms": (m.get("read_lateness_p99_s") or 0) * 1e3,
            "slip_p99_ms": (m["schedule_slip_p99_s"] or 0) * 1e3,
            "ok": rec["validation"]["ok"],
            "reason": rec["validation"]["reason"],
            "lost": m["messages_lost"],
            "p99_ms": (m["latency_p99_s"] or 0) * 1e3,
        }
    finally:
        if gen.poll() is None:
            gen.kill()
        server.stdin.close()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def main(argv: list[str]) -> int:
    if "--" in argv:
        i = argv.index("--")
        server_cmd, rest = argv[:i], argv[i + 1 :]
    else:
        server_cmd, rest = argv, []
    if not server_cmd:
        sys.exit("error: usage: measure_cost.py SERVER_COMMAND... -- [--rates R,R] [--repeats N]")
    p = argparse.ArgumentParser()
    p.add_argument("--rates", default="5000,20000")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--clients", type=int, default=1000)
    p.add_argument("--duration-s", type=float, default=10.0)
    p.add_argument("--generator", default=os.path.join(HERE, "bin", "serverbench-im-loadgen"))
    args = p.parse_args(rest)
    print(f"load average {os.getloadavg()[0]:.2f}; server {' '.join(server_cmd)}; {args.clients} clients")
    for rate in (float(r) for r in args.rates.split(",")):
        runs = [one_run(args, server_cmd, rate, seed) for seed in range(1, args.repeats + 1)]
        for r in runs:
            print(
                f"  rate {rate:>8.0f}: "
                + " ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items())
            )
        keys = ("gen_us", "server_us", "gen_record_us", "share", "gen_busy_us", "busy", "slip_p99_ms", "late_p99_ms")
        med = {k: statistics.median(r[k] for r in runs) for k in keys}
        print(
            f"median rate {rate:.0f}/s: generator {med['gen_us']:.2f} us/msg (record {med['gen_record_us']:.2f},"
            f" busy {med['gen_busy_us']:.2f}), server {med['server_us']:.2f} us/msg, generator CPU share"
            f" {med['share']:.3f}, busy share {med['busy']:.3f}, slip p99 {med['slip_p99_ms']:.3f} ms,"
            f" read lateness p99 {med['late_p99_ms']:.3f} ms, valid {sum(r['ok'] for r in runs)}/{len(runs)};"
            f" load average {os.getloadavg()[0]:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
