"""`smalltown calls SAVE [--agent A] [--task T] [--since WHEN] [--until WHEN] [--json]`: the model
calls a save logged, with their prompts and answers as text (in the spirit of `llm logs`).

`calls_data` returns the rows (what `--json` prints, oldest first); `calls_lines` lays them out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from smalltown.cli.why import WhenError, call_json, tick_at
from smalltown.shown import json_shown, shown
from smalltown.world.names import agent_named


class UnknownTask(ValueError):
    """A task the save's call log does not name (a usage error)."""


def calls_data(path: str | Path, agent: str | None = None, task: str | None = None, since: str | None = None,
               until: str | None = None, count: int | None = None) -> list[dict]:
    """The calls, oldest first, each with its prompt and answers (NoSuchAgent, UnknownTask, WhenError
    for what names nothing in the save)."""
    from smalltown.sim.history import History

    with History(path) as h:
        reader = h.reader
        name = agent_named(agent, reader.agent_names()) if agent else None
        tasks = reader.call_tasks()
        if task is not None and task not in tasks:
            raise UnknownTask(f"no call of task {task!r} in the save; it has: {', '.join(tasks) or 'none'}")
        lo = tick_at(h, since) if since else None
        hi = tick_at(h, until) if until else None
        rows = reader.calls_in(name, task, lo, hi, count or None)
        return [call_json(reader, c) for c in rows]


def calls_lines(rows: list[dict]) -> list[str]:
    out: list[str] = []
    for c in rows:
        out.append(shown(f"## call {c['id']}: {c['agent']}, {c['task']} at {c['time']} (tick {c['tick']})"))
        out.append(shown(f"{c['backend']}{', ' + c['model'] if c['model'] else ''}; {c['prompt_tokens']} prompt "
                         f"+ {c['completion_tokens']} answer tokens ({c['cached_tokens']} cached), {c['ms']:.0f} ms"
                         f"{'; ' + c['note'] if c['note'] else ''}"))
        out += ["Prompt:", shown(c["prompt"] or "", lines=True), "Answer:", shown(c["answer"] or "", lines=True), ""]
    return out or ["no calls"]


def calls_command(args: argparse.Namespace) -> int:
    try:
        rows = calls_data(args.save, args.agent, args.task, args.since, args.until, args.count)
    except (WhenError, UnknownTask) as e:
        print(f"error: {shown(e)}", file=sys.stderr)
        return 2
    print(json_shown(json.dumps(rows, ensure_ascii=False)) if args.json else "\n".join(calls_lines(rows)))
    return 0
