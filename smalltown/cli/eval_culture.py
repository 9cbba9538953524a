"""`smalltown eval culture SAVE [SAVE...]`: memes across towns and a doctrine's spread
(eval/culture.py), from each save alone; several saves side by side. Read only: a save is opened
read-only and never changed."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import ModuleType

from smalltown.eval import EvalError


def culture(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.cli.eval_civics import _measured, _report
    from smalltown.eval.culture import measure_culture, read_culture
    from smalltown.eval.culture_report import culture_doc, headline, label

    for save in args.saves:
        if not Path(save).is_file():
            raise EvalError(f"{save}: no such save")
    results = _measured(args.saves, lambda reader, save: measure_culture(read_culture(reader, save)))
    return _report(args, cli, results, "culture", culture_doc, headline, label)
