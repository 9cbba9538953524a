"""Dialogue (SPEC 5), once an agent has decided to talk (see `react`).

A conversation is generated line by
line, each with its situation: what both were doing, why the talk started, the speaker's view of
the listener (the initiator's from its decision to talk, the other's asked with its first line),
their last talk, what the speaker already told the listener, its news and what it retrieves
about the listener and the last line. Each line says which remembered items it passes on, so
what was told is known without reading the words. Afterwards each side remembers a summary
(not the transcript) and what it learned, with evidence, re-plans if the talk changed its day,
and both stand talking for as long as the lines took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from smalltown.llm import tasks
from smalltown.llm.tasks import CommittingUtterance, LastTalk, Record, SummarizeConversation, Utterance
from smalltown.mind import commitments, importance, planning
from smalltown.mind import social
from smalltown.mind import civics
from smalltown.mind import belief
from smalltown.mind import goals
from smalltown.mind.memory import Memory
from smalltown.mind.records import record
from smalltown.state.agent import Action, talking_with
from smalltown.store.conversations import Line

if TYPE_CHECKING:
    from smalltown.mind.core import MindCore

MAX_NEWS = 3  # news items a prompt offers at once


@dataclass
class Conversation:
    """A conversation while it is held, with what each side made of it (saved, it is a
    `store.conversations.ConversationRow`: sim/commit.py)."""

    initiator: str
    other: str
    place: str
    reason: str  # what the initiator noticed
    start: datetime
    lines: list[Line] = field(default_factory=list)
    chats: dict[str, Memory] = field(default_factory=dict)  # each side's summary, as a chat record
    learned: dict[str, list[Memory]] = field(default_factory=dict)  # what each side heard that was new
    relationships: dict[str, str] = field(default_factory=dict)  # each side's view of the other
    plan_changes: dict[str, bool] = field(default_factory=dict)
    replanned: dict[str, bool] = field(default_factory=dict)  # whose day was planned again after it
    # while it is held (mind/talk.py's steps): what each was doing, the facts each knew, whether it goes on
    doing: dict[str, str] = field(default_factory=dict, repr=False)
    knew: dict[str, set[str]] = field(default_factory=dict, repr=False)
    going: bool = field(default=True, repr=False)
    # a conversation the world file scripts (sim/lines.py): the initiator's lines still to say, each
    # with its tone; the tone of every scripted line said, by its index; at most this many lines (0: the setting's)
    script: list[tuple[str, str]] = field(default_factory=list, repr=False)
    tones: dict[int, str] = field(default_factory=dict, repr=False)
    max_lines: int = 0
    feelings: dict[str, social.Change] = field(default_factory=dict)  # how the talk moved each side's feeling (when on)
    stances: dict[str, "civics.StanceChange"] = field(default_factory=dict)  # each side's desired tax rate after it
    # the calls that began it (the initiator's decision to talk, naming its agent: llm.asker.call_ref),
    # and each side's summary of it (what a re-plan after it rests on)
    calls: list[dict] = field(default_factory=list)
    summary_calls: dict[str, dict] = field(default_factory=dict)

    @property
    def minutes(self) -> int:
        """How long the two stand talking: about 20 game seconds a line."""
        return max(1, round(len(self.lines) * 20 / 60))


# --- news: what an agent knows of the world's declared facts, and whom it told -------------------


def news_for(mind: "MindCore", other: str) -> list[Record]:
    """The declared facts `mind` knows and has not told `other` (nor heard from them), each as its
    latest record about it; never a fact about `other` or a gathering `other` hosts."""
    told = mind.state.told.get(other, {})
    out = []
    for name, rec in mind.facts.items():
        fact = mind.lore.facts.get(name)
        if fact is None or name in told or mind.state.heard.get(name) == other or fact.subject == other:
            continue
        if any(g.host == other for g in mind.lore.announced(name)):
            continue
        out.append(rec.model_copy(update={"score": 100.0}))
    return sorted(out, key=lambda r: (r.time, r.id))[:MAX_NEWS]


def already_told(mind: "MindCore", other: str) -> list[Record]:
    return [mind.facts[f].model_copy(update={"score": 100.0}) for f in mind.state.told.get(other, {})
            if f in mind.facts]


def facts_of(mind: "MindCore", records: list[Record], lines: list[Line] = ()):
    """The declared facts records are about, and the lines so far passed on."""
    names = list(dict.fromkeys([*(f for r in records for f in r.facts), *(f for x in lines for f in x.facts)]))
    return [mind.lore.fact(n) for n in names if n in mind.lore.facts]


def own(doing: str, name: str) -> str:
    """What an agent is doing, as it says it itself: its own places are "my" ("walking to my room"),
    never its name (a speaker does not speak of itself in the third person)."""
    return doing.replace(f"{name}'s", "my").replace(name, "myself")


# --- a conversation, in steps: the engine runs every conversation of a tick in lockstep -----------


def begin(a: "MindCore", b: "MindCore", now: datetime, place: str, reason: str, doing: dict[str, str],
          opening: str = "", relationship: str = "") -> Conversation:
    """`a` starts the talk on noticing `reason`, once both sides have settled what they noted: no
    question asked. `opening` is its first line when it came packed with the decision to talk,
    `relationship` its view of `b` from that decision."""
    conv = Conversation(a.name, b.name, place, reason, now)
    conv.doing = dict(doing)
    conv.knew = {a.name: a.known_facts(), b.name: b.known_facts()}
    if relationship:
        conv.relationships[a.name] = relationship
    if opening.strip():
        conv.lines.append(Line(a.name, opening.strip()))
    conv.going = len(conv.lines) < 2 * a.settings.conversation_rounds
    return conv


def say(conv: Conversation, a: "MindCore", b: "MindCore") -> bool:
    """The next line (its speaker's question; touches the speaker's mind only). True while the
    talk goes on."""
    if not conv.going:
        return False
    s, now, doing = a.settings, conv.start, conv.doing
    turn = len(conv.lines)
    speaker, listener = (a, b) if turn % 2 == 0 else (b, a)
    limit = conv.max_lines or 2 * s.conversation_rounds
    if speaker is a and conv.script:  # the world file's line, said as written: no question asked
        text, tone = conv.script.pop(0)
        conv.tones[len(conv.lines)] = tone
        conv.lines.append(Line(a.name, text))
        conv.going = len(conv.lines) < limit
        return conv.going
    news = news_for(speaker, listener.name)
    queries = [listener.name] + ([conv.lines[-1].text] if conv.lines else [])
    memories: dict[int, Record] = {}
    skip = {r.id for r in news}
    for q in queries:
        for r in speaker.retrieve(q, now, s.conversation_k, "conversation"):
            if r.id not in skip and (r.id not in memories or memories[r.id].score < r.score):
                memories[r.id] = r
    committing = commitments.asks_commitment(speaker, listener.name, now)
    # the broadcast (empty when off): the speaker's decision and open promises; with `commitments`
    # on, the places a promise may name and what the speaker has planned next
    extra = dict(decision=commitments.decision_input(speaker), promises=commitments.promise_inputs(speaker, now))
    if committing:
        extra.update(known_places=list(speaker.state.known.tree), plan_next=commitments.plan_next(speaker, now))
    out = speaker.ask((CommittingUtterance if committing else Utterance)(
        persona=speaker.persona, now=now, listener=listener.name, place=conv.place, initiator=a.name,
        reason=conv.reason, speaker_doing=own(doing.get(speaker.name, "nothing in particular"), speaker.name),
        listener_doing=doing.get(listener.name, "nothing in particular"),
        relationship=conv.relationships.get(speaker.name, ""), last_talk=speaker.state.talks.get(listener.name),
        already_told=already_told(speaker, listener.name), news=news,
        facts=(facts := facts_of(speaker, news, conv.lines)),
        gatherings=[g for f in facts for g in speaker.lore.announced(f.name)],
        memories=list(memories.values()),
        transcript=[tasks.TranscriptLine(speaker=x.speaker, text=x.text, facts=x.facts) for x in conv.lines],
        feeling=social.feeling(speaker, listener.name), **extra, **civics.talk_inputs(speaker),
        **goals.talk_inputs(speaker),
        **belief.talk_inputs(speaker, listener.name, [x.text for x in conv.lines if x.speaker == listener.name])))
    if committing:
        commitments.commit(speaker, listener.name, out, now)
    asked = speaker.asker.last_task  # numbered as its prompt showed them
    items = [*asked.news, *asked.memories]
    told = [items[i - 1] for i in dict.fromkeys(out.tells) if 1 <= i <= len(items)]
    facts = tuple(dict.fromkeys(f for r in told for f in r.facts))
    for f in facts:
        speaker.state.told.setdefault(listener.name, {})[f] = now
    if speaker.name not in conv.relationships and out.relationship.strip():
        conv.relationships[speaker.name] = out.relationship.strip()
    conv.lines.append(Line(speaker.name, out.utterance.strip(), tuple(r.id for r in told if r.id), tuple(facts)))
    conv.going = not out.end and len(conv.lines) < limit
    return conv.going


@dataclass
class Remembered:
    """One side's memory of a talk (see `remember`)."""

    chat: Memory
    learned: list[Memory]
    plan_changes: bool
    feeling: social.Change | None = None  # how the talk moved the feeling toward the other (when on)
    stance: "civics.StanceChange | None" = None  # the desired tax rate it came away with (civics)
    call: dict = field(default_factory=dict)  # the summary's call (llm.asker.call_ref)


def settle_memory(conv: Conversation, name: str, got: Remembered) -> None:
    """What `remember` returned, kept on the conversation (by the engine's thread, in order)."""
    conv.chats[name] = got.chat
    conv.learned[name] = got.learned
    conv.plan_changes[name] = got.plan_changes
    conv.summary_calls[name] = got.call
    if got.feeling is not None:
        conv.feelings[name] = got.feeling
    if got.stance is not None:
        conv.stances[name] = got.stance


def remember(me: "MindCore", other: "MindCore", conv: Conversation) -> Remembered:
    """One side's memory of the talk: its summary (a chat record), what it learned (records
    citing the chat), who told it what, and whether its day changes. Touches `me` only."""
    now = conv.start
    lines = [tasks.TranscriptLine(speaker=x.speaker, text=x.text, facts=x.facts) for x in conv.lines]
    knew = conv.knew.get(me.name, set())
    passed = list(dict.fromkeys(f for x in conv.lines if x.speaker == other.name for f in x.facts))
    facts = [me.lore.fact(f) for f in passed if f in me.lore.facts]
    gatherings = [g for f in passed for g in me.lore.announced(f)]
    tones = [t for i, t in sorted(conv.tones.items()) if conv.lines[i].speaker == other.name]
    task = civics.summary_task(me, other.name, social.summary_task(me, other, SummarizeConversation(
        persona=me.persona, now=now, other=other.name, place=conv.place, lines=lines, facts=facts,
        known_facts=[f for f in passed if f in knew], gatherings=gatherings), tones))
    out = me.ask(task)
    summarised = me.asker.last_ref
    chat = importance.remember(me, "chat", [out.summary.strip()], now, ratings=[out.importance])[0]
    learned = [(x.fact.strip(), x.importance) for x in out.learned if x.fact.strip()]
    learned = [(t, r) for t, r in dict(learned).items() if not me.memory.has(t)]
    heard = importance.remember(me, "observation", [t for t, _ in learned], now, evidence=[chat.id],
                                ratings=[r for _, r in learned]) if learned else []
    for m in heard:
        for f in me.lore.tags(m.description)[1]:
            me.state.heard.setdefault(f, other.name)
    me.state.talks[other.name] = LastTalk(time=now, summary=out.summary.strip())
    return Remembered(chat, heard, out.plan_changes, social.update(me, other.name, out, now),
                      civics.took(task, other.name, out), summarised)


def carry_on(me: "MindCore", other: "MindCore", conv: Conversation) -> bool:
    """After the talk: the day planned again from here if what was said changes it, and the two
    stand talking for as long as the lines took (the plan picks up again when that ends). True
    when the day was planned again. Touches `me` only."""
    now = conv.start
    replanned = False
    if conv.plan_changes.get(me.name) or commitments.unplanned_promises(me, now):
        reason = [record(me.lore, m, 1.0) for m in [conv.chats[me.name], *conv.learned[me.name]]]
        replanned = planning.replan(me, now, reason, calls=[*conv.calls, conv.summary_calls[me.name]])
    state = me.state
    state.last_chat[other.name] = now
    state.action = Action(talking_with(other.name), state.action.address if state.action else "", now,
                          now + timedelta(minutes=conv.minutes), calls=list(conv.calls))
    return replanned
