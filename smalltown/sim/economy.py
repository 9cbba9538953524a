"""The economy: who holds what, every transfer a ledger row, and the ops agents do.

The ledger is the truth: holdings are the world file's starting inventories plus the ledger's rows,
kept in memory (state/ledger.py's `Ledger`, which this builds on) and rebuilt from the save when a
run is opened, resumed or forked (`load`).
Every transfer is checked when it is applied: nothing is made from nothing (only a gather or a
craft's output has no giver), no holding goes below zero, an infeasible op is refused with a
"refused" event saying why, never clamped.

The API the rest of the engine (and the civics of a later round: tax seasons) uses:
    Economy.chest                        the town chest's holder name ("chest")
    Economy.holdings(holder)             {item: count} of an agent or the chest (counts > 0)
    Economy.transfer(changes, kind, giver, taker, item, qty, note="") -> int
                                         the one place that moves items: a ledger row in the tick's
                                         commit (its number returned); raises Refused when infeasible
    Economy.options(agent, agents, sector, town) -> (ops, inventory)
                                         the ops feasible for `agent` in `sector` now (typed, for the
                                         decompose question) and what it holds
    Economy.settle(agents, by_name, now, changes)
                                         apply, in agent order, the op of each action that has ended
                                         (called from the tick, on the engine's thread); each
                                         outcome handed to the agent's action awareness
Ledger kinds: gather, craft (the output), craft_in (the inputs used up), give, trade, deposit, tax.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable, Protocol

from pydantic import ValidationError

from smalltown.llm.tasks import Holding, Op
from smalltown.mind import awareness
from smalltown.state.agent import Action
from smalltown.sim.agent import Agent
from smalltown.sim.changes import Changes
from smalltown.store.records import Transfer
from smalltown.state.ledger import Ledger, Refused
from smalltown.world.economy import CHEST
from smalltown.world.model import pretty

MAX_OPTIONS = 20  # ops listed in one question
MAX_PARTNERS = 3  # people a give or trade is offered with


class Town(Protocol):
    """The others as an agent's decomposition reads them (sim/public.py's Public)."""

    def sector(self, name: str) -> str | None: ...
    def holdings(self, name: str) -> dict[str, int]: ...


class Economy(Ledger):
    # --- the one transfer ------------------------------------------------------------------------

    def transfer(self, changes: Changes | None, kind: str, giver: str, taker: str, item: str, qty: int,
                 note: str = "") -> int:
        """Move `qty` of `item` from `giver` to `taker` as a ledger row of `changes`' tick (None:
        not written). Refused (nothing moved) when it is not feasible."""
        n = self.move(kind, giver, taker, item, qty)
        if changes is not None:
            changes.ledger.append(Transfer(changes.tick, changes.stamp, kind, giver, taker, item, qty, note))
            changes.ledger_at.append((changes.phase, changes.actor))
        return n

    # --- what an agent may do -------------------------------------------------------------------

    def market(self, agent: Agent, agents: list[Agent], town: Town | None = None
               ) -> Callable[[str], tuple[list[Op], list[Holding]]]:
        """The view of the town an agent's mind asks its decomposition with (Mind.market)."""
        return lambda sector: self.options(agent, agents, sector, town)

    def options(self, agent: Agent, agents: list[Agent], sector: str, town: Town | None = None
                ) -> tuple[list[Op], list[Holding]]:
        """`town`: where the others are and what they hold, as the town knew it at the end of the last
        tick (sim/public.py): the sector asked about may be another group's (sim/groups.py), which
        this tick may already have run, or not yet. None: as they are now."""
        held = self.holdings(agent.name)
        where = town.sector if town is not None else (lambda name: self._sector(by[name]))
        theirs_of = town.holdings if town is not None else self.holdings
        by = {a.name: a for a in agents} if town is None else {}
        ops: list[Op] = []
        for s in self.spec.sources:
            if s.arena.split(":")[0] == sector and not any(o.item == s.item for o in ops):
                ops.append(Op(op="gather", item=s.item, qty=s.qty))
        for r in self.spec.recipes:
            if r.place.split(":")[0] == sector and all(held.get(i, 0) >= n for i, n in r.inputs):
                ops.append(Op(op="craft", item=r.output, qty=r.qty, minutes=r.minutes))
        if self.spec.chest.split(":")[0] == sector:
            ops += [Op(op="deposit", item=i, qty=n) for i, n in held.items()]
        partners = [a for a in agents if a is not agent and where(a.name) == sector][:MAX_PARTNERS]
        for p in partners:
            ops += [Op(op="give", item=i, qty=1, other=p.name) for i in held]
        for p in partners:
            theirs = theirs_of(p.name)
            ops += [Op(op="trade", item=i, qty=1, other=p.name, get=j, get_qty=1) for i in held for j in theirs if j != i]
        return ops[:MAX_OPTIONS], [Holding(item=i, qty=n) for i, n in held.items()]

    def _sector(self, agent: Agent) -> str | None:
        arena = self.world.arena_at(agent.tile)
        return arena.sector if arena else None

    # --- applying ops ---------------------------------------------------------------------------

    def settle(self, agents: list[Agent], by_name: dict[str, Agent], now: datetime, changes: Changes) -> None:
        """The op of each action that has ended, applied in agent order (and cleared: once)."""
        for agent in agents:
            action = agent.mind.state.action
            if action is None or not action.op or now < action.end:
                continue
            changes.actor = agent.name  # (the ledger's canonical order: Changes.ledger_rows)
            op, action.op = action.op, None
            changes.changed.add(agent.name)
            try:
                tried = Op(**op)
            except ValidationError:
                changes.emit(agent.name, "refused", f"{agent.name}'s op is refused: it is not an op", op=op)
                continue
            try:
                self._apply(agent, action, tried, by_name, changes)
            except Refused as e:
                changes.emit(agent.name, "refused", f"{agent.name} cannot {tried.label}: {e}", op=tried.label,
                             why=str(e), item=op.get("item"), qty=op.get("qty"))
                awareness.notice_op(agent.mind, tried, False, str(e), now)  # (action awareness: when on)
            else:
                awareness.notice_op(agent.mind, tried, True, "", now)

    def _apply(self, agent: Agent, action: Action, op: Op, by_name: dict[str, Agent], changes: Changes) -> None:
        name, here = agent.name, self.world.arena_at(agent.tile)
        where = here.address if here else None
        if op.op == "gather":
            src = next((s for s in self.spec.sources if s.item == op.item and s.arena == where), None)
            if src is None:
                raise Refused(f"no {op.item} to gather at {pretty(where) if where else 'this spot'}")
            self.transfer(changes, "gather", "", name, op.item, src.qty, note=where)
            changes.emit(name, "gather", f"{name} gathers {src.qty} {op.item} at {pretty(where)}",
                         item=op.item, qty=src.qty, place=where)
        elif op.op == "craft":
            self._craft(name, action, op, where, changes)
        elif op.op == "deposit":
            if where != self.spec.chest_arena:
                raise Refused(f"the town chest is at {pretty(self.spec.chest_arena)}")
            self.transfer(changes, "deposit", name, CHEST, op.item, op.qty)
            changes.emit(name, "deposit", f"{name} deposits {op.qty} {op.item} in the town chest",
                         item=op.item, qty=op.qty, to=CHEST)
        else:  # give, trade: with someone in the same arena now
            other = by_name.get(op.other)
            if other is None or other is agent:
                raise Refused(f"{op.other!r} is not someone else in the town")
            there = self.world.arena_at(other.tile)
            if where is None or there is None or there.address != where:
                raise Refused(f"{op.other} is not here")
            if op.op == "give":
                self.transfer(changes, "give", name, op.other, op.item, op.qty)
                changes.emit(name, "give", f"{name} gives {op.qty} {op.item} to {op.other}",
                             item=op.item, qty=op.qty, to=op.other)
            else:
                self._trade(name, op, changes)

    def _craft(self, name: str, action: Action, op: Op, where: str | None, changes: Changes) -> None:
        recipe = next((r for r in self.spec.recipes if r.output == op.item), None)
        if recipe is None or not recipe.at(where):
            raise Refused(f"{op.item} is not made {('at ' + pretty(where)) if where else 'here'}")
        minutes = int((action.end - action.start).total_seconds() // 60)
        if minutes < recipe.minutes:
            raise Refused(f"{op.item} takes {recipe.minutes} minutes, the action {minutes}")
        held = self._held[name]
        short = [f"{n} {i} (holds {held.get(i, 0)})" for i, n in recipe.inputs if held.get(i, 0) < n]
        if short:
            raise Refused("needs " + ", ".join(short))
        for i, n in recipe.inputs:
            self.transfer(changes, "craft_in", name, "", i, n, note=recipe.output)
        self.transfer(changes, "craft", "", name, recipe.output, recipe.qty, note=where or "")
        used = ", ".join(f"{n} {i}" for i, n in recipe.inputs)
        changes.emit(name, "craft", f"{name} makes {recipe.qty} {recipe.output} from {used}",
                     item=recipe.output, qty=recipe.qty, inputs=dict(recipe.inputs))

    def _trade(self, name: str, op: Op, changes: Changes) -> None:
        if op.get == op.item or op.get_qty < 1:
            raise Refused("a trade swaps one item for another")
        for who, item, n in ((name, op.item, op.qty), (op.other, op.get, op.get_qty)):
            why = self._problem("trade", who, name if who == op.other else op.other, item, n)
            if why:
                raise Refused(why)
        self.transfer(changes, "trade", name, op.other, op.item, op.qty, note=f"for {op.get_qty} {op.get}")
        self.transfer(changes, "trade", op.other, name, op.get, op.get_qty, note=f"for {op.qty} {op.item}")
        changes.emit(name, "trade", f"{name} trades {op.qty} {op.item} with {op.other} for {op.get_qty} {op.get}",
                     item=op.item, qty=op.qty, to=op.other, get=op.get, get_qty=op.get_qty)
