"""Deciding each due agent's next action: the model-heavy part of a tick, on a pool of workers
when the backend answers several questions at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait
from datetime import datetime
from typing import Callable

from smalltown.llm.backend import Backend, Stopped, capabilities
from smalltown.mind.state import Action
from smalltown.sim.agent import Agent
from smalltown.world.model import World


class Thinking:
    def __init__(self, world: World, backend: Backend, stopping: Callable[[], bool]):
        self.world = world
        self.backend = backend
        self.stopping = stopping
        self._pool: ThreadPoolExecutor | None = None

    def next_actions(self, agents: list[Agent], now: datetime) -> list[tuple[Action, bool]]:
        """Agents think at once, up to the backend's `max_concurrency`; their results come back in
        agent order, so the run is the same whatever order they finish in."""
        def think(agent: Agent) -> tuple[Action, bool]:
            here = self.world.arena_at(agent.tile)
            return agent.mind.next_action(now, here.address if here else "")

        workers = min(len(agents), capabilities(self.backend).max_concurrency)
        if workers <= 1:
            return [think(a) for a in agents]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="mind")
        futures = [self._pool.submit(think, a) for a in agents]
        while wait(futures, timeout=0.1).not_done:  # a stop does not wait on a stuck worker
            if self.stopping():
                raise Stopped
        return [f.result() for f in futures]

    def close(self) -> None:
        if self._pool is not None:  # a stopped run does not wait on a worker stuck in a backend
            self._pool.shutdown(wait=not self.stopping(), cancel_futures=True)
