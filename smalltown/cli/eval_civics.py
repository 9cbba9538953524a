"""`smalltown eval civics SAVE [SAVE...]`: the town's civic measures — tax compliance per
season, before and after the vote, the rate voted, amendments, votes and stances (eval/civics.py);
saves side by side. `--roles`: the roles that emerged instead (eval/roles.py), saves side by side
(with/without social modules x seeds). Read only: a save is opened read-only and never changed."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType

from smalltown.eval import EvalError


def _labels(saves: list[str]) -> list[str]:
    labels = [Path(x).stem for x in saves]
    return labels if len(set(labels)) == len(labels) else [f"{i + 1}" for i in range(len(labels))]


def civics(args: argparse.Namespace, cli: ModuleType) -> int:
    for save in args.saves:
        if not Path(save).is_file():
            raise EvalError(f"{save}: no such save")
    return roles(args, cli) if args.roles else taxes(args, cli)


def taxes(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.eval.civics import measure_civics, read_civics
    from smalltown.eval.civics_report import civics_doc, headline, label

    results = _measured(args.saves, lambda reader, save: measure_civics(read_civics(reader, save)))
    return _report(args, cli, results, "civics", civics_doc, headline, label)


def roles(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.eval.roles import measure_roles, read_roles
    from smalltown.eval.roles_report import headline, label, roles_doc
    from smalltown.store.errors import SQLiteError

    def measure(reader, save: str) -> dict:
        try:
            return measure_roles(read_roles(reader))
        except (SQLiteError, TypeError, ValueError) as e:
            raise EvalError(f"{save}: not a save with roles to read ({getattr(e, 'said', e)})") from None

    return _report(args, cli, _measured(args.saves, measure), "roles", roles_doc, headline, label)


def _measured(saves: list[str], measure) -> list[dict]:
    """measure(reader, save) of each save, opened read-only as every command opens one."""
    from smalltown.store.save import open_reader

    results = []
    for save in saves:
        reader = open_reader(save)
        try:
            results.append({"save": str(save), **measure(reader, str(save))})
        finally:
            reader.close()
    return results


def _report(args: argparse.Namespace, cli: ModuleType, results: list[dict], what: str, doc, headline, label) -> int:
    labels = _labels(args.saves)
    out = results[0] if len(results) == 1 else {"saves": dict(zip(labels, results))}
    return cli._emit(out, doc(results, labels), args, lambda c, _r: _show(
        c, f"{results[0]['world']}: {what}", [dict(headline(r)) for r in results],
        [f"{lb} ({label(r)})" for lb, r in zip(labels, results)]))


def _show(c, title: str, heads: list[dict], columns: list[str]) -> None:
    from rich.table import Table

    from smalltown.shown import shown_text

    t = Table(title=shown_text(title), show_lines=True)
    t.add_column("measure", style="bold")
    for col in columns:
        t.add_column(shown_text(col))
    for m in dict.fromkeys(m for h in heads for m in h):
        t.add_row(shown_text(m), *(shown_text(h.get(m, "")) for h in heads))
    c.print(t)
    sys.stdout.flush()
