"""The `smalltown` commands, declared with click: each gathers its parameters and hands them to
the function that does the work (cli/execute.py says its errors and exit code). The world and
save groups are in cli/app_files.py, eval in cli/app_eval.py, and cli/main.py adds the commands
whose work it does. A command's module is imported when it runs: `smalltown --help` loads no
backend."""

from __future__ import annotations

from typing import Any

import click

from smalltown import __version__
from smalltown.cli.execute import handle
from smalltown.cli.options import CONTEXT, backend_options, int_in, opt, out_option

WHEN = ("'2023-02-14 08:00', 'day 2 9:00', '9:00' (the latest 9:00 at or before the save's end), "
        "or relative to the save's end: '-2h'")


@click.group(context_settings=CONTEXT, help="""A town of generative agents in your terminal.

Run a world in the TUI, share worlds and saves, ask agents why they did what they did, and
measure towns. `smalltown COMMAND --help` explains each command, with an example.

\b
Exit codes: 0 ok, 1 failed, 2 a usage error or input refused (a missing or bad
file, a model that is not there), 130 stopped by Ctrl-C, 143 stopped by SIGTERM.

\b
Examples:
  smalltown run                          the default world in the TUI
  smalltown run worlds/tiny.toml --headless --until +1d -o town.sqlite
  smalltown why town.sqlite Alex --at 'day 1 9:00'""")
@click.version_option(__version__, "--version", prog_name="smalltown", message="%(prog)s %(version)s")
def cli() -> None:
    pass


@cli.command("run", context_settings=CONTEXT, short_help="run a world or continue a save (the TUI, or --headless)",
             help="""Open the TUI on a world or a save; --headless runs without it, to --until.

\b
WORLD|SAVE  a world file (.toml), a world pack (.smalltown-world) or a save
            (.sqlite) to continue; default: the world worlds/default.txt names

\b
Examples:
  smalltown run worlds/tiny.toml
  smalltown run worlds/tiny.toml --headless --until +1d -o town.sqlite
  smalltown run town.sqlite --until 18:00 --running""")
@click.argument("target", required=False, metavar="[WORLD|SAVE]")
@opt("--headless", is_flag=True, help="run without the TUI, with a progress bar (needs --until)")
@opt("--running", is_flag=True, help="start the TUI running (it opens paused: space runs it; --until runs it there)")
@opt("--until", metavar="WHEN", help="stop at this game time: '2023-02-14 08:00', 'day 2 9:00', '18:00' (the next "
     "18:00 after the run's time) or relative '+6h', '+1d'")
@out_option("the save file, in a folder that exists (default: a new file in the user's saves folder, see "
            "`smalltown saves`, or the save being continued)", aliases=("--save",))
@backend_options
@opt("--overwrite", is_flag=True, help="replace an existing file named by --out")
@opt("--set", "sets", multiple=True, metavar="NAME=VALUE", help="override a setting (repeatable), e.g. --set "
     "reflection=false")
@opt("--world-seed", type=int_in(0, 2**32 - 1), metavar="N", help="a new run of the world under seed N instead of "
     "its file's `seed` (kept in the save; the model's sampling seed too, unless --seed)")
def run(sets: tuple[str, ...], out: str | None, **params: Any) -> int:
    from smalltown.cli.run import run

    return handle("run", run, set=sets, save=out, **params)


def _agent_command(name: str, short: str, help: str):
    return cli.command(name, context_settings=CONTEXT, short_help=short, help=help)


SAVE_AGENT = """\b
SAVE   a save file (made by `smalltown run`)
AGENT  an agent's full or first name, any case"""


@_agent_command("inspect", "an agent's summary, plan at each level and latest memories", f"""An agent's summary,
its plan at each level (day, hour blocks, actions) and its latest memories, read from a save
(without locking it: it works while a run goes on). --retrieve runs a retrieval and shows each
record's recency, importance and relevance.

{SAVE_AGENT}

\b
Examples:
  smalltown inspect town.sqlite Alex
  smalltown inspect town.sqlite "Alex Moreau" --retrieve "the weekend" -k 5 --json""")
@click.argument("save", metavar="SAVE")
@click.argument("agent", metavar="AGENT")
@opt("--retrieve", metavar="QUERY", help="run a retrieval and show each record's scores")
@opt("-k", "k", type=int, default=10, show_default=True, help="records a retrieval returns")
@opt("--memories", type=int, default=20, metavar="N", show_default=True, help="latest memories shown")
@opt("--json", "json", is_flag=True, help="print as JSON")
def inspect(**params: Any) -> int:
    return _agents("inspect", **params)


@_agent_command("whisper", "an inner voice: the agent takes TEXT as its own thought", f"""An inner voice: the
agent takes TEXT as a thought of its own, stored as a memory it will retrieve like any other (the
paper's "inner voice"). It is written into the save.

{SAVE_AGENT}
TEXT   the thought, in the agent's own words or yours

\b
Example:
  smalltown whisper town.sqlite Alex "You want to start a vegetable garden"
""")
@click.argument("save", metavar="SAVE")
@click.argument("agent", metavar="AGENT")
@click.argument("text", metavar="TEXT")
@backend_options
def whisper(**params: Any) -> int:
    return _agents("whisper", **params)


@_agent_command("interview", "ask an agent a question, in a persona of your choosing", f"""Ask an agent a
question; it answers from what it remembers (a retrieval on the question), as the persona you give
(--as) would hear it. The interview is logged in the save like any model call.

{SAVE_AGENT}
QUESTION  what to ask

\b
Examples:
  smalltown interview town.sqlite Alex "What are you looking forward to?"
  smalltown interview town.sqlite Alex "What did you do today?" --as "a news reporter" --json
""")
@click.argument("save", metavar="SAVE")
@click.argument("agent", metavar="AGENT")
@click.argument("question", metavar="QUESTION")
@opt("--as", "persona", default="the interviewer", metavar="PERSONA", show_default=True,
     help='who is asking, e.g. "a news reporter"')
@backend_options
@opt("--json", "json", is_flag=True, help="print as JSON")
def interview(**params: Any) -> int:
    return _agents("interview", **params)


@_agent_command("edit-object", "rewrite an object's state; agents who see it notice", """Rewrite an object's
state in a save; agents who see the object notice the change as they would any event.

\b
SAVE     a save file
ADDRESS  the object's address, sector:arena:object (a misspelt part is
         answered with the names it probably meant)
STATE    the new state, as a world file could hold it, e.g. "burning"

\b
Example:
  smalltown edit-object town.sqlite "Rose Cottage:kitchen:stove" burning""")
@click.argument("save", metavar="SAVE")
@click.argument("address", metavar="ADDRESS")
@click.argument("state", metavar="STATE")
def edit_object(**params: Any) -> int:
    return _agents("edit-object", **params)


def _agents(command: str, **params: Any) -> int:
    from smalltown.cli import agents

    def handler(args) -> int:
        try:
            return getattr(agents, command.replace("-", "_"))(args)
        except agents.UnknownAgent as e:  # an object the save lacks, a state no world could hold
            import sys

            from smalltown.shown import shown

            print(f"error: {shown(e, lines=True)}", file=sys.stderr)
            return 2
    return handle(command, handler, **params)


@cli.group("models", context_settings=CONTEXT, invoke_without_command=True,
           short_help="local GGUF models: list them, or pull a recommended one", help="""Local GGUF models:
without an action, list the models directory, which model is the default, how llama.cpp runs on
this machine, and the models we recommend.

\b
Examples:
  smalltown models
  smalltown models pull qwen2.5-1.5b""")
@click.pass_context
def models(ctx: click.Context) -> int | None:
    if ctx.invoked_subcommand is None:
        from smalltown.cli.models import models

        return handle("models", models, models_command=None)
    return None


@models.command("pull", context_settings=CONTEXT, short_help="download a recommended model (needs the 'models' extra)",
                help="""Download a recommended model into the models directory (needs the 'models'
extra: pip install 'smalltown[models]'); it becomes the default model.

\b
NAME  one of the names `smalltown models` recommends

\b
Example:
  smalltown models pull qwen2.5-1.5b""")
@click.argument("name", metavar="NAME")
def pull(name: str) -> int:
    from smalltown.cli.models import models

    return handle("models", models, models_command="pull", name=name)


@cli.command("fork", context_settings=CONTEXT, short_help="a new save, as a save was at an earlier moment (rewind)",
             help=f"""Copy SAVE into a new save (--out) cut back to the latest snapshot (taken each game
hour) at or before WHEN; SAVE itself is not changed.

\b
SAVE  the save to fork from

\b
Examples:
  smalltown fork town.sqlite --at 'day 1 9:00' -o morning.sqlite
  smalltown fork town.sqlite --at=-2h -o earlier.sqlite --json""")
@click.argument("save", metavar="SAVE")
@opt("--at", metavar="WHEN", help=f"{WHEN}; default: the save's last tick")
@out_option("the new save", aliases=("--to",), required=True, metavar="NEW")
@opt("--overwrite", is_flag=True, help="replace an existing NEW")
@opt("--json", "json", is_flag=True, help="print what was done as JSON")
def fork(out: str, **params: Any) -> int:
    from smalltown.cli.fork import fork_command

    return handle("fork", fork_command, to=out, **params)


@cli.command("saves", context_settings=CONTEXT,
             short_help="the saves made without --out (in the user's data folder), newest first",
             help="""List the saves in the user's saves folder (where a run without --out saves):
path, world, game time and size, the newest first. The folder is the platform's user data folder
($XDG_DATA_HOME/smalltown/saves on Linux).

\b
Examples:
  smalltown saves
  smalltown saves --json""")
@opt("--json", "json", is_flag=True, help="print the list as JSON")
def saves(**params: Any) -> int:
    from smalltown.cli.saves import saves_command

    return handle("saves", saves_command, **params)


@cli.command("why", context_settings=CONTEXT,
             short_help="why an agent was doing what it did: its action, plan, calls, memories",
             help=f"""The chain behind an agent's action at a game time: the action and its plan block,
the model calls that decided it (prompt and answer), the records retrieval scored for them
(recency, importance, relevance) and the memories those rest on.

{SAVE_AGENT}

\b
Examples:
  smalltown why town.sqlite Alex --at 'day 1 9:00'
  smalltown why town.sqlite Alex --at 9:00 --brief
  smalltown why town.sqlite Alex --json""")
@click.argument("save", metavar="SAVE")
@click.argument("agent", metavar="AGENT")
@opt("--at", metavar="WHEN", help="a game time: '9:00' (the latest at or before the run's end), 'day 2 9:00', "
     "'2023-02-13 12:00' (default: the end of the run)")
@opt("--brief", is_flag=True, help="leave out the calls' prompts (their answers stay)")
@opt("--json", "json", is_flag=True, help="print as JSON")
def why(**params: Any) -> int:
    from smalltown.cli.why import why_command

    return handle("why", why_command, **params)


@cli.command("calls", context_settings=CONTEXT, short_help="the model calls a save logged, with prompts and answers",
             help="""List a save's model calls, oldest first: who asked, which task, when, the backend,
tokens and time, the prompt and the answer.

\b
SAVE  a save file

\b
Examples:
  smalltown calls town.sqlite --agent Alex --task daily_plan --since 6:00
  smalltown calls town.sqlite -n 0 --json""")
@click.argument("save", metavar="SAVE")
@opt("--agent", metavar="AGENT", help="only this agent's calls (full or first name)")
@opt("--task", metavar="TASK", help="only calls of this task, e.g. daily_plan")
@opt("--since", metavar="WHEN", help="only calls at or after this game time ('9:00', 'day 2 9:00')")
@opt("--until", metavar="WHEN", help="only calls at or before this game time")
@opt("-n", "--count", type=int, default=20, metavar="N", help="the newest N calls (default 20; 0 for all)")
@opt("--json", "json", is_flag=True, help="print as a JSON list")
def calls(**params: Any) -> int:
    from smalltown.cli.calls import calls_command

    return handle("calls", calls_command, **params)


