"""Plain-text reading shared by the scripted backend: the importance lexicon, who and what a
memory is about, and turning a third-person memory into the agent's own first-person words.

Everything here is a pure function of its text arguments, so identical text gets identical
answers (the mind caches importance ratings by description).
"""

from __future__ import annotations

import re
from collections import Counter

from smalltown.llm.routine import Routine, read_routine

# --- the importance lexicon (SPEC 2) ----------------------------------------------------------

DANGER = re.compile(r"\b(burning|burnt|burns|fire|fires|smoke|smoking|flames?|flood(?:ed|ing)?|broken|"
                    r"emergency|leaking|leaks|overflowing)\b")
PARTY = re.compile(r"\b(part(?:y|ies)|invit\w*|valentine\w*)\b")
ELECTION = re.compile(r"\b(elections?|mayor\w*|candidates?|candidacy|running for)\b")
ROMANCE = re.compile(r"\b(crush|love|in love|dates?|dating|romantic|romance)\b")
CONVERSATION = re.compile(r"\b(talked with|talked to|conversation|chatted with|discussed)\b|\basked .+ answered:")
PLAN_RECORD = re.compile(r"'s (?:plan|schedule|revised schedule) (?:for|from)\b|^From \d\d:\d\d to \d\d:\d\d ")
INSIGHT = re.compile(r"\b(often spends time with|is dedicated to|cares about|is most focused on|knows that|"
                     r"has been thinking a lot about|shares a life with|is good friends with|are family|"
                     r"keeps a steady daily routine|knows well what matters|pays attention to what happens|"
                     r"takes each day as it comes|notices the small things|likes to keep busy|"
                     r"is getting used to the rhythm)\b")
INNER = re.compile(r"^(?:is curious|wonders|worries|believes|thinks|feels|likes|enjoys|loves|hopes|cares|"
                   r"is proud|is shy|admires|has a secret)\b")
MEETING = re.compile(r"\b(chat|chats|chatting|talking|talks|met|meets|meeting|greet\w*|visit\w*|hello)\b")
RELATION = re.compile(r"\b(married|wife|husband|son|daughter|mother|father|parents?|family|friends?|"
                      r"neighbou?rs?|colleagues?|roommates?|housemates?|lives with|shares a house)\b")
IDLE = re.compile(r"\bis (idle|sleeping|asleep)\b|\bsleeping\b$")
ROUTINE = re.compile(r"\b(sleep\w*|nap|napping|wak(?:e|es|ing)|eat\w*|breakfast|lunch|dinner|meal|cook\w*|"
                     r"snacks?|shower\w*|bath|brush\w*|dress\w*|morning routine|walk\w*|stroll\w*|jog\w*|"
                     r"relax\w*|rest|resting|tid(?:y|ying)|laundry|dishes|groceries|brows\w*|coffee|drink|"
                     r"read|reading|bed|stretch\w*)\b")
WORK = re.compile(r"\b(work\w*|serv\w*|customers?|class(?:es)?|lectures?|stud(?:y|ies|ying)|teach\w*|"
                  r"counter|shelves|restock\w*|paint\w*|writ\w*|research\w*|paper|novel|thesis|"
                  r"code|coding|app|project|shift|bar|drinks|rehears\w*|compos\w*|proof|accounts|"
                  r"clients?|photos?|animation|poems?|lab|campaign\w*|job|office|desk|easel|studio)\b")
# what an object can be doing: "<object> is <state>" is a plain object state
OBJECT_SUBJECT = re.compile(r"^(?:[a-z]|[A-Z][a-z]+'s )")


IMPERATIVES = {  # the first words of plan activities (the routine's, the templates', reactions')
    "answer", "arrange", "arrive", "ask", "attend", "back", "begin", "brew", "bring", "browse", "brush",
    "buy", "chat", "check", "clean", "come", "continue", "cook", "dance", "decorate", "discuss",
    "do", "draw", "drive", "eat", "edit", "feed", "file", "fill", "film", "find", "finish", "fix", "gather", "get",
    "go", "greet", "hang", "have", "head", "help", "host", "jog", "keep", "learn", "leave", "listen",
    "look", "make", "meet", "mix", "mop", "nap", "note", "open", "order", "pack", "paint", "pay",
    "photograph", "pick", "play", "practice", "practise", "prepare", "put", "read", "reflect",
    "rehearse", "relax", "reread", "rest", "restock", "return", "review", "ring", "save",
    "see", "serve", "set", "shop", "sing", "sit", "sketch", "sort", "start", "stay", "stop",
    "stream", "stretch", "study", "sweep", "swim", "take", "teach", "tend", "test", "thank",
    "think", "tidy", "turn", "use", "visit", "wait", "wake", "walk", "warm", "wash", "watch", "water",
    "welcome", "wipe", "work", "write",
}
_ACTIVITY = re.compile(r"^[A-Z][a-z]+(?: [A-Z][a-z]+)+ is ([a-z]+)\b( to [A-Z][^:]*:)?")


def _base(word: str) -> str | None:
    """The plan verb a word is, itself or as a gerund ("wiping" -> "wipe", "sitting" -> "sit")."""
    if word in IMPERATIVES:
        return word
    if word.endswith("ing") and len(word) > 4:
        stem = word[:-3]
        for cand in (stem, stem + "e", stem[:-1], stem[:-1] + "ie" if stem.endswith("y") else ""):
            if cand in IMPERATIVES:
                return cand
    return None


WHEN = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b(?:January|February|March|April|May|June|"
                  r"July|August|September|October|November|December) \d{1,2}\b", re.I)


def is_activity(text: str) -> bool:
    """An observed action as the engine words it: "<Name> is <plan activity>", imperative or
    gerund ("Klaus Mueller is studying in the library"), or on the way ("... is walking to Hobbs
    Cafe: cafe: ... to ..."): a routine sight, not news to repeat. Facts worded alike ("Sam Moore
    is running for mayor", "... is planning a party") are not plan verbs, so stay facts."""
    m = _ACTIVITY.match(text.strip())
    if not m or WHEN.search(text):  # a sight has no date: "... is hosting a party on February 14" is news
        return False
    return bool(_base(m.group(1)) or (m.group(1) == "walking" and m.group(2)))


def importance(text: str) -> int:
    """1 (mundane) .. 10 (poignant), from keywords only: identical text, identical rating."""
    low = text.strip().lower()
    if low.startswith("thought:"):
        return 8  # an inner voice
    hot = bool(DANGER.search(low) or PARTY.search(low) or ELECTION.search(low) or ROMANCE.search(low))
    if CONVERSATION.search(low):
        return 6 if hot else 5  # a conversation (a chat record, an interview)
    if PLAN_RECORD.search(text):
        return 5 if hot else 3
    if DANGER.search(low):
        return 9
    if OBJECT_SUBJECT.match(text.strip()) or IDLE.search(low):
        return 1  # "bed is idle", "Maria's bed is idle", "Klaus Mueller is sleeping"
    if INSIGHT.search(low):
        return 7 if hot else 6  # a reflection
    if PARTY.search(low) or ELECTION.search(low):
        return 8
    if ROMANCE.search(low):
        return 7
    if is_activity(text):  # someone's (or one's own) everyday action
        if MEETING.search(low):
            return 4
        if WORK.search(low) and not ROUTINE.search(low):
            return 3
        return 2 if ROUTINE.search(low) else 3
    if RELATION.search(low):
        return 5
    if MEETING.search(low):
        return 4
    if WORK.search(low):
        return 3
    if ROUTINE.search(low):
        return 2
    return 3


NEWS = 7  # rated at least this: worth passing on in a conversation


# --- who and what -----------------------------------------------------------------------------

_NAME = re.compile(r"\b([A-Z][a-z]+(?:-[A-Z][a-z]+)?) ([A-Z][a-z]+(?:-[A-Z][a-z]+)?)\b")
PLACE_WORDS = {
    "Cafe", "Park", "College", "Pub", "Market", "Store", "House", "Pharmacy", "Street", "Hall",
    "Supply", "Crown", "Willows", "Cottage", "Apartment", "Dorm", "Library", "School", "Hill", "Oak",
    "Day", "Lane", "Road", "Avenue", "Garden", "Space", "Bar", "Shop", "Square", "Church", "Office",
    "Station", "Hospital", "Bakery", "Restaurant", "Museum", "Theatre", "Theater", "Center", "Centre",
}
NOT_FIRST = {
    "The", "A", "An", "Did", "Hi", "Hello", "Hey", "Guess", "You", "I", "Thought", "Reaction", "Good",
    "Oh", "Yes", "No", "Well", "Anyway", "Really", "That", "This", "From", "Valentine", "Name", "Innate",
    "Lives", "On", "At", "In", "Dear", "Mr", "Mrs", "Ms", "Dr", "Professor",
}
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def people(text: str) -> list[str]:
    """Full names ("Maria Lopez") mentioned in a text, in order, without places and dates."""
    out = []
    for m in _NAME.finditer(text):
        first, last = m.groups()
        if first in NOT_FIRST or first in MONTHS or first in DAYS or last in MONTHS or last in DAYS:
            continue
        if last in PLACE_WORDS or first in PLACE_WORDS:
            continue
        out.append(f"{first} {last}")
    return list(dict.fromkeys(out))


def mentions(text: str, name: str) -> bool:
    """The text names this person (full name, or first name as a whole word)."""
    if name in text:
        return True
    first = name.split()[0]
    return bool(re.search(rf"\b{re.escape(first)}\b(?!['’]s (?:house|apartment|bed|room))", text))


def full_names(text: str, known: list[str]) -> str:
    """A lone first name ("Sam") becomes the full name the agent knows ("Sam Moore")."""
    by_first: dict[str, set[str]] = {}
    for n in known:
        by_first.setdefault(n.split()[0], set()).add(n)
    for first, names in by_first.items():
        if len(names) == 1:
            full = next(iter(names))
            last = full.split(" ", 1)[1]
            text = re.sub(rf"\b{re.escape(first)}\b(?! {re.escape(last)})", full, text)
    return text


# salient topics: (label, pattern)
def topics_of(text: str) -> list[str]:
    low = text.lower()
    out = []
    if PARTY.search(low):
        out.append("party")
    if ELECTION.search(low) or "campaign" in low:
        out.append("election")
    return out


def topic_label(topic: str, texts: list[str]) -> str:
    joined = " ".join(texts).lower()
    if topic == "party":
        return "the Valentine's Day party" if "valentine" in joined else "the party"
    if topic == "election":
        return "the upcoming election for mayor" if "mayor" in joined else "the upcoming election"
    return topic


def top_subjects(statements: list[str], persona: str) -> tuple[Counter, Counter]:
    """How many statements mention each person (not the persona) and each topic."""
    persons: Counter = Counter()
    topics: Counter = Counter()
    for s in statements:
        for p in people(s):
            if p != persona:
                persons[p] += 1
        for t in topics_of(s):
            topics[t] += 1
    return persons, topics


# --- sentences ---------------------------------------------------------------------------------

def sentence(text: str) -> str:
    """A full sentence: capitalised, ending with a full stop (unless it already ends)."""
    text = text.strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def unsentence(text: str) -> str:
    """The reverse of `sentence`: one final full stop dropped, so a quoted memory comes back as
    it was stored."""
    text = text.strip()
    return text[:-1].rstrip() if text.endswith(".") else text


def norm(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9']+", text.lower()))


def clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rsplit(" ", 1)[0] + "…"


_VERB_SPECIAL = {"is": "am", "has": "have", "does": "do", "goes": "go", "was": "was"}
_NOT_VERBS = {"its", "this", "his", "hers", "always", "sometimes", "perhaps", "as", "was", "thus", "less",
              "unless", "across", "miss", "business", "us", "plus", "yes", "towards", "besides"}


_ADVERBS = {"often", "sometimes", "always", "usually", "still", "never", "also", "really", "rarely", "mostly"}
_VERBS = {"enjoys", "likes", "loves", "supports", "works", "spends", "cares", "wants", "hopes", "thinks", "believes",
          "knows", "lives", "runs", "writes", "reads", "goes", "gets", "keeps", "takes", "makes", "finds", "plays",
          "watches", "studies", "teaches", "helps", "grows", "buys", "chats", "talks", "is", "has", "streams",
          "warms", "worries", "admires", "shares", "performs", "prepares", "practises", "rehearses", "serves"}


def _verb_base(word: str) -> str:
    if word in _VERB_SPECIAL:
        return _VERB_SPECIAL[word]
    if word in _NOT_VERBS or not word.isalpha() or not word.islower():
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 2:
        return word[:-1]
    return word


def first_person(text: str, name: str) -> str:
    """A memory about the agent, in the agent's own words: "Isabella Rodriguez runs Hobbs Cafe"
    -> "I run Hobbs Cafe". Possessives are turned only before anyone else is named, so "her"
    in "... a friend of Maria Lopez, who is one of her customers" is left alone."""
    t = text.strip()
    if t.lower().startswith("thought:"):
        t = t.split(":", 1)[1].strip()
        t = re.sub(r"\byou are\b", "I am", t, flags=re.I)
        t = re.sub(r"\byour\b", "my", t, flags=re.I)
        t = re.sub(r"\byourself\b", "myself", t, flags=re.I)
        t = re.sub(r"\byou\b", "I", t, flags=re.I)
        return sentence(t)
    first = name.split()[0]
    m = re.match(rf"^{re.escape(name)} and ({_NAME.pattern}) (\w+)\b(.*)$", t)
    if m:
        other, verb, rest = m.group(1), m.group(4), m.group(5)
        return sentence(f"{other} and I {verb}{rest}")
    subject = None
    for who in (name, first):
        if t.startswith(who + "'s "):
            t, subject = "My " + t[len(who) + 3:], "my"
            break
        if t.startswith(who + " "):
            rest = t[len(who) + 1:]
            verb, _, tail = rest.partition(" ")
            if verb in _ADVERBS:  # "often spends" -> "often spend"
                verb2, _, tail = tail.partition(" ")
                verb = f"{verb} {_verb_base(verb2)}"
            else:
                verb = _verb_base(verb)
            t, subject = f"I {verb} {tail}".strip(), "I"
            break
    if subject:
        # the span before anyone else is named still speaks of the agent
        others = [t.find(x) for x in people(t) if x != name and t.find(x) > 0]
        cut = min(others) if others else len(t)
        head, tail = t[:cut], t[cut:]
        head = re.sub(r"\b(his|her|their)\b", "my", head)
        head = re.sub(r"\b(himself|herself|themselves)\b", "myself", head)
        if subject == "I":
            head = re.sub(r"\band ([a-z]+)\b", lambda mm: "and " + _verb_base(mm.group(1)), head)
        t = head + tail
        if subject == "I":  # "... Maria Lopez from the dorm and enjoys talking with her"
            t = re.sub(r"\band (\w+)\b", lambda mm: "and " + (_verb_base(mm.group(1)) if mm.group(1) in _VERBS
                                                            else mm.group(1)), t)
    t = t.replace(f"{name}'s", "my").replace(name, "me")
    return sentence(t)


_PLACE_NAME = re.compile(r"\b(?:at|runs|owns|in|manages) ((?:The )?[A-Z][\w']*(?: (?:and |of )?[A-Z][\w']*)*)")


def places_in(text: str) -> list[str]:
    """Place names a description mentions ("Hobbs Cafe", "The Willows Market and Pharmacy")."""
    found = [m.group(1) for m in _PLACE_NAME.finditer(text)]
    return list(dict.fromkeys(f for f in found if f not in people(f) and f.split()[0] not in MONTHS
                              and f not in ("Smallville",)))


def routine_of(name: str, description: str, home: str) -> Routine:
    """The persona's routine when the task gives no list of known places: the places its own
    description names stand in for them."""
    return read_routine(name, description, home, [home, *places_in(description)])
