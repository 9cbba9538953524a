"""Small pieces of English for descriptions built from plan phrases, and clock times."""

from __future__ import annotations

# What an activity is, by its words: (kind, its symbol in the agents list, keywords), the first kind
# one of whose keywords the activity contains. The sim's own sleep is the activity "sleeping"; a bed
# alone says nothing ("get out of bed").
ACTIVITY_KINDS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("sleeping", "z", ("sleep", "nap")),
    ("talking", '"', ("talk", "chat", "convers", "meet", "greet")),
    ("eating", "%", ("eat", "breakfast", "lunch", "dinner", "meal", "coffee", "snack", "cook")),
    ("working", "#", ("work", "shift", "serv", "open", "clos", "clean", "fix", "paint", "write", "research",
                      "teach", "sell", "stock")),
    ("studying", "=", ("read", "study", "learn", "homework", "class")),
    ("exercising", "^", ("walk", "exercise", "run", "jog", "stretch")),
    ("leisure", "~", ("relax", "rest", "watch", "music", "play", "shower", "bath")),
)


def activity_kind(activity: str | None) -> str | None:
    """The kind of ACTIVITY_KINDS an activity is ("eat toast" -> "eating"), None for any other."""
    text = (activity or "").lower()
    for kind, _, words in ACTIVITY_KINDS:
        if any(w in text for w in words):
            return kind
    return None


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
