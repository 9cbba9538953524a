"""`smalltown eval civics` (issue 17): the town's civic measures. `--roles SAVE [SAVE...]`: the
roles that emerged (eval/roles.py), saves side by side (with/without social modules x seeds).
Read only: a save is opened read-only and never changed."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from types import ModuleType

from smalltown.eval import EvalError


def add_parser(esub: argparse._SubParsersAction) -> None:
    cv = esub.add_parser("civics", help="civic measures (issue 17): with --roles, the roles that emerged from "
                                        "the agents' goals, saves side by side")
    cv.add_argument("--roles", nargs="+", metavar="SAVE", required=True,
                    help="saves to measure roles in: distinct roles, entropy, persistence, role × action")
    cv.add_argument("--out", metavar="DIR", help="write report.html, report.md (plots in plots/) and report.json here")
    cv.add_argument("--json", action="store_true", help="print the measures as JSON")


def civics(args: argparse.Namespace, cli: ModuleType) -> int:
    from smalltown.eval.roles import measure_roles, read_roles
    from smalltown.eval.roles_report import roles_doc
    from smalltown.store.reader import Reader

    results = []
    for save in args.roles:
        if not Path(save).is_file():
            raise EvalError(f"{save}: no such save")
        conn = sqlite3.connect(f"file:{Path(save).resolve()}?mode=ro", uri=True)
        try:
            results.append({"save": str(save), **measure_roles(read_roles(Reader(conn)))})
        except (sqlite3.DatabaseError, TypeError, ValueError) as e:
            raise EvalError(f"{save}: not a save with roles to read ({e})") from None
        finally:
            conn.close()
    labels = [Path(x).stem for x in args.roles]
    if len(set(labels)) < len(labels):
        labels = [f"{i + 1}" for i in range(len(labels))]
    out = results[0] if len(results) == 1 else {"saves": dict(zip(labels, results))}
    return cli._emit(out, roles_doc(results, labels), args, lambda c, _r: show_roles(c, results, labels))


def show_roles(c, results: list[dict], labels: list[str]) -> None:
    from rich.table import Table

    from smalltown.eval.roles_report import headline, label
    from smalltown.shown import shown_text

    heads = [dict(headline(r)) for r in results]
    t = Table(title=shown_text(f"{results[0]['world']}: roles"), show_lines=True)
    t.add_column("measure", style="bold")
    for lb, r in zip(labels, results):
        t.add_column(shown_text(f"{lb} ({label(r)})"))
    for m in dict.fromkeys(m for h in heads for m in h):
        t.add_row(shown_text(m), *(shown_text(h.get(m, "")) for h in heads))
    c.print(t)
    sys.stdout.flush()
