"""A streamed chat completion (`"stream": true`, server-sent events) read into the reply a
non-streamed request gets, so the backend reads one shape whichever the server sent.

Why stream at all: a server that streams notices when the client goes away (at the deadline, on a
stop) and ends that generation, where a non-streamed request it has started it finishes for no
one, holding up the requests behind it. Measured on llama-cpp-python 0.3.36's server (SmolLM2-135M,
one request at a time): a request cut off after 1 s of a 600-token answer left the next one waiting
10-13 s when not streamed, 0.25 s when streamed; three cut off at once (one generating, two queued,
under a GBNF grammar) left it waiting 42 s, against 0.35 s streamed.

The answer's text is the chunks' `delta.content` joined, as the server generated it (measured on
the same server and seed, its prompt cached alike: 19 of 19 tasks' answers byte-identical streamed
and not); the tokens
are the stream's `usage` chunk when the server sends one (`stream_options.include_usage`: llama.cpp's
llama-server, vLLM, Ollama, OpenAI), else `usage` is missing and `chunks` says how many pieces of
text came (llama-cpp-python's server sends one per token and no usage).
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator

MAX_LINE = 1 << 20  # bytes of one line of the stream: a chunk is one token's delta, far below


class StreamError(Exception):
    """The stream is not a chat completion's, or the server reported an error inside it."""


def _lines(chunks: Iterable[bytes], limit: int) -> Iterator[bytes]:
    """The lines of a body that arrives in pieces (each with its newline), at most `limit` bytes."""
    read = 0
    rest = b""
    for chunk in chunks:
        read += len(chunk)
        if read > limit:
            raise StreamError(f"the stream is over {limit} bytes")
        buf, start = rest + chunk, 0
        while (end := buf.find(b"\n", start)) >= 0:
            yield buf[start:end + 1]
            start = end + 1
        rest = buf[start:]
        if len(rest) > MAX_LINE:
            raise StreamError(f"a line of the stream is over {MAX_LINE} bytes")
    if rest:
        yield rest


def read_stream(body: Iterable[bytes], limit: int) -> dict:
    """The chat completion a stream of server-sent events (its body, in pieces as they come) adds
    up to, reading at most `limit` bytes: {"choices": [{"message": {"content", "refusal"?},
    "finish_reason"}], "usage"?, "chunks"}."""
    text: list[str] = []
    refusal: list[str] = []
    finish = None
    usage = None
    chunks = 0
    seen = False  # any chunk with a choice
    data: list[str] = []  # the data lines of the event being read
    lines = _lines(body, limit)
    while True:
        line = next(lines, b"")
        if len(line) > MAX_LINE:
            raise StreamError(f"a line of the stream is over {MAX_LINE} bytes")
        end = not line
        line_text = line.decode("utf-8", "replace").rstrip("\r\n")
        if line_text.startswith("data:"):
            data.append(line_text[5:].removeprefix(" "))
            continue
        if line_text and not end:
            continue  # an event's name, id, retry, or a comment (": ping")
        if data:  # a blank line (or the end) closes an event
            payload, data = "\n".join(data), []
            if payload.strip() == "[DONE]":
                break
            chunk = _chunk(payload)
            if chunk.get("usage"):
                usage = chunk["usage"]
            for choice in chunk.get("choices") or []:
                if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                    continue
                seen = True
                delta = choice.get("delta")
                if isinstance(delta, dict):
                    if isinstance(delta.get("content"), str) and delta["content"]:
                        text.append(delta["content"])
                        chunks += 1
                    if isinstance(delta.get("refusal"), str):
                        refusal.append(delta["refusal"])
                if isinstance(choice.get("finish_reason"), str):
                    finish = choice["finish_reason"]
        if end:
            if finish is None:  # (no [DONE], no finish_reason: the server went away mid-answer)
                raise StreamError("the stream ended before the answer did")
            break
    if not seen:
        raise StreamError("the stream held no answer")
    message: dict = {"role": "assistant", "content": "".join(text)}
    if refusal and not text:
        message = {"role": "assistant", "content": None, "refusal": "".join(refusal)}
    reply: dict = {"choices": [{"index": 0, "message": message, "finish_reason": finish}], "chunks": chunks}
    if usage is not None:
        reply["usage"] = usage
    return reply


def _chunk(payload: str) -> dict:
    try:
        chunk = json.loads(payload)
    except (ValueError, RecursionError):
        raise StreamError(f"a chunk of the stream is not JSON: {payload[:200]!r}") from None
    if not isinstance(chunk, dict):
        raise StreamError(f"a chunk of the stream is not a JSON object: {payload[:200]!r}")
    if "error" in chunk:  # (llama-server, vLLM: a failure after the 200 status was sent)
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise StreamError(f"the server failed mid-answer: {str(message)[:300]!r}")
    return chunk
