"""The scripted backend: deterministic answers computed from a task's inputs, no model.

It is plain but plausible: routines from the persona, places chosen by matching the words of
the activity against the options, importance from a keyword lexicon, template dialogue that
passes news on word for word. Same seed and inputs, same answers. Places and object states are
here; planning is in `scripted_plan`, memory in `scripted_memory`, talk in `scripted_talk`.
"""

from __future__ import annotations

import re

from smalltown.llm import scripted_memory, scripted_plan, scripted_talk
from smalltown.llm.backend import Answer
from smalltown.seeded import stable_int
from smalltown.llm.tasks import (
    ChoosePlace,
    ChoosePlaceOut,
    ConversationOut,
    DailyPlan,
    DailyPlanOut,
    Decompose,
    DecomposeOut,
    HourlySchedule,
    HourlyScheduleOut,
    Interview,
    InterviewOut,
    NextAction,
    NextActionOut,
    ObjectState,
    ObjectStateOut,
    Output,
    RateImportance,
    RateImportanceOut,
    React,
    ReactOut,
    ReflectionInsights,
    ReflectionInsightsOut,
    ReflectionQuestions,
    ReflectionQuestionsOut,
    SummarizeConversation,
    SummaryDescription,
    SummaryOut,
    Task,
    Utterance,
    UtteranceOut,
)

# activity word -> words of places where it is done
LEXICON: dict[str, tuple[str, ...]] = {
    "sleep": ("bed", "bedroom", "room"), "sleeping": ("bed", "bedroom", "room"),
    "bed": ("bed", "bedroom", "room"), "nap": ("bed", "sofa", "couch"),
    "morning": ("bathroom", "shower", "sink"),
    "shower": ("bathroom", "shower"), "wash": ("bathroom", "sink"),
    "breakfast": ("kitchen", "table", "dining"), "lunch": ("kitchen", "table", "dining", "seating"),
    "dinner": ("kitchen", "table", "dining", "stove"), "cook": ("kitchen", "stove"),
    "eat": ("kitchen", "table", "dining", "seating"), "meal": ("kitchen", "table", "dining"),
    "coffee": ("cafe", "seating", "coffee", "table"), "drink": ("pub", "bar", "table", "tables"),
    "drinks": ("pub", "bar", "counter"), "chat": ("seating", "table", "common", "tables"),
    "class": ("classroom", "desks", "desk", "student"), "classes": ("classroom", "desks", "student"),
    "teach": ("classroom", "lecture", "blackboard", "podium"), "lectures": ("library", "desk", "office", "table"),
    "study": ("library", "desk", "table"), "research": ("library", "desk", "office", "table"),
    "read": ("library", "bookshelf", "armchair", "sofa", "couch", "chair", "desk", "bedroom"), "book": ("library", "bookshelf", "table"),
    "serve": ("counter", "behind", "bar", "cafe", "pub"), "open": ("counter", "behind", "cashier"),
    "customers": ("counter", "behind", "cashier", "cafe"), "counter": ("counter", "cashier", "behind"),
    "buy": ("shelves", "grocery", "store", "market"), "groceries": ("shelves", "grocery", "store"),
    "browse": ("shelves", "store", "supply"), "shop": ("shelves", "store", "shop"),
    "walk": ("park", "garden", "path", "bench"),
    "relax": ("common", "living", "sofa", "couch", "armchair", "chair", "bench"),  # not the bed: that is for sleep
    "paint": ("studio", "easel"), "painting": ("studio", "easel"), "painter": ("studio", "easel"),
    "write": ("desk", "study"), "writing": ("desk", "study"), "novel": ("desk", "study"), "writer": ("desk",),
    "poem": ("desk",), "poetry": ("desk",), "poet": ("desk",), "book's": ("desk",),
    "software": ("desk", "computer"), "engineer": ("desk", "computer"), "code": ("desk", "computer"),
    "music": ("piano", "music", "desk"), "composition": ("piano", "music", "desk"),
    "photo": ("studio", "camera", "park"), "photography": ("studio", "camera"), "photographer": ("studio",),
    "animation": ("studio", "desk", "computer"), "animator": ("studio", "desk"), "artist": ("studio", "easel", "desk"),
    "actor": ("common", "stage", "studio"), "rehearse": ("common", "stage"), "comedian": ("common", "stage"),
    "campaign": ("desk", "living", "office", "table"), "mayor": ("desk", "office"),
    "law": ("desk", "office"), "lawyer": ("desk", "office"), "tax": ("desk", "office"),
    "mathematician": ("desk",), "math": ("desk",), "philosopher": ("desk", "study"), "philosophy": ("desk",),
    "party": ("cafe", "seating", "tables", "common", "bar", "living"), "guests": ("cafe", "seating", "tables", "common"),
    "decorate": ("cafe", "tables", "common", "living"), "election": ("desk", "office", "living"),
    "fire": ("stove", "kitchen"), "leaking": ("sink", "bathroom", "kitchen", "shower"),
    "house": ("garden", "living", "kitchen"), "garden": ("garden",), "tend": ("garden",),
    "work": ("desk", "counter", "studio", "office", "shelves"),
}
HOME_WORDS = ("sleep", "sleeping", "morning routine", "breakfast", "dinner", "at home", "bed")
STOP = {"a", "an", "the", "at", "in", "on", "of", "and", "to", "for", "with", "up", "his", "her", "their"}
_WORD = re.compile(r"[a-z']+")

OBJECT_STATES: tuple[tuple[str, str, str], ...] = (
    # (object word, activity word or "", state)
    ("bed", "sleep", "being slept in"),
    ("bed", "", "in use"),
    ("stove", "", "cooking"),
    ("coffee", "", "brewing coffee"),
    ("shower", "", "running"),
    ("toilet", "", "occupied"),
    ("sink", "", "running water"),
    ("piano", "", "being played"),
    ("easel", "", "holding a painting in progress"),
    ("refrigerator", "", "open"),
    ("bar", "", "busy with orders"),
    ("counter", "serve", "busy with customers"),
    ("desk", "", "covered in work"),
    ("table", "", "in use"),
    ("shelves", "", "being browsed"),
    ("bench", "", "occupied"),
)


def words(text: str) -> list[str]:
    return [w.removesuffix("'s") for w in _WORD.findall(text.lower()) if w not in STOP]


class ScriptedBackend:
    name = "scripted"
    model = "scripted"

    def __init__(self, seed: int = 0):
        self.seed = seed

    def answer(self, task: Task, prompt: str) -> Answer:
        handler = {
            DailyPlan: self._daily_plan,
            HourlySchedule: self._hourly,
            Decompose: self._decompose,
            NextAction: self._next_action,
            ChoosePlace: self._choose_place,
            ObjectState: self._object_state,
            RateImportance: self._rate,
            ReflectionQuestions: self._questions,
            ReflectionInsights: self._insights,
            SummaryDescription: self._summary,
            React: self._react,
            Utterance: self._utterance,
            SummarizeConversation: self._summarize,
            Interview: self._interview,
        }[type(task)]
        out: Output = handler(task)
        out = type(out).model_validate(out.model_dump())  # what a model's answer would go through
        return Answer(output=out, raw=out.model_dump_json())

    # --- planning (scripted_plan) ----------------------------------------------------------

    def _daily_plan(self, task: DailyPlan) -> DailyPlanOut:
        return scripted_plan.daily_plan(self.seed, task)

    def _hourly(self, task: HourlySchedule) -> HourlyScheduleOut:
        return scripted_plan.hourly(self.seed, task)

    def _decompose(self, task: Decompose) -> DecomposeOut:
        out = scripted_plan.decompose(task)
        out.ratings = [scripted_memory.importance(m) for m in task.rate]
        return out

    def _next_action(self, task: NextAction) -> NextActionOut:
        return scripted_plan.next_action(self.seed, task)

    # --- memory (scripted_memory) -------------------------------------------------------------

    def _rate(self, task: RateImportance) -> RateImportanceOut:
        return scripted_memory.rate_importance(task)

    def _questions(self, task: ReflectionQuestions) -> ReflectionQuestionsOut:
        return scripted_memory.reflection_questions(task)

    def _insights(self, task: ReflectionInsights) -> ReflectionInsightsOut:
        return scripted_memory.reflection_insights(task)

    def _summary(self, task: SummaryDescription) -> SummaryOut:
        return scripted_memory.summary_description(self.seed, task)

    # --- reacting and talking (scripted_talk) -------------------------------------------------

    def _react(self, task: React) -> ReactOut:
        return scripted_talk.react(self.seed, task)

    def _utterance(self, task: Utterance) -> UtteranceOut:
        return scripted_talk.utterance(self.seed, task)

    def _summarize(self, task: SummarizeConversation) -> ConversationOut:
        return scripted_talk.summarize_conversation(task)

    def _interview(self, task: Interview) -> InterviewOut:
        return scripted_talk.interview(task)

    # --- places -----------------------------------------------------------------------------

    def _choose_place(self, task: ChoosePlace) -> ChoosePlaceOut:
        act = task.activity.lower()
        opts = task.options
        if task.level == "sector":
            named = sorted((o for o in opts if o.lower() in act), key=len, reverse=True)
            if named:
                return ChoosePlaceOut(choice=named[0])
            if any(w in act for w in HOME_WORDS) and task.persona.home in opts:
                return ChoosePlaceOut(choice=task.persona.home)
            current = task.current.split(":")[0].strip()
            if current in opts:
                return ChoosePlaceOut(choice=current)
            return ChoosePlaceOut(choice=task.persona.home if task.persona.home in opts else opts[0])
        first = task.persona.name.split()[0].lower()
        act_words = words(task.activity)
        current_last = task.current.split(":")[-1].strip()
        restful = any(w in act_words for w in ("sleep", "sleeping", "nap", "bed"))
        eating = any(w in act_words for w in ("eat", "lunch", "breakfast", "dinner", "coffee", "meal", "drink"))
        away = not task.within.removeprefix("in ").startswith(task.persona.home)

        def score(option: str) -> tuple[float, int]:
            ow = words(option)
            matched = set(ow) & set(act_words)
            s = 3.0 * len(matched)
            for w in act_words:
                for place_word in LEXICON.get(w, ()):
                    hits = [o for o in ow if place_word in o]  # "room" fits "bedroom"
                    if hits:
                        s += 1
                        matched.update(hits)
            s -= 0.25 * len(set(ow) - matched)  # "cafe" fits "serve at the cafe" better than "cafe kitchen"
            low = option.lower()
            if "'s" in low:
                if first not in low:
                    s -= 4  # someone else's room or bed
                elif restful:
                    s += 2  # one's own room, to sleep
            if away and "kitchen" in ow and eating:
                s -= 2  # away from home one eats where the guests sit, not in the staff kitchen
            # staying in the current area only breaks ties
            return (s, option == current_last, -(stable_int(self.seed, task.persona.name, task.activity, option) % 1000))

        return ChoosePlaceOut(choice=max(opts, key=score))

    def _object_state(self, task: ObjectState) -> ObjectStateOut:
        obj, act = words(task.object), task.activity.lower()
        for word, cue, state in OBJECT_STATES:
            # whole words ("bed" is not in "bedside table"), plurals too ("pub tables")
            if (word in obj or word + "s" in obj) and (not cue or cue in act):
                return ObjectStateOut(state=state)
        return ObjectStateOut(state="in use")

