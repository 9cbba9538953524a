"""A slow-drip HTTP server on 127.0.0.1, in a thread: it answers every request, but one byte at a time.

An OpenAI-compatible client that only times out each read waits on it forever: every read gets its
byte in time. GET /models answers at once (so a run gets past its connection check) unless
`drip_models`; a POST gets its status line and headers at once, or dripped too with `drip_headers`,
then a body dripped one space every `interval` seconds, for as long as the client listens.
"""

from __future__ import annotations

import socketserver
import threading
import time


class _Handler(socketserver.StreamRequestHandler):
    server: "DripServer"

    def handle(self) -> None:
        request = self.rfile.readline(65536)
        if not request:
            return
        length = 0
        while True:  # the headers: only Content-Length matters
            line = self.rfile.readline(65536)
            if line in (b"\r\n", b"\n", b""):
                break
            name, _, value = line.decode("latin-1").partition(":")
            if name.strip().lower() == "content-length":
                length = int(value.strip())
        if length:
            self.rfile.read(length)
        method, path = request.split()[:2]
        self.server.requests.append((method.decode(), path.decode(), time.monotonic()))
        if method == b"GET" and not self.server.drip_models:
            body = b'{"object": "list", "data": []}'
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
                             b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
            return
        head = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n"
                b"Connection: close\r\n\r\n")
        try:
            if self.server.drip_headers or (method == b"GET" and self.server.drip_models):
                for i in range(len(head)):
                    self._drip(head[i:i + 1])
            else:
                self.wfile.write(head)
                self.wfile.flush()
            while not self.server.closing.is_set():
                self._drip(b" ")
        except OSError:
            pass  # the client gave up: what a deadline is for

    def _drip(self, byte: bytes) -> None:
        if self.server.closing.wait(self.server.interval):
            raise OSError("server closing")
        self.wfile.write(byte)
        self.wfile.flush()


class DripServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, interval: float = 0.5, drip_headers: bool = False, drip_models: bool = False):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.interval = interval
        self.drip_headers = drip_headers
        self.drip_models = drip_models
        self.requests: list[tuple[str, str, float]] = []  # (method, path, when it came)
        self.closing = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"

    def posts(self) -> int:
        return sum(1 for m, _, _ in self.requests if m == "POST")

    def __enter__(self) -> "DripServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.closing.set()
        self.shutdown()
        self.server_close()
