"""The talking questions' extra prompt parts (llm/tasks/talk.py, social.py, rate.py): a reaction
and an utterance with the last talk, the feeling toward the other and, in a world with civics,
the constitution and the speaker's beliefs; a conversation's summary; an interview; a rating of
a person."""

from __future__ import annotations

from smalltown.llm.render_parts import block, card, extra, feeling_line, last_talk, quote, records
from smalltown.llm.tasks import Interview, RatePerson, React, Task, Utterance


def civic(t: React | Utterance, faith: list[str] = ()) -> dict[str, str]:
    """The constitution in force goes before the card (the same for every agent: it stays cached
    with the instructions); after it the speaker's goal and faith (`goal_lines`, `faith_lines`: an
    utterance's), then its own beliefs and aim ("" without civics or belief: the prompt is as before)."""
    name, parts = t.persona.name, list(faith)
    if t.stance_text:
        parts.append(f"What {name} believes and argues for: {quote(t.stance_text)}")
    if getattr(t, "persuading", False):
        parts.append(f"{name} seeks people out to explain this view and win their support.")
    return {"civic_line": "\n".join(parts),
            "constitution_part": f"The town's constitution in force: {quote(t.constitution)}" if t.constitution else ""}


@extra("react")
def _react(t: React) -> dict[str, str]:
    talk = (f"Last conversation with {t.observed}: {last_talk(t.last_talk, t.now.date())}" if t.observed_is_agent else "")
    news = (f"News {t.persona.name} has not told {t.observed} yet:\n{records(t.news, today=t.now.date())}"
            if t.observed_is_agent and t.news else "")
    # the faith's line names the one seen, so it goes with the other lines about them, after the
    # memories: the card and the memories (often the same from one reaction to the next) stay a
    # prefix the agent's next reaction shares
    return {"last_talk_line": talk, "news_line": news, "feeling_line": feeling_line(t.persona.name, t.feeling),
            "seek_line": "\n".join(seek_lines(t)), **civic(t)}


def seek_lines(t: React) -> list[str]:
    """Belief's part of a react question (mind/belief.py `react_inputs`): for each doctrine the
    person seeks to spread, that it wants to win over everyone it meets, and what it knows of the
    one seen's faith; none without (the prompt is as before)."""
    name, out = t.persona.name, []
    for f in t.faiths:
        top = len(f.levels)
        kind = f"{f.level_names[f.level - 1]} " if 0 < f.level <= len(f.level_names) else ""
        who = f"a priest of {f.doctrine}" if f.priest else f"a {kind}believer in {f.doctrine}"
        if f.listener_level >= top:
            other = f"{t.observed} already shares this faith"
        elif f.listener_level:
            other = f"{t.observed} has spoken of it but is not known to share this faith"
        else:
            other = f"{t.observed} is not known to share this faith"
        out.append(f"{name} is {who} and tries to win over everyone they meet; {other}.")
    return out


@extra("utterance", "utterance_commit")
def _utterance(t: Utterance) -> dict[str, str]:
    ask = ("" if t.relationship else
           f' (Also give "relationship": what {t.persona.name} thinks of {t.listener}, in a sentence.)')
    return {"relationship_ask": ask,
            "relationship": quote(t.relationship) if t.relationship else "(to be said in this answer)",
            "transcript": "\n".join(f"{line.speaker}: {quote(line.text)}" for line in t.transcript)
            or "(nothing yet: this is the first line)",
            "feeling_line": feeling_line(t.persona.name, t.feeling), **civic(t, [*goal_lines(t), *faith_lines(t)])}


def goal_lines(t: Utterance) -> list[str]:
    """Goal generation's part (mind/goals.py): what the speaker works toward, so that its talk may
    turn to it; none without a goal (the prompt is as before)."""
    if not t.goal:
        return []
    need = f" (for the community's {quote(t.goal_need)})" if t.goal_need else ""
    return [f"What {t.persona.name} is working toward: {quote(t.goal)}{need}"]


def faith_lines(t: Utterance) -> list[str]:
    """Belief's part (mind/belief.py): a priest's persona lines (world data, written to the priest:
    "You are ..."), and what the speaker believes or has heard of each doctrine, in the words of
    its level; none without belief (the prompt is as before)."""
    name, out = t.persona.name, []
    for f in t.faiths:
        if f.persona:
            out.append(f"What {name} was told of their faith: {quote(' '.join(f.persona))}")
        if f.level:
            words = ", ".join(quote(k) for k in f.levels[f.level - 1])  # (a world's keyword may hold a quote)
            if f.priest:
                out.append(f"{name} is a priest of {f.doctrine}, speaks of it by its words ({words}) and tries to win "
                           "others over to it.")
            else:
                kind = f"{f.level_names[f.level - 1]} " if f.level_names else ""
                out.append(f"{name} is a {kind}believer in {f.doctrine} and speaks of it by its words ({words}).")
        elif f.heard_level:
            out.append(f"{name} has heard others speak of {f.doctrine} ({', '.join(f.levels[f.heard_level - 1])}).")
    return out


@extra("summarize_conversation", "summarize_conversation_social")
def summary_social(t: Task) -> dict[str, str]:
    """The summary's social part: filled in only for the social variant (mind/social.py)."""
    f = getattr(t, "feeling", None)
    if f is None:
        return {"social_line": "", "social_ask": ""}
    return {"social_line": "Before this conversation, " + feeling_line(t.persona.name, f),
            "social_ask": f' Also give "sentiment": how {t.persona.name} feels toward {t.other} after it '
                          f'(0 hate .. 10 love), and "relationship": their relationship, in one sentence.'}


@extra("interview")
def _interview(t: Interview) -> dict[str, str]:
    return {"schedule": "\n".join(f"- {block(b)}" for b in t.schedule) or "(no plan yet)"}


@extra("rate_person")
def _rate_person(t: RatePerson) -> dict[str, str]:
    """From traits alone: an impartial judgement; from a view: as the asker sees the person (its
    card, then its view)."""
    parts = []
    if t.relationship or not t.traits:
        parts += [card(t.persona), f"Judge as {t.persona.name} sees {t.other}."]
    else:
        parts.append("Judge impartially.")
    if t.traits:
        parts.append(f"{t.other}'s innate traits: {quote(t.traits)}")
    if t.relationship or not t.traits:
        view = quote(t.relationship) if t.relationship else "nothing yet"
        parts.append(f"What {t.persona.name} thinks of {t.other}: {view}")
    return {"basis": "\n\n".join(parts)}
