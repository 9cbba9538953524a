"""The servers the OpenAI-compatible backend asks: one or several `--base-url`s.

With several, each agent's questions all go to one of them, chosen by a stable hash of the agent's
name (`pin`): its persona card and recent memories, the head of every prompt it sends, then stay
in that server's prefix cache, and which server answers a question does not depend on timing or
threads, so a run against deterministic servers has the same digest as against one. No scheduler,
no re-pinning: a server that fails fails its agents' questions as one server would (retries, then
the scripted stand-in for an unusable answer, a stop when it is gone); moving them elsewhere
would lose the cache and the determinism. For failover, put a router in front
(vllm-router, sglang's router) and give its one address: every request names the agent who asks
(`identity`), so a router hashing it keeps each agent on one server and moves it when that fails.

Each endpoint has its own requests-in-flight limit (`--concurrency` each) and finds its own
structured-output mode (llm/structured.py): replicas of different servers may take different ones.
Each has one HTTP client (httpx2) whose pool keeps as many connections alive as it has slots: 64
requests in flight are 64 connections made once, not a handshake per request.
"""

from __future__ import annotations

import hashlib
import ipaddress
import threading
import urllib.parse
import urllib.request
from typing import Sequence

import httpcore2
import httpx2

from smalltown.llm.backend import BackendUnavailable
from smalltown.llm.structured import MODES, next_mode
from smalltown.llm.watched import WatchedBackend


class BackendError(BackendUnavailable, RuntimeError):
    """The server cannot be used: unreachable, timing out, refusing the request, or not
    speaking the OpenAI protocol. Not a model answer: a run cannot continue without it."""


class _Pool(httpx2.HTTPTransport):
    """httpx's own transport over a pool of `slots` kept-alive connections made by WatchedBackend
    (llm/watched.py: each exchange's deadline and stop reach its socket), through `proxy` if any.
    (httpx's constructor takes no network backend: the pool it would build is replaced.)"""

    def __init__(self, slots: int, proxy: str | None):
        tls = httpx2.create_ssl_context()
        common = dict(ssl_context=tls, max_connections=slots, max_keepalive_connections=slots,
                      network_backend=WatchedBackend())
        if proxy is None:
            self._pool = httpcore2.ConnectionPool(**common)
        else:
            self._pool = httpcore2.HTTPProxy(proxy_url=proxy, **common)


def _proxy(parts: urllib.parse.SplitResult) -> str | None:
    """The environment's proxy for this address (as urllib reads it: *_proxy, no_proxy), never one
    for a local server."""
    if is_loopback(parts.hostname or "") or urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


def pin(agent: str, endpoints: int) -> int:
    """The endpoint (its index) that answers `agent`: a hash of the name (sha256, not Python's
    `hash`, which differs between processes), the same in every run and on every machine."""
    return int.from_bytes(hashlib.sha256(agent.encode()).digest()[:8], "big") % endpoints


_PLAIN = "".join(chr(c) for c in range(32, 127) if chr(c) != "%")  # what a header carries as it is


def identity(agent: str) -> dict[str, str]:
    """The headers that tell a router who asks (vllm-router: X-Session-ID; sglang: x-smg-routing-key);
    a name beyond printable ASCII percent-encoded (a header is ASCII; the router only hashes it)."""
    key = urllib.parse.quote(agent, safe=_PLAIN)
    return {"X-Session-ID": key, "x-smg-routing-key": key}


def url_problem(text: str) -> str | None:
    """What makes `text` no server address (an http(s) URL with a host, and a port if any in range),
    said with an example; None when it is one. urllib's own ValueError would surface as a bug."""
    example = "e.g. http://127.0.0.1:8080/v1"
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # (raises for a port that is not a number from 0 to 65535)
    except ValueError as e:
        return f"{text[:80]!r} is not a URL ({e}); {example}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{text[:80]!r} is not an http(s) address with a host; {example}"
    return None


class Endpoint:
    """One server: its address, its HTTP client (a pool of kept-alive connections), its requests in flight, and the
    structured-output mode it takes (the first of MODES it has not refused)."""

    def __init__(self, base_url: str, max_concurrency: int):
        wrong = url_problem(base_url)
        if wrong:
            raise BackendError(f"base URL {wrong}")
        parts = urllib.parse.urlsplit(base_url)
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        # No redirects: a redirect is a misconfigured base URL, and following it would resend the
        # API key elsewhere. No cookies or environment settings: the proxy is chosen here.
        self.client = httpx2.Client(transport=_Pool(max_concurrency, _proxy(parts)), follow_redirects=False,
                                    trust_env=False)
        self.slots = threading.BoundedSemaphore(max_concurrency)  # its requests in flight, across threads
        self.structured = MODES[0]
        self._switch = threading.Lock()

    def refused(self, mode: str, what: str) -> str:
        """The server refused `mode`: move on to the next (once, whichever thread sees it first),
        and say so for the call log; BackendError when it refuses every mode."""
        with self._switch:
            if self.structured != mode:  # another request moved on already
                return ""
            after = next_mode(mode)
            if after is None:
                raise BackendError(f"OpenAI-compatible server at {self.url} refuses every structured-output "
                                   f"mode ({', '.join(MODES)}): {what}")
            self.structured = after
        return f"structured output: {after} (the server refused {mode}: {what})"


def endpoints(base_urls: str | Sequence[str], max_concurrency: int) -> list[Endpoint]:
    """The backend's endpoints, in the order given (the order pins agents: keep it between runs)."""
    urls = [base_urls] if isinstance(base_urls, str) else list(base_urls)
    if not urls:
        raise BackendError("no base URL: give --base-url (e.g. http://127.0.0.1:8080/v1), once per server")
    found = [Endpoint(u, max_concurrency) for u in urls]
    seen = [e.base_url for e in found]
    twice = sorted({u for u in seen if seen.count(u) > 1})
    if twice:
        raise BackendError(f"base URL {twice[0]} is given twice: give each server once")
    return found


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
