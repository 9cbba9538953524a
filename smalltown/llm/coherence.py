"""Coherence: what an answer that keeps to its schema may still get wrong about itself or the world.

The schema fixes a shape; these checks read the answer as the town will use it: flags that
contradict each other (react false, talk true), a reaction of one word ("yes"), a line of speech
that is empty, only a name, a repeat of an earlier line, runs away repeating itself, or narration ("walks to the washroom",
"<Name> smiles"), sleep away from where the world lets the person sleep. `incoherence` says what
is wrong ("" when nothing is); `llm/own.py` makes it an unusable answer of kind "incoherent",
retried, then answered by the stand-in, which keeps to these checks itself (tests/test_coherence.py).
"""

from __future__ import annotations

import re

from smalltown.llm import tasks as T

SLEEP = re.compile(r"\b(sleep|sleeps|sleeping|asleep|nap|naps|napping|doze|dozing)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
# first words of speech that end in "s" like a narrated verb ("walks", "smiles") but are said
_SAID_S = frozenset({"yes", "thanks", "sounds", "seems", "is", "was", "has", "does", "this", "its", "it's", "let's",
                     "us", "as", "perhaps", "always", "sometimes", "plus", "unless", "besides", "looks", "guess",
                     "bless", "cheers", "congrats", "congratulations", "goodness", "gosh", "less", "yours", "thus",
                     "whereas", "various", "afterwards", "towards", "nevertheless", "regardless", "mrs", "ms", "miss",
                     "lots", "news", "hers", "ours", "theirs", "his", "happiness", "welcome", "always"})
_SAID_ING = frozenset({"morning", "evening", "nothing", "something", "anything", "everything", "thing", "king", "spring",
                       "during", "according", "amazing", "interesting", "exciting", "boring", "darling", "anyway"})
# a line that runs away (a small model's habit: "Thee-e-e-e-e-e...", a list of places again and
# again): a piece of 2-12 characters six times running, or four words in a row said three times
_RUNAWAY = re.compile(r"(.{2,12}?)\1{5,}", re.DOTALL)
_PERSON = frozenset({"i", "i'm", "i've", "i'll", "i'd", "me", "my", "mine", "you", "you're", "your", "yours", "we",
                     "we're", "our", "us", "let's"})


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def _names(name: str) -> set[str]:
    """A person's name as a line may give it: whole, or its first word."""
    parts = words(name)
    return {" ".join(parts), parts[0]} if parts else set()


def _repeats(said: list[str], n: int, times: int) -> bool:
    """Whether some `n` words in a row occur `times` times in `said`."""
    seen: dict[tuple[str, ...], int] = {}
    for i in range(len(said) - n + 1):
        gram = tuple(said[i:i + n])
        seen[gram] = seen.get(gram, 0) + 1
        if seen[gram] >= times:
            return True
    return False


def line_problem(text: str, speaker: str, listener: str, earlier: list[str]) -> str:
    """What is wrong with `text` as a line `speaker` says to `listener` ("" when nothing is)."""
    said = words(text)
    if not said:
        return "the line is empty"
    if not any(c.isalpha() for c in text):  # a small model's "2023", "5-10, 2023": no word said
        return f"the line has no words, only numbers ({text.strip()[:40]!r})"
    if " ".join(said) in _names(listener) | _names(speaker):
        return f"the line is only a name ({text.strip()!r})"
    if any(words(e) == said for e in earlier):
        return "the line repeats an earlier line of the conversation"
    if _RUNAWAY.search(text) or _repeats(said, 4, 3):
        return f"the line runs away, repeating itself ({text.strip()[:40]!r})"
    stripped = text.strip()
    if stripped.startswith(("*", "(", "[")):
        return "the line narrates an action instead of saying something"
    first = stripped.split(None, 1)[0].strip(",.:;!?").lower()
    own = _names(speaker)
    if " ".join(said[:len(words(speaker))]) in own or said[0] in own and first == said[0] and not stripped[len(first):].startswith(","):
        return f"the line starts with the speaker's own name, narrating ({stripped[:40]!r})"
    if (first.endswith("s") and "'" not in first and first not in _SAID_S and len(first) > 3
            and not stripped[len(first):].startswith(",") and not _PERSON & set(said)):
        return f"the line narrates an action in the third person ({stripped[:40]!r})"
    if (stripped[0].islower() and first.endswith("ing") and first not in _SAID_ING and not _PERSON & set(said)):
        return f"the line narrates what someone is doing ({stripped[:40]!r})"
    return ""


def _react(t: T.React, out: T.ReactOut) -> str:
    if out.talk and not out.react:
        return "react is false but talk is true"
    if not out.react:
        return ""
    if out.talk:
        if not t.observed_is_agent:
            return f"talk is true but {t.observed} is not a person"
        if not out.opening.strip():
            return "talk is true but the opening is empty"
        return line_problem(out.opening, t.persona.name, t.observed, [])
    if len(words(out.reaction)) < 2:
        return f"react is true without talking, but the reaction is {out.reaction.strip()!r}"
    return ""


def _utterance(t: T.Utterance, out: T.UtteranceOut) -> str:
    return line_problem(out.utterance, t.persona.name, t.listener, [line.text for line in t.transcript])


def _schedule(t: T.HourlySchedule, out: T.HourlyScheduleOut) -> str:
    for b in out.blocks:
        if t.sleep_places and SLEEP.search(b.activity) and b.place and b.place not in t.sleep_places:
            return f"{b.activity!r} at {b.place}, which is not where {t.persona.name} sleeps"
    return ""


def _decompose(t: T.Decompose, out: T.DecomposeOut) -> str:
    if t.beds is None:
        return ""
    for a in out.actions:
        if SLEEP.search(a.activity) and a.object not in t.beds:
            return f"{a.activity!r} at {a.object or 'no object'}, which is not a place to sleep"
    return ""


def _choose(t: T.ChoosePlace, out: T.ChoosePlaceOut) -> str:
    if t.beds is not None and out.choice not in t.beds:
        return f"sleeping at {out.choice!r}, which is not a place to sleep"
    return ""


def _summary(t: T.SummarizeConversation, out: T.ConversationOut) -> str:
    said = words(out.summary)
    names = {n for line in t.lines for n in _names(line.speaker)} | _names(t.persona.name) | _names(t.other)
    if len([w for w in said if w not in names]) < 2:
        return f"the summary is only a name ({out.summary.strip()!r})"
    head = out.summary.split(":", 1)[0]
    if ":" in out.summary and " ".join(words(head)) in names:
        return "the summary quotes a line of the conversation instead of summing it up"
    return ""


_CHECKS = {"react": _react, "utterance": _utterance, "utterance_commit": _utterance, "hourly_schedule": _schedule,
           "decompose": _decompose, "decompose_economy": _decompose, "choose_place": _choose,
           **{n: _summary for n in ("summarize_conversation", "summarize_conversation_social",
                                    "summarize_conversation_civic", "summarize_conversation_social_civic")}}


def incoherence(task: T.Task, out: T.Output) -> str:
    """What makes `out` incoherent as an answer to `task` ("" when nothing does)."""
    check = _CHECKS.get(task.name)
    return check(task, out) if check is not None else ""
