"""How the OpenAI-compatible backend asks a server for structured output, in a fixed order.

Servers accept different fields (checked against their sources and docs):
- `json_schema`: `response_format: {"type": "json_schema", ...}`, OpenAI's own: llama.cpp's
  `llama-server`, vLLM and Ollama take it; llama-cpp-python's server refuses it (HTTP 500).
- `grammar`: a GBNF `grammar` field, our own grammar of the question (llm/llama_grammar.py, as the
  in-process llama backend decodes under): llama.cpp's `llama-server` and llama-cpp-python's server
  take it. The most robust there: llama-cpp-python's own schema converter writes unparsable
  grammars for some schemas (a `\\d` pattern, an option holding a backslash and a quote), and its
  server dies on them.
- `json_object`: `response_format: {"type": "json_object", "schema": ...}` (llama-cpp-python's
  and llama-server's dialect), the schema with its patterns spelled out for the converter.

The backend starts with the first and moves to the next when a server refuses one: an HTTP error
(4xx other than 429, or 5xx) whose body names the format. Every answer is still validated against
the full schema on our side (llm/validate.py): a server's grammar does not enforce every rule.
"""

from __future__ import annotations

from smalltown.llm.schema import grammar_schema, request_schema, spelled_patterns
from smalltown.llm.tasks import Task

MODES = ("json_schema", "grammar", "json_object")  # the order they are tried in
DESCRIBED = {"json_schema": "response_format json_schema", "grammar": "a GBNF grammar",
             "json_object": "response_format json_object with a schema"}
# What a refusal of each mode names in its body: the field, or the type the server wanted instead
NAMED = {"json_schema": ("json_schema",), "grammar": ("grammar",), "json_object": ("json_object", "response_format")}


def structured_fields(task: Task, mode: str) -> dict:
    """The request fields that constrain the answer to the question's schema, in `mode`."""
    if mode == "grammar":
        from smalltown.llm.llama_grammar import task_grammar  # (imports llama_cpp: only when asked)

        return {"grammar": task_grammar(task)}
    schema = request_schema(task)
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": grammar_schema(schema)}}
    return {"response_format": {"type": "json_schema",
                                "json_schema": {"name": task.name, "schema": spelled_patterns(schema), "strict": True}}}


def refuses(mode: str, status: int | None, body: str) -> bool:
    """Whether an HTTP error is the server refusing `mode` (not a failure of the moment)."""
    if status is None or status < 400 or status == 429:
        return False
    return any(word in body for word in NAMED[mode])


def next_mode(mode: str) -> str | None:
    """The mode tried after `mode` is refused; None after the last."""
    i = MODES.index(mode) + 1
    return MODES[i] if i < len(MODES) else None


def described(mode: str) -> str:
    """The start-up line's words for how answers are constrained."""
    rest = MODES[MODES.index(mode) + 1:]
    then = f"; if the server refuses it, {', then '.join(rest)}" if rest else ""
    return f"structured output: {mode} ({DESCRIBED[mode]}){then}"
