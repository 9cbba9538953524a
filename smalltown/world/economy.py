"""A world's economy, as its file declares it in `[economy]`, checked with file:line.

    [economy]
    items = ["wheat", "flour", "bread"]
    chest = "town hall:office:chest"            # the town chest: an object that must exist
    chest_inventory = {bread = 1}               # what the chest starts with (optional)
    inventory = {"Ann Lee" = {bread = 2}}       # per agent (or `inventory = {...}` on [[agents]])
    [[economy.sources]]                         # where an item is gathered, how many per gather
    item = "wheat"
    at = "farm:field"
    qty = 2
    [[economy.recipes]]                         # inputs in, output out, at a place, in minutes
    output = "flour"
    inputs = {wheat = 2}
    at = "mill"                                 # a sector, or "sector:arena"
    minutes = 10

Refused: unknown items, places, objects or agents; quantities of 0 or less, or over MAX_QTY; a
recipe whose output is among its inputs, or a cycle of recipes (A needs B needs A); an item, a
source or a recipe's output declared twice. Nothing here moves an item: sim/economy.py does.
"""

from __future__ import annotations

from dataclasses import dataclass

from smalltown.world.errors import Problem
from smalltown.world.names import places, suggestion
from smalltown.world.model import Persona, Object, Sector
from smalltown.world.toml_lines import TomlLines

MAX_QTY = 1000  # per source, recipe or input
MAX_START = 1_000_000  # a starting inventory's count of one item
RECIPE_MAX_MINUTES = 15  # a recipe is done in one action (actions are 5-15 minutes)
CHEST = "chest"  # the holder name of the town chest (no agent may be named so in an economy world)


@dataclass(frozen=True)
class Source:
    item: str
    arena: str  # "sector:arena"
    qty: int  # per gather action


@dataclass(frozen=True)
class Recipe:
    output: str
    qty: int
    inputs: tuple[tuple[str, int], ...]  # (item, qty), in the file's order
    place: str  # a sector, or "sector:arena"
    minutes: int

    def at(self, arena: str | None) -> bool:
        """Whether an agent in `arena` ("sector:arena") is at this recipe's place."""
        return arena is not None and (arena == self.place or arena.split(":")[0] == self.place)


@dataclass(frozen=True)
class EconomySpec:
    items: tuple[str, ...]
    sources: tuple[Source, ...]
    recipes: tuple[Recipe, ...]
    chest: str  # the chest object's address
    start: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # (holder, ((item, qty), ...)): agents, CHEST

    @property
    def chest_arena(self) -> str:
        return self.chest.rsplit(":", 1)[0]

    def starting(self) -> dict[str, dict[str, int]]:
        """Holder -> item -> count at the start (only what is declared)."""
        return {holder: dict(items) for holder, items in self.start}


def _place(text: str) -> str:
    return ":".join(p.strip() for p in text.split(":"))


def economy(source: str, doc, lines: TomlLines, agents: list[Persona], sectors: dict[str, Sector],
            objects: dict[str, Object], problems: list[Problem]) -> EconomySpec | None:
    """The file's [economy] checked against its agents and places (None when it has none)."""
    e = doc.economy
    if e is None:
        for k, a in enumerate(doc.agents):
            if a.inventory:
                problems.append(Problem(source, lines.line_of(("agents", k, "inventory")),
                                        f"agent {a.name!r} has an inventory, but the world has no [economy]"))
        return None
    wline = lines.line_of
    items: list[str] = []
    for k, item in enumerate(e.items):
        if item in items:
            problems.append(Problem(source, wline(("economy", "items")), f"item {item!r} is listed twice"))
        items.append(item)
    known = set(items)

    def qty(n: int, where: tuple, what: str, high: int = MAX_QTY) -> None:
        if not 0 < n <= high:
            problems.append(Problem(source, wline(where), f"{what}: quantity {n} must be 1 to {high:,}"))

    def item_ok(item: str, where: tuple, what: str) -> None:
        if item not in known:
            problems.append(Problem(source, wline(where), f"{what}: unknown item {item!r} (not in economy.items)"))

    def arena_ok(addr: str) -> bool:
        sector, _, arena = addr.partition(":")
        return sector in sectors and arena in sectors[sector].arenas

    sources: list[Source] = []
    for k, s in enumerate(e.sources):
        where = ("economy", "sources", k)
        item_ok(s.item, where + ("item",), f"source {k + 1}")
        qty(s.qty, where + ("qty",), f"source of {s.item!r}")
        at = _place(s.at)
        if at.count(":") != 1 or not arena_ok(at):
            problems.append(Problem(source, wline(where + ("at",)),
                                    f"source of {s.item!r}: {s.at!r} is not an arena (\"sector:arena\")"))
        if any(o.item == s.item and o.arena == at for o in sources):
            problems.append(Problem(source, wline(where), f"source of {s.item!r} at {at!r} is declared twice"))
        sources.append(Source(s.item, at, s.qty))

    recipes: list[Recipe] = []
    for k, r in enumerate(e.recipes):
        where = ("economy", "recipes", k)
        item_ok(r.output, where + ("output",), f"recipe {k + 1}")
        qty(r.qty, where + ("qty",), f"recipe for {r.output!r}")
        for item, n in r.inputs.items():
            item_ok(item, where + ("inputs",), f"recipe for {r.output!r}")
            qty(n, where + ("inputs",), f"recipe for {r.output!r}, input {item!r}")
        if r.output in r.inputs:
            problems.append(Problem(source, wline(where + ("inputs",)),
                                    f"recipe for {r.output!r}: its output is among its inputs"))
        if not 1 <= r.minutes <= RECIPE_MAX_MINUTES:
            problems.append(Problem(source, wline(where + ("minutes",)), f"recipe for {r.output!r}: minutes "
                                    f"{r.minutes} must be 1 to {RECIPE_MAX_MINUTES} (one action)"))
        at = _place(r.at)
        if not (at in sectors or (at.count(":") == 1 and arena_ok(at))):
            problems.append(Problem(source, wline(where + ("at",)),
                                    f"recipe for {r.output!r}: unknown place {r.at!r} (a sector, or \"sector:arena\")"
                                    + suggestion(at, places(sectors))))
        if any(o.output == r.output for o in recipes):
            problems.append(Problem(source, wline(where + ("output",)),
                                    f"a second recipe for {r.output!r} (one recipe per output)"))
        recipes.append(Recipe(r.output, r.qty, tuple(r.inputs.items()), at, r.minutes))
    cycle = _cycle(recipes)
    if cycle:
        k = next(i for i, r in enumerate(recipes) if r.output == cycle[0])
        problems.append(Problem(source, wline(("economy", "recipes", k)),
                                "recipes make a cycle: " + " needs ".join(cycle)))

    chest = _place(e.chest)
    if chest not in objects:
        problems.append(Problem(source, wline(("economy", "chest")),
                                f"chest {e.chest!r} is not an object (\"sector:arena:object\")"))
    names = {a.name for a in agents}
    if CHEST in names:
        problems.append(Problem(source, wline(("economy",)), f"an agent is named {CHEST!r}, the town chest's name"))
    start: dict[str, dict[str, int]] = {}

    def add(holder: str, inv: dict[str, int], where: tuple) -> None:
        for item, n in inv.items():
            item_ok(item, where, f"inventory of {holder}")
            qty(n, where, f"inventory of {holder}, {item!r}", MAX_START)
            mine = start.setdefault(holder, {})
            if item in mine:
                problems.append(Problem(source, wline(where), f"inventory of {holder}: {item!r} given twice"))
            mine[item] = n

    add(CHEST, e.chest_inventory, ("economy", "chest_inventory"))
    for k, a in enumerate(doc.agents):
        add(a.name, a.inventory, ("agents", k, "inventory"))
    for name, inv in e.inventory.items():
        if name not in names:
            problems.append(Problem(source, wline(("economy", "inventory", name)),
                                    f"inventory of an unknown agent {name!r}"))
            continue
        add(name, inv, ("economy", "inventory", name))
    return EconomySpec(tuple(items), tuple(sources), tuple(recipes), chest,
                       tuple((h, tuple(sorted(inv.items()))) for h, inv in start.items()))


def _cycle(recipes: list[Recipe]) -> list[str]:
    """A cycle of recipes as items [A, B, ..., A] (A needs B needs ... A), or []."""
    needs = {r.output: [i for i, _ in r.inputs if i != r.output] for r in recipes}
    state: dict[str, int] = {}  # 1: on the path, 2: done

    def visit(item: str, path: list[str]) -> list[str]:
        state[item] = 1
        for nxt in needs.get(item, []):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt] if nxt in path else [item, nxt]
            if nxt not in state:
                found = visit(nxt, path + [nxt])
                if found:
                    return found
        state[item] = 2
        return []

    for r in recipes:
        if r.output not in state:
            found = visit(r.output, [r.output])
            if found:
                return found
    return []
