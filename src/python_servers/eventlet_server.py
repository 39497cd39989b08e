"""eventlet: a green thread per connection, recv(16384) then sendall, a pool of 32,768
(as the original)."""

from __future__ import annotations

import os
import signal
import sys
import time

import eventlet
import sbcommon
from eventlet import hubs

LANG = "eventlet"
RECV_BYTES = 16384
POOL = 32768


def serve(params: dict, variant: str) -> int:
    t0 = time.monotonic()
    c = sbcommon.Counters()
    ls = eventlet.listen((sbcommon.HOST, int(params["port"])), backlog=sbcommon.BACKLOG)
    port = ls.getsockname()[1]
    stop: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append("signal"))
    pool = eventlet.GreenPool(POOL)

    def handle(conn) -> None:
        try:
            while True:
                data = conn.recv(RECV_BYTES)
                if not data:
                    break
                c.bytes_read += len(data)
                conn.sendall(data)
                c.bytes_written += len(data)
        except OSError:
            c.errors += 1
        finally:
            conn.close()
            c.closed()

    def accept_loop() -> None:
        while not stop:
            try:
                conn, _ = ls.accept()
            except OSError:
                if stop:
                    return
                c.errors += 1
                continue
            c.accepted += 1
            c.open += 1
            pool.spawn_n(handle, conn)

    def stdin_loop() -> None:
        fd = sys.stdin.fileno()
        try:
            os.set_blocking(fd, False)
        except OSError:
            return
        while not stop:
            try:
                hubs.trampoline(fd, read=True, timeout=0.5)
            except eventlet.timeout.Timeout:
                continue
            except OSError:
                return
            try:
                why = sbcommon.stdin_stop(os.read(fd, 256))
            except BlockingIOError:
                continue
            if why:
                stop.append(why)

    eventlet.spawn_n(accept_loop)
    eventlet.spawn_n(stdin_loop)
    sbcommon.listening(LANG, port)
    idle = float(params["idle_timeout_s"])
    while not stop:
        eventlet.sleep(0.2)
        if c.open == 0 and time.monotonic() - c.idle_since >= idle:
            stop.append("idle_timeout")
    ls.close()
    sbcommon.record(LANG, params, variant, c, port, stop[0], t0)
    os._exit(0)
