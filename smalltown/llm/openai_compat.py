"""The OpenAI-compatible HTTP backend: llama-server, vLLM, Ollama (`/v1/chat/completions`).

Decoding is constrained with the question's request schema (the same schema the llama backend
decodes under, with its field descriptions, its options and its counts), sent as the server takes
it (llm/structured.py: `json_schema`, else a GBNF `grammar`, else `json_object`), for at
most the answer's token budget (`schema.max_answer_tokens`); every answer still goes through the
validator, since a server's schema grammar does not enforce every rule. Two kinds of
failure are kept apart: the server cannot be reached or keeps failing (`BackendError`: the run
cannot go on without it), and the server answers but the answer is unusable (`UnusableAnswer`:
the Asker falls back to the scripted backend and logs it). Each `answer` is one attempt; both kinds
are retried a bounded number of times by the Retry wrapper (llm/wrappers.py), by the policy this
backend declares (`retries`, `backoff`, a 429's Retry-After).

The client is httpx as `httpx2` (Pydantic's maintained fork, same API; httpx's last release is
from 2024; the openai SDK depends on it), one pooled keep-alive client per server
(llm/endpoints.py); not the SDK, which would add retries and timeouts to switch off, fields such
as `grammar` only through `extra_body`, and pydantic parsing of every reply, CPU a run with many
requests in flight cannot spare. Each request names the agent who asks (endpoints.identity: the
`X-Session-ID` and `x-smg-routing-key` headers, the body's `user`), for a router's affinity.

`timeout` is a deadline for a whole exchange (connecting, sending, every read of the reply): a
server that drips a byte every few seconds is cut off at it all the same. Several base URLs: each
agent pinned to one (endpoints.pin), `max_concurrency` in flight on each, named in the call's `model`.

Each exchange's socket is watched (`Exchange`): at the deadline, or when the run stops
(`abort`), it is shut down from outside, which ends whatever read or write is blocked on it.
The deadline starts once one of the endpoint's slots is ours, when the request is sent; the
start-up check (`connect`) has the same deadline. Answers are streamed (llm/streamed.py), so a
server that notices its client has gone ends the generation; what cannot be helped: a server
that ignores `stream` (it answers whole) keeps generating, and so does one that does not watch
its connections (llama-cpp-python's server does not, for a request that is not streamed).
"""

from __future__ import annotations

import json
import os
import math
import socket
import threading
from typing import Iterator, Sequence

import httpx2

from smalltown.llm.backend import DEFAULT_CONTEXT, SEED_BITS, Answer, Capabilities, Stopped, estimate_prompt
from smalltown.llm.endpoints import BackendError, Endpoint, endpoints, identity, pin
from smalltown.llm.fit import estimate
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.structured import described, refuses, structured_fields
from smalltown.llm.streamed import StreamError, read_stream
from smalltown.llm.tasks import RULES, Task
from smalltown.llm.validate import UnusableAnswer, parse_answer
from smalltown.llm.wrappers import RetryPolicy, Transient
from smalltown.llm.watched import Exchange, current

__all__ = ["BackendError", "OpenAIBackend"]

# The fixed first message of every request: identical across tasks and agents, so a server's
# prefix cache reuses it (the persona card follows, at the top of the user message).
MAX_RESPONSE_BYTES = 4_000_000  # an answer is at most 64k characters (validate.MAX_ANSWER_CHARS)
MAX_RETRY_AFTER = 30.0  # seconds: the most a 429's Retry-After header makes us wait


class _Transport(Exception):
    """One failed exchange with the server (internal; raised on as Transient, to be retried)."""

    def __init__(self, what: str, retry: bool = True, wait: float = 0.0, body: str = "",
                 status: int | None = None):
        super().__init__(what)
        self.what = what
        self.status = status  # the HTTP status, when the server answered with one
        self.retry = retry
        self.wait = wait  # the server's Retry-After, in seconds
        self.body = body  # the head of an HTTP error's body


class OpenAIBackend:
    name = "openai"

    def __init__(self, base_url: str | Sequence[str], model: str = "local", api_key_env: str | None = None,
                 timeout: float = 60.0, retries: int = 3, backoff: float = 0.5, temperature: float = 0.7,
                 max_concurrency: int = 4, context: int = DEFAULT_CONTEXT, seed: int | None = None):
        if not isinstance(timeout, (int, float)) or not 0 < timeout <= 86400 or math.isnan(timeout):
            raise BackendError(f"timeout {timeout!r}: the seconds a request may take must be a number "
                               "from 0 to 86400")
        if retries < 0 or max_concurrency < 1 or backoff < 0 or context < 1:
            raise ValueError("need retries >= 0, max_concurrency >= 1, backoff >= 0, context >= 1")
        # the servers, each agent pinned to one (llm/endpoints.py); each has max_concurrency slots
        self.endpoints: list[Endpoint] = endpoints(base_url, max_concurrency)
        self.base_url, self.url = self.endpoints[0].base_url, self.endpoints[0].url  # (the first)
        self.model = model
        self.api_key_env = api_key_env  # the variable's name only; the key itself is never kept in the open
        self.timeout = float(timeout)  # seconds a whole request may take: connect, send, every read
        self.retries = retries
        self.backoff = backoff
        self.temperature = temperature
        self.context = context  # the server's window (--ctx): the Asker fits prompts to it
        self.max_concurrency = max_concurrency
        self.seed = seed  # the run's sampling seed: each request carries its question's (backend.question_seed)
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key_env:
            key = os.environ.get(api_key_env, "").strip()
            if not key:
                raise BackendError(f"environment variable {api_key_env} is not set: it should hold the "
                                   f"API key for {self.base_url}")
            self._headers["Authorization"] = f"Bearer {key}"
        self._live: dict[int, Exchange] = {}  # exchanges in flight, by id (read without a lock by abort)
        self._stopping = threading.Event()

    def __repr__(self) -> str:
        urls = self.base_url if len(self.endpoints) == 1 else [e.base_url for e in self.endpoints]
        return f"OpenAIBackend({urls!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    @property
    def structured(self) -> str:
        """How answers are constrained (llm/structured.py): the first mode the (first) server takes."""
        return self.endpoints[0].structured

    @structured.setter
    def structured(self, mode: str) -> None:
        for e in self.endpoints:  # (a test's: every server starts in `mode`)
            e.structured = mode

    def endpoint(self, agent: str | None) -> Endpoint:
        """The server that answers `agent`'s questions (endpoints.pin: a hash of the name)."""
        return self.endpoints[pin(agent or "", len(self.endpoints))]

    @property
    def can(self) -> Capabilities:
        # every server takes max_concurrency at once: the sim asks that many per server
        return Capabilities(context=self.context, count=self.count,
                            max_concurrency=self.max_concurrency * len(self.endpoints),
                            connect=self.connect, abort=self.abort, about=self._about(), seed=self.seed,
                            pinned=True,  # who asks: its server, and its identity for a router
                            retry=RetryPolicy(self.retries, backoff=self.backoff, max_wait=MAX_RETRY_AFTER,
                                              seeded=self.seed is not None))

    def _about(self) -> str:
        """The start-up line: how answers are constrained, and by how many servers."""
        if len({e.structured for e in self.endpoints}) == 1:
            about = described(self.structured)
        else:  # (each server found its own mode)
            about = "; ".join(f"{e.base_url}: {described(e.structured)}" for e in self.endpoints)
        n = len(self.endpoints)
        return about if n == 1 else (f"{n} servers, each agent pinned to one by a hash of its name, "
                                     f"{self.max_concurrency} requests in flight on each; {about}")

    def count(self, prompt: str) -> int:
        """The prompt's tokens, estimated (the server's tokenizer is not at hand): Backend.count."""
        return estimate_prompt(prompt)

    def count_tokens(self, text: str) -> int:
        """A piece of text's tokens, estimated: Backend.count_tokens."""
        return estimate(text)

    def connect(self, timeout: float | None = None) -> None:
        """Reach every server once (GET /models) before a run writes anything: any HTTP answer,
        even an error status, shows a server is there; no answer raises BackendError. Bounded by
        `timeout`, else by the backend's own (--timeout): a busy server may take that long."""
        for e in self.endpoints:
            try:
                self._exchange("GET", f"{e.base_url}/models", None, self._headers,
                               self.timeout if timeout is None else timeout, e, read=False)  # its status is enough
            except _Transport as t:
                if t.status is None:  # an HTTP error status still shows a server is there
                    raise BackendError(f"OpenAI-compatible server at {e.base_url}: {t.what}") from None

    def abort(self) -> None:
        """Stop: every request in flight is cut off and raises Stopped, and so does every later
        one. Takes no lock (it may run in a signal handler, on a thread holding one)."""
        self._stopping.set()
        for exchange in list(self._live.values()):
            exchange.kill("stopped")

    # --- answering ------------------------------------------------------------------------------

    def answer(self, task: Task, prompt: str, seed: int | None = None, attempt: int = 0,
               agent: str | None = None) -> Answer:
        """One attempt: a validated answer, with the tokens the server says it spent; Transient
        (retried by llm/wrappers.Retry, then a BackendError) when the exchange fails, UnusableAnswer
        (with its cost, `usage`) when the answer cannot be used. A server that refuses the
        structured-output mode is asked again at once in the next (llm/structured.py): that is
        not a retry, and the answer's note says so. `seed` (the question's) is sent as the
        request's `seed`, plus the attempt: a retry samples anew. `agent` (who asks) picks the
        server, which the answer's `model` names when there are several ("MODEL @ URL")."""
        where = self.endpoint(agent)
        model = f"{self.model} @ {where.base_url}" if len(self.endpoints) > 1 else ""
        note = ""
        sent = None if seed is None else (seed + attempt) % (1 << SEED_BITS)
        while True:
            mode = where.structured
            try:
                reply = self._post(json.dumps(self._request(task, prompt, mode, sent, agent)).encode(), where,
                                   agent)
            except _Transport as e:
                if refuses(mode, e.status, e.body):
                    switched = where.refused(mode, e.what)
                    note = "; ".join(x for x in (note, switched) if x)
                    continue
                failure = Transient(f"OpenAI-compatible server at {where.url}: {e.what}", BackendError,
                                    retry=e.retry, wait=e.wait)
                failure.source = model  # which server failed (wrappers.Fallback counts each one's failures)
                raise failure from None
            break
        usage = _usage(reply)
        if "usage" not in reply and "chunks" in reply:  # a stream without usage: its pieces, our estimate
            usage = (estimate_prompt(prompt), reply["chunks"], 0)
        try:
            raw, finish = _content(reply)
            output = _parse(task, raw, finish)
        except UnusableAnswer as e:
            e.usage, e.note, e.model = usage, note, model
            raise
        return Answer(output=output, raw=raw, prompt_tokens=usage[0], completion_tokens=usage[1],
                      cached_tokens=usage[2], note=note, model=model)

    # --- one exchange ---------------------------------------------------------------------------

    def _request(self, task: Task, prompt: str, mode: str, seed: int | None = None, agent: str | None = None) -> dict:
        """The rules, then the prompt (which ends with the answer's shape and the question), the
        answer constrained in `mode`; `user`: the agent who asks, if one does."""
        request = {
            "model": self.model,
            "messages": [{"role": "system", "content": RULES}, {"role": "user", "content": prompt}],
            **structured_fields(task, mode),
            "temperature": self.temperature,
            "max_tokens": max_answer_tokens(task),
            # streamed: a server then ends a generation whose client has gone (llm/streamed.py)
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if seed is not None:  # (llama-server, vLLM, Ollama and OpenAI all read `seed`)
            request["seed"] = seed
        if agent:
            request["user"] = agent
        return request

    def _post(self, body: bytes, where: Endpoint, agent: str | None = None) -> dict:
        """The server's reply as a JSON object, or _Transport saying what went wrong."""
        headers = self._headers if not agent else {**self._headers, **identity(agent)}
        with where.slots:  # (the deadline starts once a slot is ours: when the request is sent)
            data = self._exchange("POST", where.url, body, headers, self.timeout, where)
        if isinstance(data, dict):  # a stream, read into a reply
            return data
        if len(data) > MAX_RESPONSE_BYTES:
            raise _Transport(f"the response is over {MAX_RESPONSE_BYTES} bytes")
        try:
            reply = json.loads(data)
        except (ValueError, RecursionError):
            reply = None
        if not isinstance(reply, dict) or not isinstance(reply.get("choices"), list):
            raise _Transport(f"the response is not an OpenAI chat completion: {_excerpt(data)}")
        return reply

    def _exchange(self, method: str, url: str, body: bytes | None, headers: dict[str, str], seconds: float,
                  where: Endpoint, read: bool = True) -> bytes | dict:
        """Send the request and read its reply (at most MAX_RESPONSE_BYTES + 1 bytes; a stream of
        server-sent events is read into the reply it adds up to, a dict), all within `seconds`;
        _Transport saying what went wrong, or Stopped."""
        exchange = Exchange(seconds)
        self._live[id(exchange)] = exchange
        current.exchange = exchange
        try:
            if self._stopping.is_set():  # (checked once registered: an abort from now on reaches it)
                raise Stopped
            with exchange:
                try:
                    with where.client.stream(method, url, content=body, headers=headers, timeout=seconds) as resp:
                        if not 200 <= resp.status_code < 300:
                            failure = _http_failure(resp)  # (reads the error's body: still within the deadline)
                        elif read and resp.headers.get("content-type", "").startswith("text/event-stream"):
                            chunks = resp.iter_bytes()
                            data, failure = read_stream(chunks, MAX_RESPONSE_BYTES), None
                            _rest(chunks)
                        elif read:
                            data, failure = _head(resp.iter_bytes(), MAX_RESPONSE_BYTES + 1), None
                        else:  # (read all the same, a short body: its connection then stays in the pool)
                            _head(resp.iter_bytes(), 65536)
                            data, failure = b"", None
                except httpx2.HTTPError as e:  # refused, reset, timed out (connecting, sending, reading), undecodable
                    failure = _Transport(_describe(_cause(e), seconds))
                except StreamError as e:
                    failure = _Transport(str(e))
        finally:
            current.exchange = None
            self._live.pop(id(exchange), None)
        if exchange.why == "stopped":
            raise Stopped
        if exchange.why == "deadline":  # whatever the reads said, it was the deadline that ended them
            raise _Transport(f"no answer within {seconds:g} s (timed out: --timeout sets the deadline of a whole request)")
        if failure is not None:
            raise failure
        return data


def _head(chunks: Iterator[bytes], limit: int) -> bytes:
    """The first `limit` bytes of a body (the rest is not read: the connection is then dropped)."""
    got = bytearray()
    for chunk in chunks:
        got += chunk
        if len(got) >= limit:
            break
    return bytes(got[:limit])


def _rest(body: Iterator[bytes]) -> None:
    """Read a stream's end after [DONE], so its connection goes back to the pool; a server closing
    it there instead (llama-cpp-python's, at times) has answered all the same."""
    try:
        _head(body, 65536)
    except httpx2.HTTPError:
        pass


def _cause(e: BaseException) -> BaseException:
    """The socket's own error under httpx's (ConnectError from ConnectionRefusedError, ...)."""
    while e.__cause__ is not None or e.__context__ is not None:
        inner = e.__cause__ or e.__context__
        if isinstance(inner, OSError):
            return inner
        e = inner
    return e


def _excerpt(data: bytes | str, n: int = 300) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
    text = " ".join(text.split())
    return repr(text[:n] + ("..." if len(text) > n else ""))


def _describe(reason: object, timeout: float) -> str:
    if isinstance(reason, (TimeoutError, socket.timeout, httpx2.TimeoutException)):
        return f"no answer within {timeout:g} s (timed out)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused (is the server running?)"
    if isinstance(reason, socket.gaierror):
        return f"cannot resolve the host name ({reason})"
    if isinstance(reason, BaseException):
        return f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__
    return str(reason)


def _http_failure(resp: httpx2.Response) -> _Transport:
    try:
        body = _head(resp.iter_bytes(), 2000).decode("utf-8", "replace")
    except (httpx2.HTTPError, StreamError):  # the body of an error is a courtesy
        body = ""
    detail = _excerpt(body)
    code = resp.status_code
    if 300 <= code < 400:
        where = resp.headers.get("Location", "?")
        return _Transport(f"HTTP {code} redirect to {where} (set the base URL to the final address)", retry=False,
                          status=code)
    wait = 0.0
    if code == 429:
        try:
            wait = max(0.0, float(resp.headers.get("Retry-After", "0")))
        except ValueError:
            wait = 0.0  # an HTTP date; the backoff will do
    return _Transport(f"HTTP {code} {resp.reason_phrase}: {detail}", retry=code == 429 or code >= 500, wait=wait,
                      body=body, status=code)


def _usage(reply: dict) -> tuple[int, int, int]:
    """(prompt, completion, cached prompt) tokens as the server reports them, 0 for what it does not."""
    usage = reply.get("usage")
    if not isinstance(usage, dict):
        return 0, 0, 0
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else 0
    return _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")), _count(cached)


def _count(v: object) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**53 else 0


def _content(reply: dict) -> tuple[str, str]:
    """The answer text and why generation stopped; UnusableAnswer when there is no text."""
    choices = reply["choices"]
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    message = choice.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    finish = choice.get("finish_reason")
    finish = finish if isinstance(finish, str) else ""
    if not isinstance(content, str):
        refusal = message.get("refusal") if isinstance(message, dict) else None
        why = f"the model refused: {refusal}" if isinstance(refusal, str) and refusal else "the answer has no text"
        raise UnusableAnswer(f"{why} (finish_reason {finish or 'missing'})", json.dumps(reply)[:2000])
    return content, finish


def _parse(task: Task, raw: str, finish: str):
    try:
        return parse_answer(task, raw)
    except UnusableAnswer as e:
        if finish == "length":  # the token limit, not the model, ended it: say so in the log
            raise UnusableAnswer(f"cut off at max_tokens={max_answer_tokens(task)}: {e.reason}", raw,
                                 kind="cut off") from None
        raise
