"""Small pieces of English for descriptions built from plan phrases, and clock times."""

from __future__ import annotations

import re

# What an activity is, by its words: (kind, its symbol in the agents list, keywords). The first kind
# in this order with a keyword among the activity's words wins ("make coffee and toast" is eating).
# A keyword matches a whole word, or that word inflected ("serve" -> "serving", "chat" ->
# "chatting", "study" -> "studies"): "eat" is not in "seat" nor "read" in "ready". The words after
# "at" name a place up to a linking word ("make lattes at the coffee machine" is not eating; "wash up
# at the sink after dinner" still is). The sim's own sleep is the activity "sleeping"; a bed alone
# says nothing ("get out of bed").
ACTIVITY_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sleeping", "z", ("sleep", "nap")),
    ("talking", '"', ("talk", "chat", "conversation", "converse", "meet", "meeting", "greet")),
    ("eating", "%", ("eat", "breakfast", "lunch", "dinner", "supper", "meal", "coffee", "tea", "snack", "cook",
                     "toast", "sandwich", "soup", "salad")),
    ("working", "#", ("work", "shift", "serve", "customer", "client", "open", "close", "clean", "fix", "paint",
                      "write", "research", "teach", "sell", "stock", "restock", "lock", "unlock", "sweep", "wipe")),
    ("studying", "=", ("read", "reread", "study", "learn", "homework", "class", "lecture")),
    ("exercising", "^", ("walk", "exercise", "run", "jog", "stretch")),
    ("leisure", "~", ("relax", "rest", "watch", "music", "play", "shower", "bath", "bathe")),
)
_LINKS = {"after", "before", "with", "for", "and", "to", "then", "while"}  # end an "at <place>" phrase


def _forms(word: str) -> set[str]:
    """A keyword and its inflections: -s, -es, -ed, -ing, a final e dropped, a consonant doubled, y -> ies."""
    forms = {word, word + "s", word + "es", word + "ed", word + "d", word + "ing", word + word[-1] + "ing",
             word + word[-1] + "ed"}
    if word.endswith("e"):
        forms.add(word[:-1] + "ing")
    if word.endswith("y"):
        forms |= {word[:-1] + "ies", word[:-1] + "ied"}
    return forms


_KIND_OF: dict[str, str] = {}  # every form of every keyword -> its kind (the first kind that has it)
for _kind, _, _words in ACTIVITY_KINDS:
    for _word in _words:
        for _form in _forms(_word):
            _KIND_OF.setdefault(_form, _kind)
_ORDER = {kind: i for i, (kind, _, _) in enumerate(ACTIVITY_KINDS)}


def _activity_words(text: str) -> list[str]:
    """The activity's words, without those of an "at <place>" phrase."""
    words, at_place = [], False
    for word in re.findall(r"[a-z]+", text.lower()):
        if word == "at":
            at_place = True
        elif at_place and word in _LINKS:
            at_place = False
        if not at_place:
            words.append(word)
    return words


def activity_kind(activity: str | None) -> str | None:
    """The kind of ACTIVITY_KINDS an activity is ("eat toast" -> "eating"), None for any other."""
    kinds = [_KIND_OF[w] for w in _activity_words(activity or "") if w in _KIND_OF]
    return min(kinds, key=_ORDER.__getitem__) if kinds else None


_KEEP = {"sleeping", "talking", "walking"}
_DOUBLE = {"get", "sit", "run", "shop", "stop", "plan", "chat", "jog", "set", "put", "swim", "cut", "hit", "tap", "nap", "mop"}


def gerund(phrase: str) -> str:
    """"wipe the tables" -> "wiping the tables": plans are imperative, descriptions of what
    someone is doing are not ("Ann Lee is wiping the tables")."""
    first, sep, rest = phrase.strip().partition(" ")
    low = first.lower()
    if not low.isalpha() or low.endswith("ing") or low in _KEEP:
        return phrase
    if low == "be":
        ing = "being"
    elif low.endswith("ie"):
        ing = low[:-2] + "ying"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        ing = low[:-1] + "ing"
    elif low in _DOUBLE:
        ing = low + low[-1] + "ing"
    else:
        ing = low + "ing"
    return ing + sep + rest


def hhmm(minute: int) -> str:
    """A minute of the day as the plans write it: 545 -> "09:05"."""
    return f"{minute // 60 % 24:02d}:{minute % 60:02d}"


def doing(activity: str | None, address: str | None, walking: bool) -> str:
    """What others see an agent doing: "wiping the tables", "walking to the kitchen to cook
    dinner", "walking to Ann Lee's room to sleep" (a place named after someone takes no "the")."""
    if activity is None:
        return "idle"
    if walking and address and address.count(":") == 2:
        purpose = "sleep" if activity == "sleeping" else activity
        arena = address.split(":")[1]
        return f"walking to {arena if arena[:1].isupper() else 'the ' + arena} to {purpose}"
    return gerund(activity)
