"""The GBNF grammar of a question: its request schema (`schema.request_schema`: its options, its
counts, every field required, every string and list bounded) turned into GBNF by llama-cpp-python's
converter, with one-line strings and at most one space between tokens, so an answer ends within
`schema.max_answer_tokens`."""

from __future__ import annotations

import json
import typing

from pydantic import BaseModel

from smalltown.llm.schema import grammar_schema, request_schema
from smalltown.llm.tasks import Task


GRAMMAR_CACHE = 256  # per-question grammars kept, by text (options and counts vary by question)
# A JSON string's character: no control characters (json.loads rejects them raw) and no escape but
# \" and \\: answers are one line, with no line-break or unicode escape spelled out, so a string
# of n characters is at most n + 2 tokens, as `schema.max_answer_tokens` assumes.
CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F] | "\\" ["\\]'
SPACE_RULE = 'space ::= " "?'  # at most one space between tokens: no runaway whitespace
_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n"}


def _converter():
    """llama-cpp-python's schema converter, with its literals escaped as GBNF needs: it leaves a
    backslash as it is (an option holding one, or a quote, would end its literal early or break
    the grammar) and spells non-ASCII options as \\u escapes the model would have to copy."""
    from llama_cpp.llama_grammar import SchemaConverter

    class Converter(SchemaConverter):
        def _format_literal(self, literal: str) -> str:
            return '"' + "".join(_GBNF_ESCAPES.get(c, c) for c in literal) + '"'

        def _generate_constant_rule(self, value) -> str:
            return self._format_literal(json.dumps(value, ensure_ascii=False))

    return Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def grammar_text(schema: dict) -> str:
    """GBNF for a request schema (`schema.request_schema`), as llama.cpp decodes under it."""
    converter = _converter()
    converter.visit(converter.resolve_refs(grammar_schema(schema), "request"), "")
    rules = converter.format_grammar().split("\n")  # (not splitlines: an option may hold U+2028)
    rules = [CHAR_RULE if r.startswith("char ::=") else SPACE_RULE if r.startswith("space ::=") else r
             for r in rules]
    return "\n".join(rules) + "\n"


def task_grammar(task: Task) -> str:
    """The grammar of this very question: its options, its counts, every field required."""
    return grammar_text(request_schema(task))


class _Declared:
    """A task seen through its output model alone, not narrowed to its question."""

    def __init__(self, task: Task):
        self.task = task

    def schema(self) -> dict:
        return Task.schema(self.task)


def declared_grammar(task: Task) -> str:
    """The task's grammar before narrowing (any options, any count): the fallback for a
    narrowed grammar llama.cpp refuses."""
    return grammar_text(request_schema(_Declared(task)))  # type: ignore[arg-type]


def representative(task: type[Task]) -> Task:
    """An instance of `task` for checking its grammars at load: every narrowing at work (a list of
    names becomes options, other lists give counts and citation numbers). Only `schema()` is
    asked of it, so its inputs are left unvalidated (the persona and time are absent)."""
    values = {}
    for name, field in task.model_fields.items():
        if typing.get_origin(field.annotation) is list:
            (item,) = typing.get_args(field.annotation) or (object,)
            values[name] = ([f"Sector {i}: Ñandú café's room: the keeper's big armchair {i}" for i in range(1, 13)]
                            if item is str else [_placeholder(item, i) for i in range(1, 10)])
    return task.model_construct(**values)


def _placeholder(item: object, i: int) -> object:
    """The i-th item of a representative list: a record whose text fields are distinct words and
    numbers 1 (so a question that lists options from such records, as the economy's ops, has some),
    or None for items that are not records."""
    if not (isinstance(item, type) and issubclass(item, BaseModel)):
        return None
    filled = {n: (f"thing {i}" if f.annotation is str else 1 if f.annotation is int else f.get_default())
              for n, f in item.model_fields.items()}
    return item.model_construct(**filled)
