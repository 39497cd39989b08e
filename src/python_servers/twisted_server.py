"""twisted: the epoll reactor, a Protocol whose dataReceived writes the data back."""

from __future__ import annotations

import signal
import time

from twisted.internet import epollreactor

epollreactor.install()

import sbcommon  # noqa: E402
from twisted.internet import protocol, reactor, stdio, task  # noqa: E402

LANG = "twisted"


def serve(params: dict, variant: str) -> int:
    t0 = time.monotonic()
    c = sbcommon.Counters()
    stop: list[str] = []

    def finish(why: str) -> None:
        if not stop:
            stop.append(why)
            reactor.callLater(0, reactor.stop)

    class Echo(protocol.Protocol):
        def connectionMade(self) -> None:
            c.accepted += 1
            c.open += 1

        def dataReceived(self, data: bytes) -> None:
            c.bytes_read += len(data)
            self.transport.write(data)
            c.bytes_written += len(data)  # handed to the transport (it writes everything before closing)

        def connectionLost(self, reason=None) -> None:
            c.closed()

    class Stdin(protocol.Protocol):
        def dataReceived(self, data: bytes) -> None:
            if sbcommon.stdin_stop(data):
                finish("stop_line")

        def connectionLost(self, reason=None) -> None:
            finish("stdin_eof")

    factory = protocol.Factory.forProtocol(Echo)
    lp = reactor.listenTCP(int(params["port"]), factory, backlog=sbcommon.BACKLOG, interface=sbcommon.HOST)
    port = lp.getHost().port
    idle = float(params["idle_timeout_s"])

    def check_idle() -> None:
        if c.open == 0 and time.monotonic() - c.idle_since >= idle:
            finish("idle_timeout")

    def started() -> None:
        signal.signal(signal.SIGTERM, lambda *_: reactor.callFromThread(finish, "signal"))
        try:
            stdio.StandardIO(Stdin())
        except OSError:
            pass
        task.LoopingCall(check_idle).start(0.2, now=False)
        sbcommon.listening(LANG, port)

    reactor.callWhenRunning(started)
    reactor.run(installSignalHandlers=False)
    sbcommon.record(LANG, params, variant, c, port, stop[0] if stop else "signal", t0)
    import os

    os._exit(0)
