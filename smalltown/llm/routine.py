"""A persona's routine read from its description: workplace, occupation, the shape of its day.

Used by the scripted backend, which answers planning tasks without a model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# a phrase that names a place and one of these words says where the agent works
WORK_CUES = re.compile(
    r"\b(works?|working|runs|owns|student|professor|teaches|teacher|shopkeeper|bartender|"
    r"barista|studies|colleagues?|employed|manages|cashier|clerk|job)\b")
_OCCUPATION = re.compile(r"\bis (?:an? |the )?(.+?)(?= who\b| at\b| and\b| in\b| with\b|,|;|$)")
_PROJECT = re.compile(r"\b(?:working on|works on|writing|is composing|is preparing) (.+?)(?= at\b| for\b| in\b|,|;|$)")


def phrases(description: str) -> list[str]:
    return [p.strip() for p in description.split(";") if p.strip()]


@dataclass
class Routine:
    role: str  # student, teacher, bartender, owner, worker, homeworker, retired
    workplace: str  # a sector (the home for those who work at home)
    occupation: str
    project: str

    def work(self, home: str, afternoon: bool) -> str:
        w = self.workplace
        if self.role == "student":
            return f"study in the library at {w}" if afternoon else f"attend classes at {w}"
        if self.role == "teacher":
            return f"prepare lectures in the library at {w}" if afternoon else f"teach a class at {w}"
        if self.role == "owner":
            return f"serve customers at {w}" if afternoon else f"open {w} and serve customers"
        if self.role == "bartender":
            return f"serve drinks behind the bar at {w}"
        if self.role == "worker":
            return f"work at the counter at {w}" if afternoon else f"work at {w}"
        if self.role == "retired":
            return f"work on {self.project} at home" if self.project else "tend to the house and garden at home"
        if self.project:
            return f"work on {self.project} at home"
        return f"work as a {self.occupation} at home" if self.occupation else "work at home"


def read_routine(name: str, description: str, home: str, places: list[str]) -> Routine:
    parts = phrases(description)
    text = " ".join(parts).lower()
    m = _OCCUPATION.search(parts[0]) if parts else None
    occupation = m.group(1).strip() if m else ""
    pm = next((_PROJECT.search(p) for p in parts if _PROJECT.search(p)), None)
    project = pm.group(1).strip() if pm else ""
    if project and not project.lower().startswith(("his ", "her ", "their ", "a ", "an ", "the ")):
        project = "the " + project
    workplace = home
    for p in parts:
        low = p.lower()
        named = sorted((s for s in places if s != home and s.lower() in low), key=len, reverse=True)
        if named and WORK_CUES.search(low):
            workplace = named[0]
            occupation = occupation or "worker"
            low_occ = low
            break
    else:
        low_occ = text
    if workplace == home:
        role = "retired" if "retired" in text else "homeworker"
        if role == "retired" and "running for" in text:
            project = "the campaign for mayor"
    elif "student" in low_occ:
        role = "student"
    elif any(w in low_occ for w in ("professor", "teacher", "teaches", "lecturer")):
        role = "teacher"
    elif "bartender" in low_occ or "pub" in workplace.lower():
        role = "bartender"
    elif any(w in low_occ for w in (" runs ", " owns ", "owner", "manages")):
        role = "owner"
    else:
        role = "worker"
    return Routine(role, workplace, occupation, project)


_LEISURE = (
    ("park", "take a walk in {s}"),
    ("cafe", "have a coffee and chat at {s}"),
    ("pub", "have a drink with friends at {s}"),
    ("market", "buy groceries at {s}"),
    ("store", "browse the shelves at {s}"),
    ("college", "read a book in the library at {s}"),
)


def leisure(place: str) -> str | None:
    low = place.lower()
    for key, template in _LEISURE:
        if key in low:
            return template.format(s=place)
    return None
