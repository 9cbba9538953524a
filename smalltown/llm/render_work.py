"""The town's work in prompts (llm/tasks/economy.py, goals.py, roles.py, civics.py): a decomposition
with the goods that can be made and traded, a goal and a role with the community's needs, and the
civic questions (a constitution, its amendments, the vote, the tax); a town's meme summary."""

from __future__ import annotations

from smalltown.llm.render_parts import NONE, extra, quote
from smalltown.llm.render_plan import decompose
from smalltown.llm.render_talk import summary_social
from smalltown.llm.tasks import Amendments, EconomyDecompose, InferRole, Op, PayTax, SocialGoal, Task
from smalltown.llm.tasks.memes import MemeSummary

# the same for every agent: with the instructions, before the card (cached with them)
_OP_TASK = (' When an action does one of the things the person "can do here with goods", give it as the '
            'action\'s "op", spelled exactly as listed (without the quotes); else leave "op" empty.')


@extra("decompose_economy")
def _decompose_economy(t: EconomyDecompose) -> dict[str, str]:
    """Decompose in a world with an economy: the ops feasible there and what the person holds."""
    ops = "; ".join(quote(o.label) + (f" (takes at least {o.minutes} minutes)" if o.minutes else "") for o in t.ops)
    held = ", ".join(f"{h.qty} {quote(h.item)}" for h in t.inventory) or "nothing"
    need = f"\n{t.persona.name} is working toward: {quote(t.need)}" if t.need else ""
    return {**decompose(t), "economy_task": _OP_TASK,
            "economy_part": f"What {t.persona.name} can do here with goods:\n{ops or NONE}\n"
                            f"{t.persona.name} holds: {held}{need}{_outcomes(t)}"}


def _outcomes(t: EconomyDecompose) -> str:
    """What came of the ops tried lately (action awareness), after the holdings; "" when none. In
    words, not as the ops' labels: a small model copies a label it sees twice."""
    if not t.outcomes:
        return ""
    lines = [f"- {_ago(o.minutes_ago)}, {_tried(o.op)}: " + ("done" if o.done else f"did not happen: {quote(o.why)}")
             for o in t.outcomes]
    return (f"\nHow {t.persona.name}'s latest tries with goods went (what did not happen is better tried with "
            "someone else or with other goods):\n" + "\n".join(lines))


def _tried(op: Op) -> str:
    what = f"{op.qty} {quote(op.item)}"
    if op.op == "give":
        return f"giving {what} to {quote(op.other)}"
    if op.op == "trade":
        return f"trading {what} with {quote(op.other)} for {op.get_qty} {quote(op.get)}"
    if op.op == "deposit":
        return f"putting {what} in the town chest"
    return f"{'gathering' if op.op == 'gather' else 'making'} {what}"


def _ago(minutes: int) -> str:
    if minutes < 1:
        return "just now"
    return f"{minutes} minute{'s' * (minutes != 1)} ago" if minutes < 120 else f"{minutes // 60} hours ago"


@extra("social_goal")
def _social_goal(t: SocialGoal) -> dict[str, str]:
    """The others and what they work toward; the current subgoal followed by the need it serves
    when it has one (a goal without a need, or a world that declares none, reads as before)."""
    others = "\n".join(f"- {quote(o.name)}: {quote(o.activity)}" + (f" (working toward {quote(o.need)})" if o.need else "")
                       for o in t.others)
    goal = quote(t.goal) if t.goal else "none yet"
    if t.goal and t.goal_need:
        goal += f" (for the community's {quote(t.goal_need)})"
    needs = ", ".join(quote(n) for n in dict.fromkeys(t.heard))  # (each once: the list has one a person)
    heard = f"People {t.persona.name} talked with lately work toward: {needs}" if t.heard else ""  # (none: as before)
    return {"others": others or NONE, "community_goal": quote(t.community_goal) if t.community_goal else NONE,
            "goal": goal, "heard_part": heard}


@extra("infer_role")
def _infer_role(t: InferRole) -> dict[str, str]:
    goals = "\n".join(f"- {quote(g.goal)}" + (f" (for the community's {quote(g.need)})" if g.need else "")
                      for g in t.goals)
    return {"goals": goals or NONE, "community_goal": quote(t.community_goal) if t.community_goal else NONE,
            "role": quote(t.role) if t.role else "none yet"}


# --- civics -----------------------------------------------------------------------------------


@extra("constitution_feedback")
def _stance_part(t: Task) -> dict[str, str]:
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


@extra("vote")
def _vote(t: Task) -> dict[str, str]:
    return {**_stance_part(t), "amendments_part": _amendments_listed(t.amendments)}


@extra("revise_constitution")
def _revise(t: Task) -> dict[str, str]:
    return {"passed_part": _amendments_listed(t.passed)}


@extra("amendments")
def _feedback(t: Amendments) -> dict[str, str]:
    return {"feedback_part": "\n".join(f"- {quote(f.who)} (wants {f.rate}%): {quote(f.text)}" for f in t.feedback) or NONE}


@extra("pay_tax")
def _holdings(t: PayTax) -> dict[str, str]:
    return {"holdings_part": ", ".join(f"{h.qty} {quote(h.item)}" for h in t.holdings) or "nothing"}


@extra("summarize_conversation_civic", "summarize_conversation_social_civic")
def _summary_civic(t: Task) -> dict[str, str]:
    """The summary's stance part (worlds with civics): after the social part, when on."""
    v = summary_social(t)
    now = f"{t.stance}%" if t.stance is not None else f"none yet (the rate in force is {t.rate}%)"
    v["social_line"] = "\n".join(x for x in (v["social_line"], f"The tax rate {t.persona.name} wanted before this "
                                             f"conversation: {now}") if x)
    v["social_ask"] += (' Also give "desired_rate": only if the conversation touched the tax, the tax rate in '
                        f'percent {t.persona.name} wants now; else null.')
    return v


# --- memes ------------------------------------------------------------------------------------


@extra("meme_summary")
def _meme_summary(t: MemeSummary) -> dict[str, str]:
    goals = "\n".join(f"- {g.agent}: {quote(g.goal)}" for g in t.goals)
    return {"where": f"in {t.town}" if t.town else "in the countryside, outside the towns", "goals": goals or NONE}
