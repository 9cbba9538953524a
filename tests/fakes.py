"""Test backends: small fakes that answer tasks without a model.

- `QueueBackend`: answers from queues of outputs per task (the shape of simonw/llm's MockModel):
  a unit test of the mind says exactly what the "model" answers, and checks what was asked.
- `RandomBackend`: a random answer that is valid under each question's narrowed schema (its
  options, its counts, its lengths): whatever a model could say that passes validation. A town
  run on it must never crash, whatever the answers.
- `FakeServer`: an OpenAI-compatible chat endpoint on 127.0.0.1 that a test scripts step by step.
- `Asking`: the scripted stand-in itself, keeping each question it was asked with its prompt.
"""

from __future__ import annotations

import json
import random
import string
import threading
import time
from collections import defaultdict, deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from smalltown.llm.schema import request_schema
from smalltown.llm.tasks import Answer, Output, Task
from smalltown.scripted import ScriptedBackend


class QueueBackend:
    name = "queue"
    model = "queue"

    def __init__(self, answers: dict[str, list[Output | dict]] | None = None, default: "RandomBackend | None" = None):
        self.queues: dict[str, deque] = defaultdict(deque)
        for task, outs in (answers or {}).items():
            self.queues[task].extend(outs)
        self.default = default
        self.asked: list[tuple[Task, str]] = []

    def push(self, task: str, *outputs: Output | dict) -> None:
        self.queues[task].extend(outputs)

    def answer(self, task: Task, prompt: str) -> Answer:
        self.asked.append((task, prompt))
        queue = self.queues.get(task.name)
        if queue:
            out = queue.popleft()
            out = task.output.model_validate(out if isinstance(out, dict) else out.model_dump())
            return Answer(output=out, raw=out.model_dump_json())
        if self.default is None:
            raise AssertionError(f"QueueBackend: no answer queued for {task.name!r}")
        return self.default.answer(task, prompt)

    def of(self, name: str) -> list[Task]:
        """The tasks of that name asked so far."""
        return [t for t, _ in self.asked if t.name == name]

    def prompt(self, name: str, i: int = -1) -> str:
        """The prompt of the i-th task of that name asked (the last by default)."""
        return [p for t, p in self.asked if t.name == name][i]


def schema_value(rng: random.Random, node: dict, defs: dict) -> object:
    """A JSON value of the shape `node` asks (its `$defs` in `defs`), drawn from `rng`: a backend's
    answer before its task's own checks (RandomBackend, benchmarks/promptserver.py)."""
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if "enum" in node:
        return rng.choice(node["enum"])
    kind = node.get("type")
    if kind == "object":
        return {k: schema_value(rng, v, defs) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        lo, hi = node.get("minItems", 0), node.get("maxItems", 4)
        return [schema_value(rng, node.get("items", {}), defs) for _ in range(rng.randint(lo, min(hi, lo + 4)))]
    if kind == "integer":
        return rng.randint(node.get("minimum", 0), min(node.get("maximum", 100), node.get("minimum", 0) + 200))
    if kind == "boolean":
        return rng.random() < 0.5
    if node.get("pattern"):
        return f"{rng.randint(0, 23):02d}:{rng.choice((0, 15, 30, 45)):02d}"
    n = rng.randint(max(1, node.get("minLength", 0)), min(node.get("maxLength", 40), 40))
    return "".join(rng.choice(string.ascii_lowercase + "  ") for _ in range(n)).strip() or "x"


class RandomBackend:
    name = "random"
    model = "random"

    def __init__(self, seed: int = 0):
        self.rng = random.Random(seed)
        self.calls = 0

    def answer(self, task: Task, prompt: str) -> Answer:
        schema = request_schema(task)
        for _ in range(50):
            data = schema_value(self.rng, schema, schema.get("$defs", {}))
            try:
                out = task.output.model_validate(data)
            except ValueError:
                continue
            if not task.check(out):
                self.calls += 1
                return Answer(output=out, raw=out.model_dump_json())
        raise AssertionError(f"RandomBackend: no valid answer for {task.name}")


def completion(content: str | None, usage: dict | None = None, finish: str = "stop") -> dict:
    reply = {"id": "chatcmpl-1", "object": "chat.completion", "model": "fake",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": finish}]}
    if usage is not None:
        reply["usage"] = usage
    return reply


def send_json(handler: BaseHTTPRequestHandler, code: int, data: bytes, headers: dict | None = None) -> None:
    """Write a JSON response from a request handler."""
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    for k, v in (headers or {}).items():
        handler.send_header(k, v)
    handler.end_headers()
    handler.wfile.write(data)


class _Server(ThreadingHTTPServer):
    # socketserver listens with a backlog of 5: a client 16 wide opening connections at once has
    # the rest dropped, each retried by TCP a second later (benchmarks' in-flight figures included)
    request_queue_size = 128
    daemon_threads = True
    accepted = 0  # connections accepted so far (a kept-alive client makes few)

    def get_request(self):
        got = super().get_request()
        self.accepted += 1  # (only the serving thread accepts)
        return got


class Loopback:
    """An HTTP server on 127.0.0.1 in a thread of its own: `url` is its base URL (…/v1), `close()`
    stops it."""

    def serve(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


class FakeServer(Loopback):
    """An OpenAI-compatible chat endpoint. Each request takes the next scripted step, if any:
    ("status", code), ("error", (code, body)), ("sleep", seconds), ("content", text), ("reply", dict),
    ("raw", bytes), ("raw_stream", bytes: a whole response, status line included, then the
    connection closed) or ("drip", (pieces, seconds)): a stream of `pieces` chunks, one every
    `seconds`, whose end (sent whole, or cut off by the client going away) is counted in
    `finished` and `abandoned`;
    otherwise it answers `respond(request)` as content, after `delay` seconds: streamed
    (server-sent events, one chunk a character, then `usage` when asked for) when the request asks
    for a stream and `streams` is on, as llama-server does."""

    def __init__(self):
        self.steps: deque[tuple[str, object]] = deque()
        self.requests: list[dict] = []
        self.usage: dict | None = {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}
        self.delay = 0.0
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.respond = lambda request: json.dumps({"state": "brewing coffee"})
        self.streams = True
        self.finished = self.abandoned = 0  # drip steps sent whole, and cut off by the client
        fake = self

        class Handler(BaseHTTPRequestHandler):
            disable_nagle_algorithm = True  # (as model servers do: a kept-alive reply's head and body go at once)

            def log_message(self, *args):  # quiet
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                    step = fake.steps.popleft() if fake.steps else None
                    fake.in_flight += 1
                    fake.max_in_flight = max(fake.max_in_flight, fake.in_flight)
                self.counted = True
                try:
                    self.serve(step, body)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    pass
                finally:
                    self.done()

            def done(self):
                """No longer in flight: called before the response is written, since the client
                may send its next request the moment it has read this one."""
                if self.counted:
                    self.counted = False
                    with fake.lock:
                        fake.in_flight -= 1

            def serve(self, step, body):
                kind, arg = step or ("content", None)
                if kind == "sleep":
                    time.sleep(arg)
                    kind, arg = "content", None
                if kind == "status":
                    extra = {429: {"Retry-After": "0"}, 307: {"Location": "http://example.invalid/v1"}}.get(arg, {})
                    return self.send(arg, json.dumps({"error": {"message": f"scripted {arg}"}}).encode(), extra)
                if kind == "error":
                    return self.send(arg[0], arg[1].encode())
                if kind == "raw":
                    return self.send(200, arg)
                if kind == "reply":
                    return self.send(200, json.dumps(arg).encode())
                if kind == "drip":
                    return self.drip(*arg)
                if kind == "raw_stream":  # bytes written as they are, then the connection closed
                    self.done()
                    self.wfile.write(arg)
                    self.wfile.flush()
                    self.close_connection = True
                    return None
                time.sleep(fake.delay)
                content = arg if arg is not None else fake.respond(body)
                if body.get("stream") and fake.streams:
                    return self.stream(content, body)
                self.send(200, json.dumps(completion(content, fake.usage)).encode())

            def start_stream(self):
                self.done()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()

            def event(self, data: dict | str):
                self.wfile.write(f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode())
                self.wfile.flush()

            def stream(self, content, body):
                self.start_stream()
                self.event({"choices": [{"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}]})
                for ch in content or "":
                    self.event({"choices": [{"index": 0, "delta": {"content": ch}, "finish_reason": None}]})
                self.event({"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
                if fake.usage is not None and (body.get("stream_options") or {}).get("include_usage"):
                    self.event({"choices": [], "usage": fake.usage})
                self.event("[DONE]")

            def drip(self, pieces: int, seconds: float):
                self.start_stream()
                try:
                    for _ in range(pieces):
                        self.event({"choices": [{"index": 0, "delta": {"content": " "}, "finish_reason": None}]})
                        time.sleep(seconds)
                    self.event({"choices": [{"index": 0, "delta": {"content": "{}"}, "finish_reason": "stop"}]})
                    self.event("[DONE]")
                except OSError:  # the client went away: a streaming server ends the generation here
                    with fake.lock:
                        fake.abandoned += 1
                    return
                with fake.lock:
                    fake.finished += 1

            def send(self, code: int, data: bytes, headers: dict | None = None):
                self.done()
                send_json(self, code, data, headers)

        self.serve(Handler)

    def script(self, *steps: tuple[str, object]) -> None:
        self.steps.extend(steps)


class Asking(ScriptedBackend):
    """The stand-in, keeping each question it was asked with its prompt (from the crowd's threads)."""

    def __init__(self, seed: int):
        super().__init__(seed)
        self.asked: list[tuple[object, str]] = []
        self.lock = threading.Lock()

    def answer(self, task, prompt=""):
        with self.lock:
            self.asked.append((task, prompt))
        return super().answer(task, prompt)

    @property
    def tasks(self) -> list:
        return [task for task, _ in self.asked]
