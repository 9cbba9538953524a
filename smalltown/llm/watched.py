"""Watched HTTP connections: a deadline for a whole exchange, and a way to cut one off at once.

An HTTP client's timeouts bound each socket operation, so a server that sends a byte every few
seconds is never timed out. Here each exchange is an `Exchange` whose timer (or a stop) shuts its
connection's socket down from outside: every read or write blocked on it ends then, whatever the
server does. Connections are pooled and kept alive (llm/endpoints.py), so a socket is not the
exchange's own: `WatchedBackend` (an httpcore network backend) makes connections whose every read
and write first registers the socket with the calling thread's current exchange (`current`), which
a caller sets around a request. A connection cut off this way fails its read, and the pool drops
it; an idle one shut down in the pool reads as closed and is dropped before reuse.
"""

from __future__ import annotations

import heapq
import socket
import ssl
import threading
import time
from typing import Any, Iterable

from httpcore2 import NetworkBackend, NetworkStream, SyncBackend


class Exchange:
    """One request's connection, watched: past its deadline, or on a stop, its socket is shut down
    from another thread, which ends any read or write blocked on it at once. (Shut down, not
    closed: the thread using the socket closes it, so its descriptor is never reused under it.)"""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.why = ""  # "deadline" or "stopped", once cut off
        self.over = False  # the exchange has ended: its deadline no longer matters
        self._socks: list[socket.socket] = []

    def attach(self, sock: socket.socket) -> None:
        self._socks.append(sock)
        if self.why:  # cut off while it was connecting
            _shut(sock)

    def kill(self, why: str) -> None:
        if not self.why:
            self.why = why
        for sock in list(self._socks):
            _shut(sock)

    def __enter__(self) -> "Exchange":
        _watchdog.watch(self, time.monotonic() + self.seconds)
        return self

    def __exit__(self, *exc) -> None:
        self.over = True


class _Watchdog:
    """One thread for every exchange's deadline (a timer thread per request would cost a thread's
    start, CPU under the GIL, on every call): a heap of deadlines, the earliest waited for."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Exchange]] = []
        self._wake = threading.Condition()
        self._count = 0
        self._thread: threading.Thread | None = None

    def watch(self, exchange: Exchange, deadline: float) -> None:
        with self._wake:
            self._count += 1
            heapq.heappush(self._due, (deadline, self._count, exchange))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="deadlines", daemon=True)
                self._thread.start()
            elif self._due[0][2] is exchange:  # earlier than the one waited for
                self._wake.notify()

    def _run(self) -> None:
        with self._wake:
            while True:
                now = time.monotonic()
                while self._due and self._due[0][0] <= now:
                    exchange = heapq.heappop(self._due)[2]
                    if not exchange.over:
                        exchange.kill("deadline")
                self._wake.wait(self._due[0][0] - now if self._due else None)


_watchdog = _Watchdog()


def _shut(sock: socket.socket) -> None:
    try:  # the plain socket's shutdown, also under TLS: SSLSocket's own would drop its state mid-read
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed, or never connected


current = threading.local()  # the exchange this thread is making: its connection registers there


class _WatchedStream(NetworkStream):
    """A pooled connection's stream: registers its socket with the exchange that uses it."""

    def __init__(self, inner: NetworkStream):
        self._inner = inner
        self._sock: socket.socket = inner.get_extra_info("socket")
        self._exchange: Exchange | None = None
        self._watch()

    def _watch(self) -> None:
        exchange = getattr(current, "exchange", None)
        if exchange is not None and exchange is not self._exchange:  # (once per exchange: cheap)
            self._exchange = exchange
            exchange.attach(self._sock)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        self._watch()
        return self._inner.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._watch()
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                  timeout: float | None = None) -> NetworkStream:
        # the TLS socket replaces the plain one (which no longer owns the descriptor)
        return _WatchedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class WatchedBackend(NetworkBackend):
    """httpcore's blocking socket backend, its connections watched (`_WatchedStream`)."""

    def __init__(self) -> None:
        self._plain = SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> NetworkStream:
        return _WatchedStream(self._plain.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> NetworkStream:
        return _WatchedStream(self._plain.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._plain.sleep(seconds)
