"""Answers that are the asking agent's own: not the prompt's example, not another agent's answer,
and coherent (llm/coherence.py).

A small model copies what it is shown: an example's placeholder ("<what the person does
next>"), or the same stock answer it gave another agent. Such an answer passes the schema and
would become the agent's memory or plan, so `Checked` (a backend around a model's backend, which
the Asker retries: llm/wrappers.py) makes it unusable: kind "copied" or "incoherent", retried
with another seed, then answered by the stand-in, and counted by reason in the call log.

Another agent's answers are compared from earlier ticks only, never the tick in flight, and only
for questions asked tick by tick (not those slow modules answer while the town goes on): what a
question is compared with is then the same at any concurrency. They are held by the run (its
Asker), the last `RECENT_TICKS` ticks each task was answered in.
"""

from __future__ import annotations

import re
import threading
from typing import Callable

from smalltown.llm.backend import Answer, Backend, Capabilities, capabilities
from smalltown.llm.coherence import incoherence, words
from smalltown.llm.tasks import Output, Task
from smalltown.llm.validate import UnusableAnswer

PLACEHOLDER = re.compile(r"<[^<>]{2,}>")  # an example's "<...>": never a town's own text
# the same left open (a small model stops before the ">" or at its token limit): a "<" opening a
# word, then words to the end of the text with no ">" ("<What Ann remembers of the day")
UNCLOSED = re.compile(r"(?:^|\s)<[A-Za-z][^<>]{2,}$")
# fields whose text is naturally the same across agents: names of places and objects, times,
# states, options picked from a list
NATURAL = frozenset({"time", "start", "place", "object", "state", "by", "where", "item", "op", "need", "choice",
                     "role", "votes"})
# the tasks whose free text is the agent's own view of its day (a reaction, a line, a summary):
# compared with other agents' answers. Not plans, schedules or actions (agents sharing a routine
# share its steps), ratings, options, states, a user's interview, nor what slow modules may answer
# off the tick (sim/later.py)
COMPARED = frozenset({"react", "utterance", "utterance_commit", "summarize_conversation",
                      "summarize_conversation_social", "summarize_conversation_civic",
                      "summarize_conversation_social_civic", "summary_description"})
MIN_WORDS = 8  # a shorter answer ("Good morning! How are you today?") may well be two agents' own
RECENT_TICKS = 8  # ticks (in which a task was answered) whose answers a question is compared with


def free_text(out: Output | dict | list | str, key: str = "") -> list[str]:
    """The text a model wrote in an answer: its strings, but those naturally shared (NATURAL)."""
    data = out.model_dump() if isinstance(out, Output) else out
    if isinstance(data, dict):
        return [s for k, v in data.items() if k not in NATURAL for s in free_text(v, k)]
    if isinstance(data, list):
        return [s for v in data for s in free_text(v, key)]
    return [data] if isinstance(data, str) and data.strip() else []


def normal(text: str, name: str) -> str:
    """`text` compared as words: lowercase, no punctuation, the asking agent's own name as "@"."""
    own = words(name)
    said = words(text)
    return " ".join("@" if w in own else w for w in said)


def copied_example(task: Task, out: Output) -> str:
    """What of the prompt's example `out` reproduces ("" when nothing)."""
    from smalltown.llm.examples import EXAMPLES

    for text in free_text(out):
        m = PLACEHOLDER.search(text) or UNCLOSED.search(text.strip())
        if m:
            return f"copies the example's placeholder {m.group().strip()!r}"
    shown = {normal(s, "") for s in free_text(EXAMPLES.get(task.name, {})) if not PLACEHOLDER.search(s)}
    for text in free_text(out):
        if normal(text, "") in shown and len(words(text)) >= 3:
            return f"copies the example's text {text[:60]!r}"
    return ""


class Recent:
    """Answers of the run's agents to each task, by tick: the last RECENT_TICKS ticks in which the
    task was answered (a bounded memory, held by the run)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by: dict[str, dict[int, dict[str, set[str]]]] = {}  # task -> tick -> text -> agents

    def copied(self, task: str, agent: str, text: str, tick: int) -> str:
        """Whom `agent`'s `text` repeats, from a tick before `tick` ("" when no one)."""
        with self._lock:
            ticks = self._by.get(task, {})
            for t in sorted((t for t in ticks if t < tick), reverse=True)[:RECENT_TICKS]:
                others = ticks[t].get(text, set()) - {agent}
                if others:
                    return min(others)
        return ""

    def add(self, task: str, agent: str, text: str, tick: int) -> None:
        with self._lock:
            ticks = self._by.setdefault(task, {})
            ticks.setdefault(tick, {}).setdefault(text, set()).add(agent)
            for old in sorted(ticks)[:-(RECENT_TICKS + 1)]:  # the newest ticks, and the one in flight
                del ticks[old]


class Checked:
    """`backend`, whose usable answers are checked further: copied or incoherent answers are
    unusable (kinds "copied", "incoherent"), so the Retry around it asks again, another seed."""

    def __init__(self, backend: Backend, tick: Callable[[], int]):
        self.inner = backend
        self.name, self.model = backend.name, backend.model
        self.tick = tick
        self.recent = Recent()

    @property
    def can(self) -> Capabilities:
        return capabilities(self.inner)

    def answer(self, task: Task, prompt: str, **kw) -> Answer:
        ans = self.inner.answer(task, prompt, **kw)
        problem, kind = copied_example(task, ans.output), "copied"
        text = ""
        if not problem and task.name in COMPARED:
            text = normal(" | ".join(free_text(ans.output)), task.persona.name)
            if len(text.split()) >= MIN_WORDS:
                other = self.recent.copied(task.name, task.persona.name, text, self.tick())
                problem = f"repeats {other}'s answer to the same question" if other else ""
            else:
                text = ""
        if not problem:
            problem, kind = incoherence(task, ans.output), "incoherent"
        if problem:
            e = UnusableAnswer(problem, ans.raw, kind=kind)
            e.usage, e.note, e.model = (ans.prompt_tokens, ans.completion_tokens, ans.cached_tokens), ans.note, ans.model
            raise e
        if text:
            self.recent.add(task.name, task.persona.name, text, self.tick())
        return ans


def checked(backend: Backend, tick: Callable[[], int]) -> Backend:
    """`backend` checked (a model's backend: one that declares retries); the stand-in as it is."""
    return Checked(backend, tick) if capabilities(backend).retry is not None else backend
