"""python_threads: one OS thread per connection (256 KiB stacks), blocking recv/sendall."""

from __future__ import annotations

import os
import selectors
import signal
import socket
import sys
import threading
import time

import sbcommon

LANG = "python_threads"
STACK_BYTES = 256 * 1024
RECV_BYTES = 32768


def serve(params: dict, variant: str) -> int:
    t0 = time.monotonic()
    threading.stack_size(STACK_BYTES)
    c = sbcommon.Counters()
    lock = threading.Lock()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sbcommon.HOST, int(params["port"])))
    ls.listen(sbcommon.BACKLOG)
    ls.settimeout(0.2)
    port = ls.getsockname()[1]
    stop: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append("signal"))

    def handle(conn: socket.socket) -> None:
        try:
            while True:
                data = conn.recv(RECV_BYTES)
                if not data:
                    break
                with lock:
                    c.bytes_read += len(data)
                conn.sendall(data)
                with lock:
                    c.bytes_written += len(data)
        except OSError:
            with lock:
                c.errors += 1
        finally:
            conn.close()
            with lock:
                c.closed()

    def accept_loop() -> None:
        while not stop:
            try:
                conn, _ = ls.accept()
            except TimeoutError:
                continue
            except OSError:
                if stop:
                    return
                with lock:
                    c.errors += 1
                continue
            conn.settimeout(None)
            with lock:
                c.accepted += 1
                c.open += 1
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=accept_loop, daemon=True).start()
    sbcommon.listening(LANG, port)
    sel = selectors.DefaultSelector()
    try:
        sel.register(sys.stdin.fileno(), selectors.EVENT_READ)
    except (ValueError, PermissionError, OSError):
        pass
    idle = float(params["idle_timeout_s"])
    while not stop:
        for _key, _ in sel.select(0.2) if sel.get_map() else []:
            why = sbcommon.stdin_stop(os.read(sys.stdin.fileno(), 256))
            if why:
                stop.append(why)
        if not sel.get_map():
            time.sleep(0.2)
        with lock:
            if c.open == 0 and time.monotonic() - c.idle_since >= idle:
                stop.append("idle_timeout")
    ls.close()
    with lock:
        sbcommon.record(LANG, params, variant, c, port, stop[0], t0)
    os._exit(0)  # connection threads are daemons: closing the process closes their sockets
