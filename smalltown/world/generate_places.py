"""What a generated town holds: homes, workplaces and haunts as buildings (rooms and objects),
and the jobs done at each, with the steps of a working day that name the objects they use."""

from __future__ import annotations

from dataclasses import dataclass

from smalltown.world.generate_map import Building, Room

# kind -> (how its name ends, [(arena, [objects])], outdoor); a bar is named on its own
PLACES: dict[str, tuple[str, list[tuple[str, list[str]]], bool]] = {
    "bakery": ("Bakery", [("shop", ["bread counter", "bread shelves", "till"]),
                          ("bakehouse", ["oven", "mixing table", "flour bin", "bakehouse sink"])], False),
    "store": ("General Store", [("shop floor", ["shop counter", "grocery shelves", "fruit stand",
                                                "stockroom shelves"])], False),
    "school": ("School", [("classroom", ["blackboard", "teaching desk", "pupil desks", "bookshelf"]),
                          ("staff room", ["staff table", "kettle", "photocopier"])], False),
    "college": ("College", [("lecture hall", ["lectern", "lecture seats", "whiteboard"]),
                            ("study room", ["study desks", "bookshelves", "computer"])], False),
    "cafe": ("Cafe", [("cafe", ["cafe counter", "coffee machine", "cafe table", "window table", "sofa"]),
                      ("cafe kitchen", ["cafe stove", "cafe refrigerator", "cafe sink"])], False),
    "farm": ("Farm", [("farmyard", ["vegetable beds", "orchard", "hay bales", "feed trough", "tool shed",
                                    "water pump"])], True),
    "clinic": ("Clinic", [("waiting room", ["reception desk", "waiting chairs"]),
                          ("surgery", ["examination table", "consulting desk", "medicine cabinet"])], False),
    "workshop": ("Workshop", [("workshop", ["workbench", "lathe", "tool wall", "timber rack"])], False),
    "park": ("park", [("green", ["park bench", "bench by the pond", "flower garden", "fountain",
                                 "picnic table"])], True),
    "library": ("Library", [("reading room", ["bookshelves", "reading table", "armchair", "front desk"])], False),
    "bar": ("", [("bar room", ["bar counter", "beer taps", "corner table", "dartboard", "fireplace"])], False),
}
BAR_FIRST = ("Red", "Golden", "Crooked", "Sleeping", "Laughing", "Old", "Silver", "Jolly")
BAR_LAST = ("Fox", "Heron", "Anchor", "Lantern", "Badger", "Owl", "Plough", "Kettle")
HAUNTS = ("park", "library", "bar")
# places with opening hours (drawn round the routines of those who work or call there, so a
# usual day is never shut out: only a plan that strays finds one closed), and objects one person
# uses at a time
SHOPS = ("bakery", "store", "cafe", "clinic", "workshop")
CAPACITY = {"examination table": 1, "lathe": 1, "till": 1}
# the goal generation: the community's goal and its needs, from these
COMMUNITY_GOALS = ("make {town} a good place to live for everyone", "keep {town} busy and friendly",
                   "help every neighbour in {town} through the year", "bring the people of {town} together")
NEEDS = ("food", "company", "tools", "safety", "health", "learning", "shelter", "fun", "work", "news")


@dataclass(frozen=True)
class Job:
    """A job at a kind of place: its title, its working hours and the day's work."""

    title: str
    place: str  # a kind of PLACES, or "" for work at home
    start: int  # minutes after midnight
    hours: int
    activity: str
    steps: tuple[str, ...]


JOBS = {j.title: j for j in (
    Job("baker", "bakery", 5 * 60, 8, "bake the day's bread", (
        "light the oven", "knead dough at the mixing table", "bake loaves in the oven",
        "stack the loaves on the bread shelves", "serve customers at the bread counter",
        "take payments at the till", "wash the trays at the bakehouse sink")),
    Job("shopkeeper", "store", 8 * 60, 9, "mind the general store", (
        "open up behind the shop counter", "restock the grocery shelves", "sort the fruit stand",
        "serve customers at the shop counter", "count stock on the stockroom shelves")),
    Job("shop clerk", "store", 9 * 60, 8, "work at the general store", (
        "restock the grocery shelves", "serve customers at the shop counter",
        "tidy the fruit stand", "fetch boxes from the stockroom shelves")),
    Job("teacher", "school", 8 * 60, 8, "teach at the school", (
        "write the lesson on the blackboard", "teach a class from the teaching desk",
        "help pupils at the pupil desks", "mark homework at the staff table", "make tea with the kettle")),
    Job("lecturer", "college", 9 * 60, 8, "lecture at the college", (
        "prepare notes at the lectern", "give a lecture at the whiteboard",
        "answer questions in the lecture seats", "read papers at the study desks")),
    Job("cafe owner", "cafe", 7 * 60, 9, "run the cafe", (
        "start the coffee machine", "serve customers at the cafe counter", "bake muffins at the cafe stove",
        "wipe the cafe table", "chat with regulars at the window table")),
    Job("barista", "cafe", 8 * 60, 8, "make coffee at the cafe", (
        "take orders at the cafe counter", "make lattes at the coffee machine",
        "carry drinks to the window table", "wash cups at the cafe sink")),
    Job("farmer", "farm", 6 * 60, 9, "work on the farm", (
        "feed the animals at the feed trough", "weed the vegetable beds", "pick apples in the orchard",
        "stack the hay bales", "mend tools in the tool shed", "fill buckets at the water pump")),
    Job("doctor", "clinic", 8 * 60, 9, "see patients at the clinic", (
        "read the notes at the consulting desk", "examine a patient on the examination table",
        "write a prescription at the consulting desk", "restock the medicine cabinet")),
    Job("nurse", "clinic", 8 * 60, 8, "care for patients at the clinic", (
        "greet patients at the reception desk", "call the next patient from the waiting chairs",
        "dress a wound on the examination table", "sort the medicine cabinet")),
    Job("carpenter", "workshop", 8 * 60, 9, "build furniture in the workshop", (
        "choose boards from the timber rack", "saw planks at the workbench", "turn a leg on the lathe",
        "hang the tools on the tool wall", "sand a chair at the workbench")),
    Job("librarian", "library", 9 * 60, 8, "look after the library", (
        "open up at the front desk", "shelve returned books on the bookshelves",
        "help a reader at the reading table", "check out books at the front desk")),
    Job("bartender", "bar", 16 * 60, 9, "tend the bar", (
        "polish glasses at the bar counter", "pull pints at the beer taps", "light the fireplace",
        "serve drinks at the corner table", "chat with regulars at the bar counter")),
    Job("pupil", "school", 8 * 60 + 30, 7, "attend lessons at the school", (
        "copy notes from the blackboard", "work on sums at the pupil desks",
        "read aloud from a book from the bookshelf", "answer a question at the pupil desks")),
    Job("student", "college", 9 * 60, 7, "study at the college", (
        "take notes in the lecture seats", "listen to a lecture at the whiteboard",
        "write an essay at the study desks", "look up sources on the computer")),
    Job("writer", "", 9 * 60, 7, "write at home", (
        "sit down at the kitchen table", "draft a chapter at the kitchen table",
        "read over the draft", "answer letters at the kitchen table")),
)}
OWNERS = {"bakery": "baker", "store": "shopkeeper", "cafe": "cafe owner", "bar": "bartender"}
# the jobs a town fills first, then the ones it fills in turn with whoever is left
FIRST_JOBS = ("cafe owner", "baker", "shopkeeper", "teacher", "farmer", "doctor", "librarian",
              "bartender", "barista", "nurse", "carpenter", "shop clerk")
MORE_JOBS = ("farmer", "shop clerk", "teacher", "barista", "carpenter", "nurse", "writer", "baker",
             "bartender", "farmer")

HOME = [("bedroom", []), ("kitchen", ["stove", "refrigerator", "kitchen table", "kitchen sink"]),
        ("bathroom", ["toilet", "shower", "bathroom sink"])]


def place_name(kind: str, town: str, n: int) -> str:
    """The sector a kind of place has in a town; a bar gets a name of its own (n picks it)."""
    if kind == "bar":
        return f"The {BAR_FIRST[n % len(BAR_FIRST)]} {BAR_LAST[(n // len(BAR_FIRST) + n) % len(BAR_LAST)]}"
    return f"{town} {PLACES[kind][0].title()}"


def place(kind: str, sector: str) -> Building:
    _, rooms, outdoor = PLACES[kind]
    return Building(sector, [Room(a, list(objs), {o: "full" for o in objs if "refrigerator" in o})
                             for a, objs in rooms], outdoor)


def home(sector: str, first_names: list[str], farm: bool = False) -> Building:
    """A household's home: a bed each in one bedroom, a kitchen and a bathroom; a farmhouse that
    lives off its land (the sid layout) also its farmyard, with a farm's objects."""
    rooms = [Room(a, [f"{n}'s bed" for n in first_names] if a == "bedroom" else list(objs),
                  {"refrigerator": "full"} if a == "kitchen" else {}) for a, objs in HOME]
    if farm:
        rooms += [Room(a, list(objs)) for a, objs in PLACES["farm"][1]]
    return Building(sector, rooms)
