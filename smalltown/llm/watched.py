"""Watched HTTP connections: a deadline for a whole exchange, and a way to cut one off at once.

urllib's `timeout` bounds each socket operation, so a server that sends a byte every few seconds
is never timed out. Here the connection's socket is registered, as it is made, with the thread's
current `Exchange`, whose timer (or a stop) shuts it down from outside: every read or write
blocked on it ends then, whatever the server does. An opener built with `HTTPHandler()` and
`HTTPSHandler()` makes such connections; the caller sets `current.exchange` around a request.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import urllib.request


class Exchange:
    """One request's connection, watched: past its deadline, or on a stop, its socket is shut down
    from another thread, which ends any read or write blocked on it at once. (Shut down, not
    closed: the thread using the socket closes it, so its descriptor is never reused under it.)"""

    def __init__(self, seconds: float):
        self.seconds = seconds
        self.why = ""  # "deadline" or "stopped", once cut off
        self._socks: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self.kill, ("deadline",))
        self._timer.daemon = True

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
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    try:  # the plain socket's shutdown, also under TLS: SSLSocket's own would drop its state mid-read
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:
        pass  # already closed, or never connected


current = threading.local()  # the exchange this thread is making: its connection registers there


def _watched(sock: socket.socket) -> socket.socket:
    exchange = getattr(current, "exchange", None)
    if exchange is not None:
        exchange.attach(sock)
    return sock


class _WatchedHTTP(http.client.HTTPConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = lambda *a, **k: _watched(socket.create_connection(*a, **k))


class _WatchedHTTPS(http.client.HTTPSConnection):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._create_connection = lambda *a, **k: _watched(socket.create_connection(*a, **k))

    def connect(self) -> None:
        super().connect()
        _watched(self.sock)  # the TLS socket replaces the plain one (which no longer owns the descriptor)


class HTTPHandler(urllib.request.HTTPHandler):
    def http_open(self, req):
        return self.do_open(_WatchedHTTP, req)


class HTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self):
        super().__init__()
        self._tls = ssl.create_default_context()

    def https_open(self, req):
        return self.do_open(_WatchedHTTPS, req, context=self._tls)
