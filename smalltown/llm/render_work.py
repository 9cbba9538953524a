"""Prompts of issue 17's tasks (the economy's decomposition, role inference, civics), kept apart
from render.py's size: each renderer fills its template's extra placeholders and registers itself
in render's tables, which render.py imports this module to fill."""

from __future__ import annotations

from smalltown.llm import tasks as T
from smalltown.llm.render import EXAMPLES, NONE, _EXTRA, _decompose, _social_goal, quote, slot


def _decompose_economy(t: T.EconomyDecompose) -> dict[str, str]:
    """Decompose in a world with an economy: the ops feasible there and what the person holds."""
    ops = "; ".join(quote(o.label) + (f" (takes at least {o.minutes} minutes)" if o.minutes else "") for o in t.ops)
    held = ", ".join(f"{h.qty} {quote(h.item)}" for h in t.inventory) or "nothing"
    need = f"\n{t.persona.name} is working toward: {quote(t.need)}" if t.need else ""
    return {**_decompose(t), "economy_task": _OP_TASK,
            "economy_part": f"What {t.persona.name} can do here with goods:\n{ops or NONE}\n"
                            f"{t.persona.name} holds: {held}{need}"}


# the same for every agent: with the instructions, before the card (cached with them)
_OP_TASK = (' When an action does one of the things the person "can do here with goods", give it as the '
            'action\'s "op", spelled exactly as listed (without the quotes); else leave "op" empty.')


_EXTRA["decompose_economy"] = _decompose_economy
EXAMPLES["decompose_economy"] = {"actions": [{**EXAMPLES["decompose"]["actions"][0], "op": "<one of the ops listed, or empty>"},
                                             slot("...")], "ratings": EXAMPLES["decompose"]["ratings"]}


def _infer_role(t: T.InferRole) -> dict[str, str]:
    goals = "\n".join(f"- {quote(g.goal)}" + (f" (for the community's {quote(g.need)})" if g.need else "")
                      for g in t.goals)
    return {"goals": goals or NONE, "community_goal": quote(t.community_goal) if t.community_goal else NONE,
            "role": quote(t.role) if t.role else "none yet"}


_EXTRA["infer_role"] = _infer_role
EXAMPLES["infer_role"] = {"role": "<the person's role in the town, in a word or two>"}


def _social_goal_need(t: T.SocialGoal) -> dict[str, str]:
    """The goal question, its current subgoal followed by the need it serves when it has one (a
    goal without a need, or a world that declares none, reads as before)."""
    v = _social_goal(t)
    if t.goal and t.goal_need:
        v["goal"] += f" (for the community's {quote(t.goal_need)})"
    return v


_EXTRA["social_goal"] = _social_goal_need


# --- civics (issue 17: llm/tasks/civics.py) ---------------------------------------------------


def _stance_part(t: T.Task) -> dict[str, str]:
    name = t.persona.name
    lines = []
    if getattr(t, "stance_text", ""):
        lines.append(f"What {name} believes and argues for: {quote(t.stance_text)}")
    if getattr(t, "stance", None) is not None:
        lines.append(f"The tax rate {name} has come to want: {t.stance}%")
    return {"stance_part": "\n".join(lines)}


def _rate(r: int | None) -> str:
    return f"sets the tax rate to {r}%" if r is not None else "sets no tax rate"


def _amendments_listed(amendments: list) -> str:
    return "\n".join(f"{i}. {quote(a.text)} ({_rate(a.rate)})" for i, a in enumerate(amendments, 1)) or NONE


def _feedback(t: T.Amendments) -> dict[str, str]:
    return {"feedback_part": "\n".join(f"- {quote(f.who)} (wants {f.rate}%): {quote(f.text)}" for f in t.feedback) or NONE}


def _holdings(t: T.PayTax) -> dict[str, str]:
    return {"holdings_part": ", ".join(f"{h.qty} {quote(h.item)}" for h in t.holdings) or "nothing"}


def _summary_civic(t: T.Task) -> dict[str, str]:
    """The summary's stance part (worlds with civics): after the social part, when on."""
    from smalltown.llm.render import _summary_social
    v = _summary_social(t)
    now = f"{t.stance}%" if t.stance is not None else f"none yet (the rate in force is {t.rate}%)"
    v["social_line"] = "\n".join(x for x in (v["social_line"], f"The tax rate {t.persona.name} wanted before this "
                                             f"conversation: {now}") if x)
    v["social_ask"] += (' Also give "desired_rate": only if the conversation touched the tax, the tax rate in '
                        f'percent {t.persona.name} wants now; else null.')
    return v


def _civic_line(t: T.Task) -> str:
    """A talk question's civic part (react, utterance): an influencer's beliefs and its aim ("" without
    civics: the prompt is as before)."""
    name, parts = t.persona.name, []
    if t.stance_text:
        parts.append(f"What {name} believes and argues for: {quote(t.stance_text)}")
    if getattr(t, "persuading", False):
        parts.append(f"{name} seeks people out to explain this view and win their support.")
    return "\n".join(parts)


def _with_civic(extra):
    """The constitution in force goes before the card (the same for every agent: it stays cached with
    the instructions); the asker's own civic part after it."""
    return lambda t: {**extra(t), "civic_line": _civic_line(t), "constitution_part":
                      f"The town's constitution in force: {quote(t.constitution)}" if t.constitution else ""}


for _name in ("react", "utterance", "utterance_commit"):
    _EXTRA[_name] = _with_civic(_EXTRA[_name])

_EXTRA.update({"constitution_feedback": _stance_part, "vote": lambda t: {**_stance_part(t),
               "amendments_part": _amendments_listed(t.amendments)}, "amendments": _feedback,
               "revise_constitution": lambda t: {"passed_part": _amendments_listed(t.passed)}, "pay_tax": _holdings,
               "summarize_conversation_civic": _summary_civic, "summarize_conversation_social_civic": _summary_civic})
EXAMPLES.update({
    "constitution_feedback": {"text": "<what the person thinks of the constitution, in the first person>",
                              "rate": slot("<the tax rate wanted, in percent>")},
    "amendments": {"amendments": [{"text": "<an amendment, in a sentence>", "rate": slot("<its tax rate in percent, or null>")},
                                  slot("...")]},
    "vote": {"votes": ["<yes or no>", slot("... one per amendment ...")]},
    "revise_constitution": {"text": "<the whole constitution, with the amendments written in>"},
    "pay_tax": {"payments": [{"item": "<an item held>", "qty": slot("<how many>")}]},
    "summarize_conversation_civic": {**EXAMPLES["summarize_conversation"], "desired_rate": slot("<percent, or null>")},
    "summarize_conversation_social_civic": {**EXAMPLES["summarize_conversation_social"],
                                            "desired_rate": slot("<percent, or null>")},
})
