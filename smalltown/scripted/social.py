"""Social awareness, scripted (mind/social.py): the feeling toward the other after a talk, and how
it leans the decision to start one; and how the speaker's own extroversion does.

From typed inputs only: the feeling before the talk, the tones the world file gives the other's
scripted lines, whether the other passed on news (the declared facts of its lines), and the
other's innate traits, which are world-file text read through a small lexicon of warm and cold
words (general English, as the importance lexicon is). Scripted tones move the feeling most; an
unscripted talk moves it one step toward where the other's traits draw it.
Extroversion is the speaker's own traits read through a lexicon of outgoing and reserved words:
an outgoing agent starts more talks, with anyone (a trait, so with every module on or off).
"""

from __future__ import annotations

from smalltown.llm.tasks import Feeling
from smalltown.llm.tasks import ConversationOut
from smalltown.llm.tasks.social import SocialConversationOut, SummarizeConversationSocial
from smalltown.scripted.words import clip, first_name, words

WARM = frozenset("kind kindly warm warmhearted friendly gentle generous caring helpful cheerful patient "
                 "polite considerate thoughtful sweet loving affectionate compassionate supportive "
                 "welcoming sociable outgoing easygoing funny charming honest loyal trustworthy "
                 "empathetic hospitable courteous amiable good-natured jovial".split())
COLD = frozenset("rude cold unfriendly grumpy arrogant mean cruel selfish impatient harsh hostile "
                 "sarcastic bitter dismissive nasty spiteful vain condescending aloof irritable "
                 "quarrelsome stubborn deceitful dishonest greedy boastful snobbish abrasive blunt "
                 "gruff moody petty jealous callous".split())
OUTGOING = frozenset("outgoing talkative sociable gregarious chatty extroverted extrovert lively energetic "
                     "bubbly boisterous cheerful playful jovial friendly charming witty loud expressive "
                     "enthusiastic vivacious social warm welcoming".split())
RESERVED = frozenset("shy reserved quiet introverted introvert withdrawn timid solitary private aloof "
                     "dreamy taciturn retiring bashful reticent secretive distant guarded anxious "
                     "serious nervous".split())
TONE = {"kind": 2, "neutral": 0, "rude": -3}  # a rude word weighs more than a kind one
LEAN = 0.1  # how much each point of feeling above or below neutral changes the chance to talk
# the chance to start a talk rises by DRIVE of itself per outgoing word more than reserved ones, at
# most DRIVE_WORDS words' worth either way (x0.25 .. x2): linear, so a town whose traits balance
# keeps about the talk it had without it (a power of the balance would raise every town's)
DRIVE = 0.5
DRIVE_WORDS = 2
DRIVE_MIN = 0.25


def balance(text: str, up: frozenset[str], down: frozenset[str]) -> int:
    """How many more of `text`'s words are in `up` than in `down`."""
    w = words(text)
    return sum(x in up for x in w) - sum(x in down for x in w)


def warmth(traits: str) -> int:
    """-1 cold, 0 neither, 1 warm: the balance of the lexicon's words in `traits`."""
    score = balance(traits, WARM, COLD)
    return (score > 0) - (score < 0)


def sentiment(before: int, tones: list[str], other_traits: str, news: bool) -> int:
    """The feeling after a talk: scripted tones first; else a step toward 5 + 2 x the other's
    warmth; passed-on news is appreciated (+1)."""
    if tones:
        value = before + max(-4, min(4, sum(TONE.get(t, 0) for t in tones)))
    else:
        target = 5 + 2 * warmth(other_traits)
        value = before + (target > before) - (target < before)
    return max(0, min(10, value + (1 if news else 0)))


def relationship(me: str, other: str, value: int, tones: list[str]) -> str:
    who = first_name(other)
    feel = ("I can't stand" if value <= 1 else "I dislike" if value <= 3 else "I have mixed feelings about"
            if value == 4 else "I don't know much about" if value == 5 else "I like" if value <= 7 else "I'm very fond of")
    lately = (f"; {who} was rude to me last time" if tones and tones[-1] == "rude"
              else f"; {who} was kind to me last time" if tones and tones[-1] == "kind" else "")
    return clip(f"{feel} {who}{lately}.", 200)


def summarize_social(task: SummarizeConversationSocial, base: ConversationOut) -> SocialConversationOut:
    """`base` (the plain summary's answer) with the feeling after the talk."""
    news = any(x.facts for x in task.lines if x.speaker == task.other)
    value = sentiment(task.feeling.sentiment, list(task.tones), task.other_traits, news)
    return SocialConversationOut(**dict(base), sentiment=value,
                                 relationship=relationship(task.persona.name, task.other, value, list(task.tones)))


def lean(feeling: Feeling | None) -> float:
    """The factor on the chance to start a talk: more with someone liked, less with someone
    disliked (1.0 when the setting is off)."""
    if feeling is None:
        return 1.0
    return max(0.2, 1.0 + LEAN * (feeling.sentiment - 5))


def drive(traits: str) -> float:
    """The factor on the chance to start a talk from the speaker's own traits: 1 + DRIVE per outgoing
    word more than reserved ones (1.0 for neither), at most DRIVE_WORDS words' worth either way,
    never below DRIVE_MIN."""
    b = max(-DRIVE_WORDS, min(DRIVE_WORDS, balance(traits, OUTGOING, RESERVED)))
    return max(DRIVE_MIN, 1.0 + DRIVE * b)
