"""`smalltown eval progression SAVE [SAVE...]`: the distinct item kinds each agent came to hold
over game time (eval/progression.py), saves side by side (with and without action awareness).
Read only: a save is opened read-only and never changed."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from smalltown.eval import EvalError


def progression(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.cli.eval_civics import _measured, _report
    from smalltown.eval.progression import measure_progression, read_progression
    from smalltown.eval.progression_report import headline, label, progression_doc
    from smalltown.store.errors import SQLiteError

    for save in args.saves:
        if not Path(save).is_file():
            raise EvalError(f"{save}: no such save")

    def measure(reader, save: str) -> dict:
        try:
            return measure_progression(read_progression(reader, save))
        except (SQLiteError, TypeError, ValueError) as e:
            raise EvalError(f"{save}: not a save with a ledger to read ({getattr(e, 'said', e)})") from None

    return _report(args, cli, _measured(args.saves, measure), "item progression", progression_doc, headline, label)
