"""python_threads: one OS thread per connection (256 KiB stacks), blocking recv + send.

Two processes, so that the stop does not wait for the GIL. With thousands of connection
threads waking at once (the load generator closing every connection), a thread that
needs the GIL waits behind all of them: 16,384 threads kept the main thread from seeing
its stdin close for 6-40 s. So the process the harness starts is a small FRONT: it binds
the listening socket, forks the WORKER (the thread-per-connection server proper), prints
the listening line, watches stdin / SIGTERM / the idle timeout and the worker; on stop it
kills the worker (SIGKILL: the kernel closes every socket), reads the counters and prints
the record. The worker's threads count into shared memory (an anonymous shared mapping of
int64), each connection into its own slot (one writer per slot: no lock per chunk, no lost
update); accepted / open / errors change under the worker's lock.

Counting (what the record's bytes_written means, exactly): a thread counts the bytes it
hands to send() BEFORE the call and takes back what the call did not accept (a short send
returns how much it took; a send that fails took nothing). So a byte the client has
verified is always counted, whenever the worker is killed; a kill during a send can leave
at most that send's unaccepted bytes counted, only while a client is still connected
(saturate mode), never more than the bytes read."""

from __future__ import annotations

import ctypes
import mmap
import os
import resource
import selectors
import signal
import socket
import sys
import threading
import time
import traceback

import sbcommon

LANG = "python_threads"
STACK_BYTES = 256 * 1024
RECV_BYTES = 32768
ACCEPTED, OPEN, ERRORS, HEAD = 0, 1, 2, 3  # shared int64 slots; then (read, written) per connection slot
MAX_SLOTS = 1 << 20
PR_SET_PDEATHSIG = 1


def _slots() -> int:
    """Connection slots: as many connections as the process can have open at once."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_SLOTS if hard == resource.RLIM_INFINITY else min(MAX_SLOTS, max(64, hard))


def serve(params: dict, variant: str) -> int:
    t0 = time.monotonic()
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((sbcommon.HOST, int(params["port"])))
    ls.listen(sbcommon.BACKLOG)
    port = ls.getsockname()[1]
    slots = _slots()
    shm = mmap.mmap(-1, 8 * (HEAD + 2 * slots))  # anonymous and shared with the worker
    v = memoryview(shm).cast("q")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            _worker(ls, v, slots)
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(1)
    ls.close()  # the worker accepts
    stop: list[str] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append("signal"))
    sbcommon.listening(LANG, port)
    died = _front(pid, v, float(params["idle_timeout_s"]), stop)
    if died is not None:
        print(f"error: the python_threads connection process died ({died})", file=sys.stderr)
        return 1
    try:
        os.kill(pid, signal.SIGKILL)  # every connection closes with it; nothing to join
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):  # already reaped (the same SIGTERM as the front)
        pass
    c = sbcommon.Counters(accepted=v[ACCEPTED], errors=v[ERRORS])
    c.bytes_read = sum(v[HEAD::2])
    c.bytes_written = sum(v[HEAD + 1 :: 2])
    sbcommon.record(LANG, params, variant, c, port, stop[0], t0)
    return 0


def _front(pid: int, v, idle: float, stop: list[str]) -> str | None:
    """Wait for a stop (stdin EOF or `stop`, SIGTERM, idle timeout); None, or how the worker died."""
    sel = selectors.DefaultSelector()
    try:
        sel.register(sys.stdin.fileno(), selectors.EVENT_READ)
    except (ValueError, PermissionError, OSError):
        pass
    last_active, last_accepted = time.monotonic(), 0
    while not stop:
        for _key, _ in sel.select(0.2) if sel.get_map() else []:
            why = sbcommon.stdin_stop(os.read(sys.stdin.fileno(), 256))
            if why:
                stop.append(why)
        if not sel.get_map():
            time.sleep(0.2)
        done, status = os.waitpid(pid, os.WNOHANG)
        if done and not stop:
            return f"exit status {status}" if os.WIFEXITED(status) else f"signal {os.WTERMSIG(status)}"
        now = time.monotonic()
        if v[OPEN] > 0 or v[ACCEPTED] != last_accepted:
            last_active, last_accepted = now, v[ACCEPTED]
        elif now - last_active >= idle:
            stop.append("idle_timeout")
    return None


def _worker(ls: socket.socket, v, slots: int) -> None:
    """The thread-per-connection server: accepts for ever (the front kills it)."""
    try:
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the front
    except (OSError, AttributeError):
        pass
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)  # stdout is the front's (its record)
    threading.stack_size(STACK_BYTES)
    lock = threading.Lock()
    free = list(range(slots - 1, -1, -1))

    def handle(conn: socket.socket, k: int) -> None:
        r, w = HEAD + 2 * k, HEAD + 2 * k + 1
        try:
            while True:
                data = conn.recv(RECV_BYTES)
                if not data:
                    break
                v[r] += len(data)
                view = memoryview(data)
                while view:  # sendall, counting before each send (see the module docstring)
                    v[w] += len(view)
                    try:
                        sent = conn.send(view)
                    except OSError:
                        v[w] -= len(view)
                        raise
                    v[w] -= len(view) - sent
                    view = view[sent:]
        except OSError:
            with lock:
                v[ERRORS] += 1
        finally:
            conn.close()
            with lock:
                free.append(k)
                v[OPEN] -= 1

    while True:
        try:
            conn, _ = ls.accept()
        except OSError:
            with lock:
                v[ERRORS] += 1
            time.sleep(0.01)  # e.g. out of file descriptors: let connections close
            continue
        conn.settimeout(None)
        with lock:
            if not free:
                v[ERRORS] += 1
                conn.close()
                continue
            k = free.pop()
            v[ACCEPTED] += 1
            v[OPEN] += 1
        threading.Thread(target=handle, args=(conn, k), daemon=True).start()
