"""A deliberately broken echo_flood server for tests. It follows the socket-server
lifecycle and, by mode (an optional first argument):

  --flip (default)  flips one byte in every 100,000 it echoes (the load generator must
                    then record the run `invalid`);
  --lie-under       echoes every byte faithfully but reports one 32 KiB chunk less read
                    and written than it did (only the harness's byte cross-check sees it);
  --lie-over        echoes faithfully but reports 64 MiB more read and written than it did
                    (more than any client could have sent within its in-flight window).

Usage: echo_broken_server.py [--flip|--lie-under|--lie-over] echo_flood server --port 0 ..."""

import json
import os
import selectors
import socket
import sys

BACKLOG = 64
MODES = {"--flip": 0, "--lie-under": -32768, "--lie-over": 64 * 2**20}  # mode -> counters' offset


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] in MODES else "--flip"
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(BACKLOG)
    ls.setblocking(False)
    port = ls.getsockname()[1]
    print(
        json.dumps(
            {
                "event": "listening",
                "benchmark": "echo_flood",
                "role": "server",
                "language": "python_threads",
                "address": "127.0.0.1",
                "port": port,
            }
        ),
        flush=True,
    )
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ, "listen")
    sel.register(sys.stdin.fileno(), selectors.EVENT_READ, "stdin")
    n_read = n_written = accepted = 0
    for _ in range(10_000_000):  # bounded
        stop = False
        for key, _ in sel.select(1.0):
            if key.data == "listen":
                c, _ = ls.accept()
                c.setblocking(True)
                accepted += 1
                sel.register(c, selectors.EVENT_READ, "conn")
            elif key.data == "stdin":
                stop = os.read(sys.stdin.fileno(), 64) in (b"", b"stop\n")
            else:
                c = key.fileobj
                try:
                    data = c.recv(32768)
                except OSError:
                    data = b""
                if not data:
                    sel.unregister(c)
                    c.close()
                    continue
                n_read += len(data)
                out = bytearray(data)
                for i in range(len(out)) if mode == "--flip" else ():
                    if (n_written + i) % 100_000 == 99_999:
                        out[i] ^= 0xFF
                try:
                    c.sendall(out)
                except OSError:  # the load generator hung up once it saw a wrong byte
                    sel.unregister(c)
                    c.close()
                    continue
                n_written += len(out)
        if stop:
            break
    rec = {
        "benchmark": "echo_flood",
        "role": "server",
        "language": "python_threads",
        "variant": "fair",
        "params": {"port": 0, "idle_timeout_s": 60},
        "metrics": {
            "elapsed_s": 0.1,
            "port": port,
            "connections_accepted": accepted,
            "bytes_read": max(0, n_read + MODES[mode]),
            "bytes_written": max(0, n_written + MODES[mode]),
            "connection_errors": 0,
            "stop_reason": "stdin_eof",
        },
        "validation": {"ok": True, "reason": None},
        "runtime": {"name": "python_threads", "version": "broken", "schedulers": 1},
    }
    print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
