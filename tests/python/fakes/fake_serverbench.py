#!/usr/bin/env python3
"""A fake native benchmark program for the harness tests.

Usage: fake_serverbench.py [mode=MODE] [lang=LANG] <native args as in spec/cli.json>
The harness passes SERVERBENCH_CORES (and the language's own env vars) to a replaced
command. Modes:
  ok            print a valid record, exit 0 (schedulers = SERVERBENCH_CORES)
  sleep         sleep far past any timeout
  crash         die with SIGSEGV
  exit3         exit code 3, nothing on stdout
  garbage       print garbage on stdout, exit 0
  twolines      print the record twice
  alloc         allocate memory well past the budget (touching every page)
  wrong_sched   report one scheduler more than asked
  wrong_params  report other params than asked
  fail          print a record with validation.ok false, exit 1
  system_limit  spawn: fail with 'error: system_limit' and exit 1 when processes > FAKE_LIMIT
  spawn_alloc   spawn: allocate FAKE_BYTES_PER_PROCESS * processes bytes, then report
  slow          sleep FAKE_SLEEP seconds (default 0.3), then behave as ok
  affinity      as ok, and print the CPU affinity on stderr
  flaky         fail (exit 3) the first time for a given FAKE_STATE file, ok afterwards
  spawn_timeout spawn: sleep far past any timeout when processes > FAKE_LIMIT; crash (SIGSEGV)
                when processes > FAKE_CRASH (if set) and below that; else ok
"""

import json
import os
import signal
import sys
import time

args = sys.argv[1:]
mode, lang = "ok", os.environ.get("FAKE_LANG")
while args and "=" in args[0] and not args[0].startswith("--"):
    k, v = args.pop(0).split("=", 1)
    if k == "mode":
        mode = v
    elif k == "lang":
        lang = v

if args and args[0] == "--version":
    print(
        json.dumps(
            {
                "program": "serverbench",
                "program_version": "fake-1",
                "language": lang or "go",
                "runtime": {"name": "fake", "version": "1", "schedulers": 1},
            }
        )
    )
    sys.exit(0)

bench = args[0]
flags = dict(zip(args[1::2], args[2::2]))
cores = int(os.environ.get("SERVERBENCH_CORES") or os.environ.get("GOMAXPROCS") or 1)


def num(s):
    return float(s) if "." in s else int(s)


if bench == "pingping":
    params = {
        "message_bytes": int(flags["--message-bytes"]),
        "repetitions": int(flags["--repetitions"]),
        "payload": flags["--payload"],
    }
    r = params["repetitions"]
    metrics = {"elapsed_s": 0.001, "messages": 2 * r, "ns_per_message": 0.001e9 / (2 * r)}
    validation = {"ok": True, "received_a": r, "received_b": r, "payload_errors": 0}
elif bench == "spawn":
    n = int(flags["--processes"])
    params = {"processes": n}
    metrics = {
        "spawn_call_s": 0.001,
        "all_ready_s": 0.002,
        "rss_bytes_before": 1000,
        "rss_bytes_after": 2000,
        "bytes_per_process": 1000 / n,
        "runtime_memory_bytes": None,
    }
    validation = {"ok": True, "ready": n}
elif bench == "throughput":
    params = {
        "pairs": int(flags["--pairs"]),
        "message_bytes": int(flags["--message-bytes"]),
        "duration_s": num(flags["--duration-s"]),
        "report_every": int(flags["--report-every"]),
        "payload": flags["--payload"],
    }
    metrics = {
        "exchanges": 100,
        "elapsed_s": 0.01,
        "exchanges_per_s": 10000.0,
        "paper_msgs_per_min": 600000.0,
        "samples": [[0.0, 0], [0.01, 100]],
    }
    validation = {
        "ok": True,
        "reported_exchanges": 100,
        "counted_exchanges": 100,
        "payload_errors": 0,
        "min_pair_exchanges": 50,
    }
elif bench == "recovery":
    # one crash per 1/lambda, every restart timed: lambda x T samples in each array
    lam, d, pairs = num(flags["--crashes-per-s"]), num(flags["--duration-s"]), int(flags["--pairs"])
    n = int(lam * d)
    params = {
        "pairs": pairs,
        "message_bytes": int(flags["--message-bytes"]),
        "duration_s": d,
        "crashes_per_s": lam,
        "fault": flags["--fault"],
        "seed": int(flags["--seed"]),
        "report_every": int(flags["--report-every"]),
    }
    metrics = {
        "exchanges": 1000,
        "elapsed_s": d,
        "exchanges_per_s": 1000 / d,
        "samples": [[0.0, 0], [d, 1000]],
        "crashes_injected": n,
        "aggregator_crashes": 0,
        "restarts": n,
        "crash_times_s": [(k + 0.5) / lam for k in range(n)],
        "restart_latency_s": [1e-6 * (1 + k % 7) for k in range(n)],
        "messages_sent": 2000 + n,
        "messages_received": 2000,
        "messages_lost": n,
        "exchanges_counted": 1000 + n,
        "exchanges_lost": n,
        "supervision": "fake supervisor",
    }
    validation = {
        "ok": True,
        "crashes_injected": n,
        "restarts": n,
        "restart_latency_samples": n,
        "workers_alive": 2 * pairs,
        "workers_expected": 2 * pairs,
        "messages_balance": True,
        "exchanges_balance": True,
        "payload_errors": 0,
        "min_pair_exchanges": 1,
    }
else:
    print(f"error: unknown sub-command {bench}", file=sys.stderr)
    sys.exit(2)

record = {
    "benchmark": bench,
    "language": lang or "go",
    "variant": flags.get("--variant", "fair"),
    "params": params,
    "metrics": metrics,
    "validation": validation,
    "runtime": {"name": "fake", "version": "1", "schedulers": cores},
}


def emit(code=0):
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()
    sys.exit(code)


def hog(nbytes):
    chunks = []
    step = 16 * 1024 * 1024
    got = 0
    while got < nbytes:
        b = bytearray(step)
        b[::4096] = b"x" * len(b[::4096])
        chunks.append(b)
        got += step
        time.sleep(0.005)
    return chunks


if mode == "ok":
    emit()
elif mode == "sleep":
    time.sleep(600)
elif mode == "crash":
    print("about to crash", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
elif mode == "exit3":
    print("something went wrong", file=sys.stderr)
    sys.exit(3)
elif mode == "jvm_oom":  # the JVM's own heap limit: exit 1, no record
    print('Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', file=sys.stderr)
    sys.exit(1)
elif mode == "go_oom":  # Go's runtime aborts with exit 2 (not a usage error)
    print("fatal error: out of memory", file=sys.stderr)
    sys.exit(2)
elif mode == "garbage":
    print("this is not json {")
    sys.exit(0)
elif mode == "twolines":
    line = json.dumps(record)
    print(line)
    print(line)
elif mode == "alloc":
    keep = hog(int(os.environ.get("FAKE_ALLOC_BYTES", str(2 * 1024**3))))
    emit()
elif mode == "wrong_sched":
    record["runtime"]["schedulers"] = cores + 1
    emit()
elif mode == "wrong_params":
    if bench == "pingping":
        record["params"]["repetitions"] += 1
    else:
        record["language"] = "erlang" if record["language"] != "erlang" else "go"
    emit()
elif mode == "fail":
    record["validation"]["ok"] = False
    emit(1)
elif mode == "system_limit":
    if params.get("processes", 0) > int(os.environ.get("FAKE_LIMIT", "100000")):
        print("error: system_limit: too many processes", file=sys.stderr)
        sys.exit(1)
    emit()
elif mode == "spawn_timeout":
    n = params.get("processes", 0)
    if n > int(os.environ.get("FAKE_LIMIT", "100000")):
        time.sleep(600)
    if os.environ.get("FAKE_CRASH") and n > int(os.environ["FAKE_CRASH"]):
        os.kill(os.getpid(), signal.SIGSEGV)
    emit()
elif mode == "spawn_alloc":
    keep = hog(int(os.environ.get("FAKE_BYTES_PER_PROCESS", "1000")) * params["processes"])
    emit()
elif mode == "slow":
    time.sleep(float(os.environ.get("FAKE_SLEEP", "0.3")))
    emit()
elif mode == "affinity":
    print("affinity=" + ",".join(str(c) for c in sorted(os.sched_getaffinity(0))), file=sys.stderr)
    emit()
elif mode == "flaky":
    state = os.environ["FAKE_STATE"]
    if not os.path.exists(state):
        open(state, "w").close()
        sys.exit(3)
    emit()
else:
    print(f"fake: unknown mode {mode}", file=sys.stderr)
    sys.exit(2)
