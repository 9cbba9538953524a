"""An OpenAI-compatible server on 127.0.0.1 whose answers depend only on the prompt: a stand-in
for a model server with greedy decoding, to measure concurrency and check determinism over HTTP.

Each POST to /chat/completions is answered, after a fixed `latency`, with a JSON instance of the
request's own schema (`response_format`, both dialects), drawn from a random generator seeded
by a hash of the messages and the schema: the same prompt always gets the same answer, whenever
and however concurrently it is asked. The answer is schema-valid, not always valid for the task
(the client's validator may refuse it and fall back): that is deterministic too.

The server keeps every request's start and end (time.monotonic, at the server) and the `seed`
it carried, so a benchmark can measure requests in flight and chains of calls that wait on each
other (`in_flight_average`, `longest_chain`). Used by benchmarks/concurrency.py and the tests.
"""

from __future__ import annotations

import bisect
import contextlib
import hashlib
import json
import random
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from http.server import BaseHTTPRequestHandler

if __name__ == "__main__":  # (run as a server: the project and tests/ on the path)
    sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[1] / "tests")]
from fakes import Loopback, completion, schema_value, send_json  # (tests/ is on the path: pytest puts it there, benchmarks/concurrency.py too)
from smalltown.llm.backend import Answer, Backend
from smalltown.llm.openai_compat import OpenAIBackend
from smalltown.llm.tasks import Task


@dataclass(frozen=True)
class Request:
    """One answered request as the server saw it."""

    start: float  # time.monotonic() once its body was read
    end: float  # ... and when its answer was about to be written
    seed: int | None  # the `seed` field it carried, if any
    digest: str  # the hash its answer was drawn from


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


class Telling(OpenAIBackend):
    """The openai backend, telling the server in its process the task behind each prompt (in
    `tasks`), so that a server with `stand_in` answers as the scripted backend would: the town
    then lives as it does with scripted answers (realistic call counts), over real HTTP."""

    def __init__(self, *args, tasks: dict[str, Task], **kw):
        super().__init__(*args, **kw)
        self.tasks = tasks

    def answer(self, task: Task, prompt: str, **kw) -> Answer:
        self.tasks[prompt] = task
        return super().answer(task, prompt, **kw)


class PromptServer(Loopback):
    """The server, in a thread: `url` is its base URL (…/v1); `close()` stops it. With `stand_in`
    (a scripted backend) it answers each prompt as the stand-in answers its task, which a
    `Telling` client puts in `tasks`; else from the hash of the prompt (`answer_for`)."""

    def __init__(self, latency: float = 0.02, stand_in: Backend | None = None):
        self.latency = latency  # seconds each answer takes, as a model's would
        self.stand_in = stand_in
        self.tasks: dict[str, Task] = {}
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # (as model servers do: a kept-alive reply's head and body go at once)

            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                self.send(b'{"object": "list", "data": [{"id": "prompt-hash", "object": "model"}]}')

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                start = time.monotonic()
                content, digest = answer_for(body)
                if server.stand_in is not None:
                    prompt = body["messages"][-1]["content"]
                    content = server.stand_in.answer(server.tasks[prompt], prompt).raw
                time.sleep(server.latency)
                seed = body.get("seed")
                with server.lock:
                    server.requests.append(Request(start, time.monotonic(), seed if isinstance(seed, int) else None,
                                                   digest))
                reply = completion(content, {"prompt_tokens": len(json.dumps(body["messages"])) // 4,
                                             "completion_tokens": len(content) // 4, "total_tokens": 0})
                self.send(json.dumps({**reply, "id": f"chatcmpl-{digest[:12]}", "model": "prompt-hash"}).encode())

            def send(self, data: bytes) -> None:
                send_json(self, 200, data)

        self.serve(Handler)

    def __enter__(self) -> "PromptServer":
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


@contextlib.contextmanager
def served(latency: float = 0.02):
    """A PromptServer in a subprocess of its own (its work takes none of this process's CPU): its base URL."""
    proc = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(latency)], stdout=subprocess.PIPE,
                            text=True, cwd=Path(__file__).resolve().parents[1])
    try:
        yield proc.stdout.readline().strip()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--serve", action="store_true")
    p.add_argument("--latency", type=float, default=0.02)
    a = p.parse_args()
    s = PromptServer(a.latency)
    print(s.url, flush=True)
    threading.Event().wait()
