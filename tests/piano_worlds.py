"""Worlds and runs the PIANO-module tests share (issue 16): a world file varied in place (opening
hours, a community goal and needs), and a scripted run with goals on, optionally on a backend that
answers several questions at once after random delays."""

from __future__ import annotations

import random
import sqlite3
import threading
import time
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from helpers import ROOT, stored_state
from smalltown.llm.backend import capabilities
from smalltown.scripted import ScriptedBackend
from smalltown.sim.open import create, resume
from smalltown.world.load import load_world


def variant(tmp_path: Path, world: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = world.read_text().replace('"../maps/', f'"{ROOT / "maps"}/')
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    out = tmp_path / f"{name}.toml"
    out.write_text(text)
    return out


CAFE_HOURS = ('[sectors."Hobbs Cafe".arenas."cafe"]', '[sectors."Hobbs Cafe"]\nhours = "08:00-20:00"\n\n'
              '[sectors."Hobbs Cafe".arenas."cafe"]')


NEEDS = '["food", "company", "tools", "safety"]'
GOAL_ON = ["goal_generation=true", "slow_lag_ticks=6"]


def world_with_goal(tmp_path: Path, source: Path, extra: str = "") -> Path:
    """A copy of `source` declaring a community goal and needs (top-level keys, before the tables)."""
    text = source.read_text(encoding="utf-8")
    maps = source.parent.parent / "maps"
    text = text.replace('map = "../maps/', f'map = "{maps}/')
    head, sep, rest = text.partition("\n[")
    head += f'\ncommunity_goal = "make the town a good place to live for everyone"\nneeds = {NEEDS}\n{extra}'
    path = tmp_path / source.name
    path.write_text(head + sep + rest, encoding="utf-8")
    return path


class Busy(ScriptedBackend):
    """The stand-in as a server that answers several questions at once, those whose task name
    starts with `delayed` each after a random delay of up to `most` seconds: answers come back in
    any order, and some only after their tick is due."""

    def __init__(self, seed: int, workers: int, delayed: str = "social_goal", most: float = 0.03):
        super().__init__(seed)
        self.can = replace(capabilities(None), max_concurrency=workers)
        self.delayed, self.most = delayed, most
        self._rng = random.Random()
        self._lock = threading.Lock()
        self.out = self.most_out = 0  # delayed questions being answered at once

    def answer(self, task, prompt=""):
        if task.name.startswith(self.delayed):
            with self._lock:
                self.out += 1
                self.most_out = max(self.most_out, self.out)
            time.sleep(self._rng.random() * self.most)
            with self._lock:
                self.out -= 1
        return super().answer(task, prompt)


def run(path: Path, world_path: Path, hours: float, workers: int = 1, sets: list[str] = GOAL_ON,
        busy: list | None = None):
    world = load_world(world_path)
    backend = Busy(world.seed, workers) if workers > 1 else ScriptedBackend(world.seed)
    if busy is not None:
        busy.append(backend)
    sim = create(world, path, backend, sets=sets)
    try:
        sim.run_until(sim.now + timedelta(hours=hours))
        return sim.save.digest()
    finally:
        sim.close()


def stop_with_a_question_out(path: Path, world_path: Path, sets: list[str],
                             module: str | None = None) -> tuple[int, list[dict]]:
    """A run created at `path` and closed at its first tick with a slow question (of `module`, or
    any) out: that tick, and the slow questions the save then holds."""
    world = load_world(world_path)
    sim = create(world, path, ScriptedBackend(world.seed), sets=sets)
    try:
        while not any(module in (None, q.module) for a in sim.agents for q in a.mind.state.slow):
            sim.step()
        out_at = sim.tick
    finally:
        sim.close()
    with sqlite3.connect(path) as conn:
        return out_at, [q for a in world.agents for q in stored_state(conn, a.name).get("slow", [])]


def resumed_digest(path: Path, world_path: Path, hours: float) -> str:
    """The save at `path` continued to `hours` after its world's start: its digest."""
    world = load_world(world_path)
    sim = resume(path, ScriptedBackend(world.seed))
    try:
        sim.run_until(world.start + timedelta(hours=hours))
        return sim.save.digest()
    finally:
        sim.close()


def scripted_digest(world, path: Path, hours: float, sets: list[str]) -> str:
    """A loaded world (or its file) run `hours` with the stand-in under `sets`: its save's digest."""
    world = load_world(world) if isinstance(world, Path) else world
    sim = create(world, path, ScriptedBackend(world.seed), sets=sets)
    try:
        sim.run_until(sim.now + timedelta(hours=hours))
        return sim.save.digest()
    finally:
        sim.close()
