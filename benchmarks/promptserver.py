"""An OpenAI-compatible server on 127.0.0.1 whose answers depend only on the prompt: a stand-in
for a model server with greedy decoding, to measure concurrency and check determinism over HTTP.

Each POST to /chat/completions is answered with a JSON instance of the request's own schema
(`response_format`, both dialects), drawn from a random generator seeded by a hash of the
messages and the schema: the same prompt always gets the same answer, whenever and however
concurrently it is asked. The answer is schema-valid, not always valid for the task (the
client's validator may refuse it and fall back): that is deterministic too. With `stand_in` (a
scripted backend) it answers as the stand-in answers the request's task instead, which a
`Telling` client sends, typed, in a private body field (`smalltown_task`): the town then lives as
with scripted answers (realistic call counts), over real HTTP, the stand-in reading typed inputs
only.

How long an answer takes: a fixed `latency`, or a `LatencyModel` (benchmarks/latency.py): its N
slots (more requests wait for one), the prompt's tokens not cached for its key (the request's
X-Session-ID, the agent, else one shared key), the answer's tokens, decode slowed by the slots busy
when it starts.

The server keeps every request (`Request`: start and end at the server, seed, answer hash, agent,
tokens), so a benchmark can measure requests in flight and chains of calls that wait on each
other (`in_flight_average`, `longest_chain`); GET /log returns them as JSON. `ServerProcess` runs
it in a subprocess of its own, so that its work takes none of the client's CPU (nor its GIL), and
can be killed mid-run. Used by benchmarks/concurrency.py, client_cpu.py and the tests.

    python benchmarks/promptserver.py [--latency 0.02 | --model gpu|cpu] [--stand-in SEED]  (prints its URL)
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import importlib
import json
import random
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path

if __name__ == "__main__":  # (run as a server: the project and tests/ on the path)
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests")]
from benchmarks.latency import MODELS, LatencyModel, PrefixCache, tokens  # noqa: E402
from fakes import Loopback, completion, schema_value, send_json  # noqa: E402  (tests/ is on the path: pytest puts it there, benchmarks/concurrency.py too)
from smalltown.cli.llama_server import dies_with_parent  # noqa: E402
from smalltown.llm.backend import Backend  # noqa: E402
from smalltown.llm.openai_compat import OpenAIBackend  # noqa: E402
from smalltown.llm.tasks import Task  # noqa: E402

TASK_FIELD = "smalltown_task"  # the private body field a Telling client sends its task in


@dataclass(frozen=True)
class Request:
    """One answered request as the server saw it."""

    start: float  # time.monotonic() once its body was read (the clock is the machine's: any process)
    end: float  # ... and when its answer was about to be written
    seed: int | None  # the `seed` field it carried, if any
    digest: str  # the hash its answer was drawn from
    agent: str | None = None  # its X-Session-ID header: who asked
    prompt_tokens: int = 0  # the messages' tokens (benchmarks/latency.py `tokens`)
    uncached: int = 0  # ... of them not in the prefix cache (with a latency model)
    answer_tokens: int = 0


def instance(schema: dict, rng: random.Random) -> object:
    """A JSON value of the shape `schema` asks (as `schema.request_schema` writes them): the tests'
    own generator (tests/fakes.py), which keeps to lengths, bounds and enums."""
    return schema_value(rng, schema, schema.get("$defs", {}))


def _schema(body: dict) -> dict:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt.get("json_schema", {}).get("schema", {})
    return fmt.get("schema", {})


def answer_for(body: dict) -> tuple[str, str]:
    """(the answer's JSON text, the hash it was drawn from): a function of the messages and the
    schema only (not the seed, the temperature, the time or the order of arrival)."""
    key = json.dumps([body.get("messages"), _schema(body)], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(key.encode()).hexdigest()
    rng = random.Random(int(digest[:16], 16))
    return json.dumps(instance(_schema(body), rng)), digest


def task_field(task: Task) -> dict:
    """A task as a Telling client sends it: its class and its typed inputs."""
    kind = type(task)
    return {"class": f"{kind.__module__}:{kind.__qualname__}", "inputs": task.model_dump(mode="json")}


def task_from(field: dict) -> Task:
    """The task a Telling client sent (`task_field`); a class outside smalltown is refused."""
    module, _, name = field["class"].partition(":")
    if not module.startswith("smalltown."):
        raise ValueError(f"{field['class']!r} is not a smalltown task")
    kind = getattr(importlib.import_module(module), name)
    if not (isinstance(kind, type) and issubclass(kind, Task)):
        raise ValueError(f"{field['class']!r} is not a task")
    return kind.model_validate(field["inputs"])


class Telling(OpenAIBackend):
    """The openai backend, sending the task behind each prompt with it (`smalltown_task`), so that
    a server with `stand_in` answers as the scripted backend would."""

    def _request(self, task: Task, prompt: str, mode: str, seed: int | None = None, agent: str | None = None) -> dict:
        return {**super()._request(task, prompt, mode, seed, agent), TASK_FIELD: task_field(task)}


class PromptServer(Loopback):
    """The server, in a thread: `url` is its base URL (…/v1); `close()` stops it. With `stand_in`
    (a scripted backend) it answers each request as the stand-in answers the task a `Telling`
    client sent; else from the hash of the prompt (`answer_for`). With `model`, each answer takes
    the latency model's time, else `latency` seconds."""

    def __init__(self, latency: float = 0.02, stand_in: Backend | None = None, model: LatencyModel | None = None):
        self.latency = latency  # seconds each answer takes, as a model's would (without a model)
        self.stand_in = stand_in
        self.model = model
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.cache = PrefixCache()
        self.slots = threading.BoundedSemaphore(model.slots) if model else None
        self.busy = 0  # slots decoding now
        self.peak = 0  # the most slots ever decoding at once
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # (as model servers do: a kept-alive reply's head and body go at once)

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                if self.path.rstrip("/").endswith("/log"):
                    with server.lock:
                        return self.send(json.dumps([asdict(r) for r in server.requests]).encode())
                self.send(b'{"object": "list", "data": [{"id": "prompt-hash", "object": "model"}]}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                start = time.monotonic()
                content, digest = answer_for(body)
                prompt = body["messages"][-1]["content"]
                if server.stand_in is not None:
                    content = server.stand_in.answer(task_from(body[TASK_FIELD]), prompt).raw
                agent = self.headers.get("X-Session-ID")
                text = "".join(m["content"] for m in body["messages"])
                uncached = server.wait(agent, text, content)
                seed = body.get("seed")
                with server.lock:
                    server.requests.append(Request(start, time.monotonic(), seed if isinstance(seed, int) else None,
                                                   digest, agent, tokens(text), uncached, tokens(content)))
                usage = {"prompt_tokens": len(json.dumps(body["messages"])) // 4,
                         "completion_tokens": len(content) // 4, "total_tokens": 0}
                named = {"id": f"chatcmpl-{digest[:12]}", "model": "prompt-hash"}
                try:
                    if body.get("stream"):
                        self.stream(content, usage, named)
                    else:
                        self.send(json.dumps({**completion(content, usage), **named}).encode())
                except (BrokenPipeError, ConnectionResetError):  # the client gave up waiting
                    self.close_connection = True

            def stream(self, content: str, usage: dict, named: dict) -> None:
                """The answer as server-sent events, chunked on a kept-alive connection (as
                llama-server and vLLM send it): the text in one chunk, the finish, the usage."""
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                events = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": content},
                                        "finish_reason": None}]},
                          {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                          {"choices": [], "usage": usage}]
                data = "".join(f"data: {json.dumps({**named, **e})}\n\n" for e in events) + "data: [DONE]\n\n"
                raw = data.encode()
                self.wfile.write(b"%x\r\n%s\r\n0\r\n\r\n" % (len(raw), raw))

            def send(self, data: bytes) -> None:
                send_json(self, 200, data)

        self.serve(Handler)

    def wait(self, key: str | None, prompt: str, answer: str) -> int:
        """Take the answer's time (a fixed latency, or the model's in one of its slots); the
        prompt's uncached tokens (0 without a model)."""
        if self.model is None:
            time.sleep(self.latency)
            return 0
        with self.slots:
            with self.lock:
                self.busy += 1
                busy = self.busy
                self.peak = max(self.peak, busy)
            try:
                uncached = self.cache.uncached(key or "", prompt)
                time.sleep(self.model.seconds(uncached, tokens(answer), busy))
            finally:
                with self.lock:
                    self.busy -= 1
        return uncached

    def __enter__(self) -> "PromptServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ServerProcess:
    """A PromptServer in a subprocess of its own: `url`, `requests` (its log, fetched), `kill()`
    (at once, as a crashed server goes), `close()`. `stand_in`: the scripted backend's seed."""

    def __init__(self, latency: float = 0.02, model: str | None = None, stand_in: int | None = None):
        args = [sys.executable, str(Path(__file__).resolve()), "--latency", str(latency)]
        args += ["--model", model] if model else []
        args += ["--stand-in", str(stand_in)] if stand_in is not None else []
        # (a killed benchmark or test takes its server with it)
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True, preexec_fn=dies_with_parent())
        self.url = self.proc.stdout.readline().strip()  # (printed once it listens)
        if not self.url.startswith("http://"):
            self.close()
            raise RuntimeError(f"the prompt server did not start (exit {self.proc.poll()})")
        self._log: list[Request] = []

    @property
    def requests(self) -> list[Request]:
        """Its requests so far (after a kill: those fetched last)."""
        if self.proc.poll() is None:
            with urllib.request.urlopen(f"{self.url}/log", timeout=30) as resp:
                self._log = [Request(**r) for r in json.load(resp)]
        return self._log

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait(10)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)
        self.proc.stdout.close()

    def __enter__(self) -> "ServerProcess":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def in_flight_average(requests: list[Request], wall: float) -> float:
    """Requests in flight on average over `wall` seconds (time-weighted: their summed durations
    over the time)."""
    return sum(r.end - r.start for r in requests) / wall if wall > 0 else 0.0


def max_in_flight(requests: list[Request]) -> int:
    """The most requests in flight at one moment."""
    edges = sorted([(r.start, 1) for r in requests] + [(r.end, -1) for r in requests], key=lambda e: (e[0], e[1]))
    most = now = 0
    for _, d in edges:
        now += d
        most = max(most, now)
    return most


def longest_chain(requests: list[Request]) -> int:
    """The most requests that ran one after another (each began after the one before it ended):
    the calls that waited on each other, the run's critical path in calls. Requests that overlap
    ran in parallel. Ticks run one after another, so this is the sum over ticks of each tick's
    longest chain. (Two independent calls that happened not to overlap count as a chain: an
    upper bound.)"""
    ordered = sorted(requests, key=lambda r: r.end)
    ends = [r.end for r in ordered]
    best: list[int] = []  # best[i]: the longest chain ending with ordered[i]; prefix maxima in `upto`
    upto: list[int] = []
    for r in ordered:
        j = bisect.bisect_right(ends, r.start, 0, len(best))  # those that ended before it began
        length = 1 + (upto[j - 1] if j else 0)
        best.append(length)
        upto.append(max(length, upto[-1] if upto else 0))
    return upto[-1] if upto else 0


def main() -> None:
    p = argparse.ArgumentParser(description="a prompt server on 127.0.0.1: prints its base URL, serves until stopped")
    p.add_argument("--latency", type=float, default=0.02, help="seconds each answer takes (without --model)")
    p.add_argument("--model", choices=sorted(MODELS), help="the latency model instead (benchmarks/latency.py)")
    p.add_argument("--stand-in", type=int, metavar="SEED", help="answer as the scripted backend of this seed")
    a = p.parse_args()
    stand_in = None
    if a.stand_in is not None:
        from smalltown.scripted import ScriptedBackend
        stand_in = ScriptedBackend(a.stand_in)
    server = PromptServer(a.latency, stand_in, MODELS[a.model] if a.model else None)
    print(server.url, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
