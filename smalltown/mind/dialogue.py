"""Dialogue (SPEC 5): generated turn by turn, each line from its speaker's own retrieval about the
listener and the last thing said; afterwards each side remembers the conversation and what it
learned, with evidence, and may re-plan."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from smalltown.llm.tasks import SummarizeConversation, Utterance
from smalltown.mind.agent import Mind
from smalltown.mind.memory import Memory


@dataclass
class Conversation:
    initiator: str
    other: str
    place: str
    lines: list[tuple[str, str]] = field(default_factory=list)  # (speaker, text)
    chats: dict[str, Memory] = field(default_factory=dict)  # each side's chat record
    learned: dict[str, list[Memory]] = field(default_factory=dict)  # what each side heard that was new

    @property
    def transcript(self) -> list[str]:
        return [f"{who}: {text}" for who, text in self.lines]

    @property
    def minutes(self) -> int:
        """How long the two stand talking: about 20 game seconds a line."""
        return max(1, round(len(self.lines) * 20 / 60))


def converse(a: Mind, b: Mind, now: datetime, place: str, opening: str = "") -> Conversation:
    """`opening`: the initiator's first line, when it came packed with the decision to talk."""
    s = a.settings
    a.settle()
    b.settle()
    conv = Conversation(a.name, b.name, place)
    when = now.strftime("%A %B %-d, %Y, %H:%M")
    speakers = (a, b)
    if opening.strip():
        conv.lines.append((a.name, opening.strip()))
    for turn in range(len(conv.lines), 2 * s.dialogue_rounds):
        speaker, listener = speakers[turn % 2], speakers[1 - turn % 2]
        queries = [f"{listener.name}"] + ([conv.lines[-1][1]] if conv.lines else [])
        memories: dict[int, str] = {}
        for q in queries:
            for scored in speaker.memory.retrieve(q, now, s.dialogue_k, purpose="dialogue").results:
                memories.setdefault(scored.memory.id, scored.memory.description)
        out = speaker.ask(Utterance(persona=speaker.persona, listener=listener.name, time=when, place=place,
                                    memories=list(memories.values()), transcript=conv.transcript))
        conv.lines.append((speaker.name, out.utterance.strip()))
        if out.end:
            break
    transcript = conv.transcript
    for me, other in ((a, b), (b, a)):
        summary = me.ask(SummarizeConversation(persona=me.persona, other=other.name, transcript=transcript))
        chat = me.remember("chat", [f"{summary.summary} (at {place}: " + " / ".join(transcript) + ")"], now,
                           ratings=[summary.importance])[0]
        conv.chats[me.name] = chat
        known = {m.description for m in me.memory}
        rated = dict(zip(summary.learned, summary.learned_importance)) \
            if len(summary.learned_importance) == len(summary.learned) else {}
        heard = [f for f in dict.fromkeys(fact.strip() for fact in summary.learned) if f and f not in known]
        conv.learned[me.name] = me.remember(
            "observation", heard, now, evidence=[chat.id],
            ratings=[rated[f] for f in heard] if all(f in rated for f in heard) else None)
    return conv
