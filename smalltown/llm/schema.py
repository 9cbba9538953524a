"""The answer's schema as every model backend sends it, and how long an answer can be.

One request schema per question (`request_schema`): the task's output schema narrowed to this
question (its options, the count of ratings asked for), every field required (a small model then
never chooses whether to write a field), field descriptions kept. The llama backend decodes
under it as a grammar; the OpenAI-compatible backend sends it as `response_format`. Every string
and list in it is bounded, so `max_answer_tokens` bounds an answer: it ends before its token
budget does.
"""

from __future__ import annotations

import json
from typing import Callable

from smalltown.llm.tasks import Task

_CLASSES = {r"\d": "[0-9]", r"\w": "[A-Za-z0-9_]", r"\s": "[ \\t\\n]"}
MAX_ENUM_RANGE = 200  # an integer range up to this many values is spelled out in the grammar
MAX_GRAMMAR_LENGTH = 600  # llama.cpp refuses a grammar repeating `char` (much) more often
_DROPPED = ("default", "title")  # keys the request schema leaves out


def request_schema(task: Task) -> dict:
    """The narrowed output schema with every property required and no defaults or titles."""
    return _required(task.schema())


def _required(node: object) -> object:
    if isinstance(node, list):
        return [_required(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _required(v) for k, v in node.items() if k not in _DROPPED}
    if out.get("type") == "object" and "properties" in out:
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    return out


def grammar_schema(node: object) -> object:
    """The schema as llama-cpp-python's converter should see it:
    - `\\d` in a pattern would reach the grammar as an escape llama.cpp rejects: spelled out;
    - integer bounds are ignored by the converter: a small range becomes an enum of its values;
    - a very long maxLength unrolls into more rules than llama.cpp accepts: left to validation."""
    return _rebuilt(node, _for_grammar)


def _for_grammar(out: dict) -> dict:
    out = _spelled_in(out)
    lo, hi = out.get("minimum"), out.get("maximum")
    if out.get("type") == "integer" and isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo < MAX_ENUM_RANGE:
        out = {k: v for k, v in out.items() if k not in ("type", "minimum", "maximum")}
        out["enum"] = list(range(lo, hi + 1))
    if out.get("maxLength", 0) > MAX_GRAMMAR_LENGTH:
        del out["maxLength"]
    return out


def spelled_patterns(node: object) -> object:
    """The schema with `\\d`, `\\w` and `\\s` in its patterns spelled out as character classes:
    what a server's schema converter can take (llama-cpp-python's writes `\\d` into its grammar,
    fails to parse it, and its server dies). The same strings match."""
    return _rebuilt(node, _spelled_in)


def _rebuilt(node: object, fix: Callable[[dict], dict]) -> object:
    """A copy of a schema with `fix` applied to every object in it, innermost first."""
    if isinstance(node, list):
        return [_rebuilt(v, fix) for v in node]
    if not isinstance(node, dict):
        return node
    return fix({k: _rebuilt(v, fix) for k, v in node.items()})


def _spelled_in(out: dict) -> dict:
    if isinstance(out.get("pattern"), str):
        out["pattern"] = _spelled(out["pattern"])
    return out


def _spelled(pattern: str) -> str:
    for cls, spelled in _CLASSES.items():
        pattern = pattern.replace(cls, spelled)
    return pattern


def _worst(node: dict, defs: dict) -> int:
    """The most tokens a JSON value under `node` can take at one token a character (a token
    holds at least one; the grammar allows no escapes but \\" and \\\\), with the converter's one
    optional space per gap. Text full of characters a tokenizer splits into bytes could pass
    it: such an answer is cut off, logged and asked again."""
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    if "enum" in node:
        return max(len(json.dumps(v, ensure_ascii=False).encode()) for v in node["enum"]) + 1 if node["enum"] else 2
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        return 2 + sum(len(json.dumps(k).encode()) + 3 + _worst(v, defs) for k, v in props.items()
                       if k not in _DROPPED)  # (as `request_schema` drops them)
    if kind == "array":
        return 2 + node.get("maxItems", 64) * (_worst(node.get("items", {}), defs) + 2)
    if kind == "string":
        if "pattern" in node:
            return 12
        return 2 + node.get("maxLength", 2000)
    if kind == "integer":
        hi = max(abs(node.get("maximum", 10**15)), abs(node.get("minimum", 0)))
        return len(str(hi)) + 2
    if kind == "boolean":
        return 6
    return 64


def max_answer_tokens(task: Task) -> int:
    """An upper bound on the answer's tokens for this question (its budget in the window)."""
    schema = task.schema()  # read as `request_schema` writes it, without building that copy
    return _worst(schema, schema.get("$defs", {})) + 8  # and the end-of-turn token(s)
