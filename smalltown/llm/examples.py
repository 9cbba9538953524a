"""Each task's example answer, as its prompt shows it (llm/render.py `answer_shape`); a task
defined elsewhere adds its own to `EXAMPLES`.

Examples are shapes, not answers: every text a model writes is a placeholder saying what goes
there ("<...>"), and a number a model could adopt (a rating, an hour) is its range, shown bare
(`slot`). A small model copies an example's content into the agent's life (one example's baker's
day, planned by everyone; its farmers' market, remembered by everyone); a copied placeholder is
caught (llm/own.py).
"""

from __future__ import annotations

import json
import re


def slot(text: str) -> str:
    """A bare placeholder in an example (`<1-10>`): not a JSON string, so not a value to copy."""
    return f"\u0000{text}\u0000"


_R = slot("<1-10>")
EXAMPLES: dict[str, dict] = {
    "daily_plan": {"wake_up_hour": slot("<3-12>"), "items": [
        {"time": "<HH:MM>", "activity": "<what the person does first, in a few words>"},
        {"time": "<HH:MM>", "activity": "<what the person does next>"},
        slot("...")]},
    "hourly_schedule": {"blocks": [
        {"start": "<HH:MM>", "minutes": slot("<minutes>"), "activity": "<what the person does, in a few words>",
         "place": "<one of the places listed>"},
        slot("...")]},
    "decompose": {"actions": [
        {"activity": "<an action, in a few words>", "minutes": slot("<5-15>"), "object": "<one of the objects listed>",
         "state": "<what that object is doing meanwhile>"}, slot("...")],
        "ratings": [_R, slot("...")]},
    "next_action": {"activity": "<what the person does next, in a few words>", "minutes": slot("<5-120>")},
    "rate_importance": {"ratings": [_R, slot("...")]},
    "reflection_questions": {"questions": ["<a question about the person's memories>", slot("...")],
                             "ratings": [_R, slot("...")]},
    "reflection_insights": {"insights": [
        {"insight": "<what the person concludes from the memories>", "because": [slot("<memory number>")],
         "importance": _R}]},
    "summary_description": {"core": "<who the person is, from the memories above>",
                            "occupation": "<what the person does each day, from the memories above>",
                            "feeling": "<how the person feels about recent progress, from the memories above>"},
    "react": {"context_summary": "<what the person knows that bears on this>",
              "react": slot("<true or false>"), "talk": slot("<true or false>"),
              "reaction": "<only when reacting without talking: what the person does instead>",
              "opening": "<only when talking: the first words said, in the first person>"},
    "utterance": {"relationship": "", "utterance": "<the next words said, in the first person>",
                  "end": slot("<true or false>"), "tells": []},
    "utterance_commit": {"relationship": "", "utterance": "<the next words said, in the first person>",
                         "end": slot("<true or false>"), "tells": [],
                         "commitment": {"what": "<what is promised>", "by": "<HH:MM>",
                                        "where": "<one of the places listed>"}},
    "summarize_conversation": {"summary": "<the conversation in one sentence, naming the other>",
                               "importance": _R,
                               "learned": [{"fact": "<something new the other said, as a full sentence>",
                                            "importance": _R}],
                               "plan_changes": slot("<true or false>")},
    "summarize_conversation_social": {
        "summary": "<the conversation in one sentence, naming the other>", "importance": _R,
        "learned": [{"fact": "<something new the other said, as a full sentence>", "importance": _R}],
        "plan_changes": slot("<true or false>"), "sentiment": slot("<0-10>"),
        "relationship": "<the relationship with the other, in one sentence>"},
    "interview": {"answer": "<the person's answer, in the first person>"},
    "choose_place": {"choice": "<one of the options, spelled exactly>"},
    "object_state": {"state": "<what the object is doing, in a few words>"},
    "social_goal": {"goal": "<a goal of the person's own, in a few words>", "need": "<one of the needs listed, or empty>"},
    "rate_person": {"rating": slot("<1-10>")},
    "infer_role": {"role": "<the person's role in the town, in a word or two>"},
    "constitution_feedback": {"text": "<what the person thinks of the constitution, in the first person>",
                              "rate": slot("<the tax rate wanted, in percent>")},
    "amendments": {"amendments": [{"text": "<an amendment, in a sentence>", "rate": slot("<its tax rate in percent, or null>")},
                                  slot("...")]},
    "vote": {"votes": ["<yes or no>", slot("... one per amendment ...")]},
    "revise_constitution": {"text": "<the whole constitution, with the amendments written in>"},
    "meme_summary": {"topics": [{"topic": "<a common idea, in a few words>",
                                 "keywords": ["<a one-word keyword>", slot("...")]}, slot("...")]},
    "pay_tax": {"payments": [{"item": "<an item held>", "qty": slot("<how many>")}]},
}
EXAMPLES["decompose_economy"] = {"actions": [{**EXAMPLES["decompose"]["actions"][0], "op": "<one of the ops listed, or empty>"},
                                             slot("...")], "ratings": EXAMPLES["decompose"]["ratings"]}
EXAMPLES["summarize_conversation_civic"] = {**EXAMPLES["summarize_conversation"], "desired_rate": slot("<percent, or null>")}
EXAMPLES["summarize_conversation_social_civic"] = {**EXAMPLES["summarize_conversation_social"],
                                                   "desired_rate": slot("<percent, or null>")}


def example(name: str) -> str:
    """A task's example as shown: JSON, with its bare placeholders (`slot`) unquoted."""
    return re.sub(r'"\\u0000(.*?)\\u0000"', r"\1", json.dumps(EXAMPLES[name], ensure_ascii=False))
