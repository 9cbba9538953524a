"""The models screen (m): which backend answers, what it has answered so far, what a model would
change, and how to get one.

It reads what the app was given at its start (`BackendFacts`, taken from the backend before the
worker runs) and the save, through the `SaveReader`; it never touches the simulation. In replay,
there are no facts: the call log says who answered the recorded run."""

from __future__ import annotations

from dataclasses import dataclass

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from smalltown.llm.backend import Backend, BackendUnavailable, capabilities
from smalltown.llm.models import RECOMMENDED, default_model, local_models, models_dir
from smalltown.shown import shown, shown_text
from smalltown.store.calls import describe_reasons
from smalltown.tui.reader import SaveReader

STAND_IN = "scripted"


@dataclass(frozen=True)
class BackendFacts:
    """What the app knows of its backend from the start: it does not change while it runs."""

    name: str
    model: str = ""  # the GGUF file's name, the server's model name, the cassette
    source: str = ""  # the GGUF file's path, the server's URL
    context: int | None = None  # tokens in the model's window
    threads: int | None = None  # llama: CPU threads
    concurrency: int | None = None  # openai: requests in flight at most
    cpu: tuple[tuple[str, str], ...] = ()  # llama: the CPU paths llama.cpp takes, as (what, how) lines

    @property
    def label(self) -> str:
        """The backend in a few words, for the clock bar."""
        if self.name == STAND_IN:
            return "scripted (no model)"
        return f"{self.name} {self.model}" if self.model and self.model != self.name else self.name


def backend_facts(backend: Backend) -> BackendFacts:
    """Read once, when the app is made: the worker has not started, so the backend is at rest."""
    if backend.name == STAND_IN:
        return BackendFacts(STAND_IN)
    can = capabilities(backend)
    # the fields each backend keeps (llm/llama.py, llm/openai_compat.py); absent on the others
    source = getattr(backend, "path", None) or getattr(backend, "base_url", None) or ""
    return BackendFacts(backend.name, backend.model, str(source), can.context,
                        getattr(backend, "n_threads", None), can.max_concurrency if can.max_concurrency > 1 else None,
                        cpu_lines(backend))


def cpu_lines(backend: Backend) -> tuple[tuple[str, str], ...]:
    """A llama backend's CPU paths (llm/llama_model.py's CpuPaths) and where its weights went."""
    cpu, buffers = getattr(backend, "cpu", None), getattr(backend, "buffers", None)
    if cpu is None:
        return ()
    return (*cpu.describe(), *((("weights in", ", ".join(buffers)),) if buffers else ()))


def state_line(facts: BackendFacts, calls: int, fallbacks: int) -> Text:
    """The clock bar's account of the backend: "scripted (no model) · 1,204 calls · 0 fallbacks"."""
    out = Text(shown(facts.label), "italic", no_wrap=True, overflow="ellipsis")
    if facts.context and facts.name != STAND_IN:
        out.append(f" · ctx {facts.context:,}", "dim")
    out.append(f" · {calls:,} call{'s' if calls != 1 else ''}", "dim")
    out.append(f" · {fallbacks:,} fallback{'s' if fallbacks != 1 else ''}", "bold #ff6b6b" if fallbacks else "dim")
    return out


# --- the screen's text ------------------------------------------------------------------------

HEAD = "bold #ffe066"
WHAT_A_MODEL_CHANGES = (
    "The scripted stand-in answers every question from the agents' routines, sentence templates "
    "and the world file: days follow each persona's usual routine, conversations are stock lines, "
    "reflections restate memories. It is deterministic, needs nothing, and runs fast. A model "
    "writes the plans, the conversations and the reflections itself, from each agent's memories: "
    "that is where the town's surprises come from. Any answer a model gets wrong is answered by "
    "the stand-in instead, and marked in the model calls screen (c).")

HOW_TO_GET_ONE = (
    ("smalltown models", "the local models and the recommended ones"),
    ("smalltown models pull NAME", "download one (needs the 'models' extra: pip install 'smalltown[models]');"
                                   " it becomes the default"),
    ("smalltown run SAVE --model PATH.gguf", "go on with this save on a local model (llama.cpp)"),
    ("smalltown run SAVE --backend openai --base-url http://127.0.0.1:8080/v1 --model NAME",
     "or ask an OpenAI-compatible server (llama-server, vLLM, Ollama…)"),
)


def backend_table(facts: BackendFacts) -> Table:
    t = Table.grid(padding=(0, 2))
    t.add_column(style="dim", no_wrap=True)
    t.add_column()
    t.add_row("backend", Text(shown(facts.name), "bold"))
    if facts.name == STAND_IN:
        t.add_row("model", Text("none: the stand-in answers every question"))
    if facts.model and facts.name != STAND_IN:
        t.add_row("model", shown_text(facts.model))
    if facts.source:
        t.add_row("file" if facts.name == "llama" else "server", shown_text(facts.source))
    if facts.context:
        t.add_row("context", Text(f"{facts.context:,} tokens"))
    if facts.threads:
        t.add_row("threads", Text(str(facts.threads)))
    if facts.concurrency:
        t.add_row("concurrency", Text(f"{facts.concurrency} requests at once"))
    for what, how in facts.cpu:
        t.add_row(what, Text(how))
    return t


def recorded_table(backends: list[tuple[str, str, int]]) -> Table | Text:
    """Who answered a recorded run, as its call log says."""
    if not backends:
        return Text("no model calls in this save", "dim")
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold", no_wrap=True)
    t.add_column()
    t.add_column(justify="right")
    for backend, model, n in backends:
        t.add_row(shown_text(backend), shown_text(model if model != backend else ""), Text(f"{n:,} calls"))
    return t


def calls_text(figures: dict, noted: int, prompt: int, cached: int) -> Text:
    n, k = figures["calls"], figures["fallbacks"]
    out = Text.assemble((f"{n:,}", "bold"), f" call{'s' if n != 1 else ''} so far; ")
    out.append(f"{k:,} answered by the stand-in in a model's place (a fallback)")
    if k:
        out.append(f" ({describe_reasons(figures['by_reason'])})")
    out.append(f"; {noted:,} with a note (the ! in the calls screen)")
    if prompt:
        out.append(f"\n{prompt:,} prompt tokens, {cached:,} ({cached / prompt:.0%}) from the cache of an agent's "
                   "earlier prompt")
    else:
        out.append("\nno token counts: the scripted backend has no tokenizer (the calls screen estimates them)",
                   "dim")
    return out


def local_text() -> Text:
    """The GGUF files in the models directory, the default one, and the recommended ones."""
    out = Text()
    d = models_dir()
    found = local_models()
    try:
        default = default_model()
    except BackendUnavailable as e:  # the user's config file has a mistake: say so here too
        default, out = None, shown_text(f"{e}\n", "#ff6b6b")
    out.append(f"models directory: {shown(d)}{'' if d.is_dir() else ' (not created yet)'}\n")
    for p in found:
        out.append(f"  {shown(p.name)}  {p.stat().st_size / 1e9:.1f} GB")
        out.append(" (default)\n" if default and p.resolve() == default.resolve() else "\n")
    if not found:
        out.append("  no GGUF models here yet\n", "dim")
    if default and default not in found:
        out.append(f"default model: {shown(default)}\n")
    out.append("recommended (4-bit quantised instruct models):\n")
    for r in RECOMMENDED:
        out.append(f"  {r.name:14}", "bold")
        out.append(f" {r.size_gb:4.1f} GB  {r.note}\n")
    return out


def commands_text() -> Text:
    """Each command on a line of its own (to copy whole), what it does under it."""
    out = Text()
    for command, what in HOW_TO_GET_ONE:
        out.append(command, "bold #74c0fc")
        out.append(f"\n    {what}\n")  # a Text: "[models]" is not markup
    return out


class ModelsScreen(ModalScreen[None]):
    """Which backend answers, its calls so far, what a model would change, and how to get one.
    `facts` is the live app's backend; None in replay, where the call log says who answered. The
    reader stays open while the screen does: `reload()` (the app calls it as the town runs) counts
    the calls saved since."""

    CSS_PATH = "models.tcss"
    BINDINGS = [Binding("escape,m", "close", "Close")]

    def __init__(self, reader: SaveReader, facts: BackendFacts | None) -> None:
        super().__init__()
        self.reader = reader
        self.facts = facts
        self.tally = CallTally()
        self.tally.read(reader)

    def compose(self) -> ComposeResult:
        with VerticalScroll() as box:
            box.border_title = "Models: who answers the agents"
            if self.facts is not None:
                yield Static(Text("This run", HEAD), classes="head")
                yield Static(backend_table(self.facts), id="backend")
            else:
                yield Static(Text("The recorded run was answered by", HEAD), classes="head")
                yield Static(recorded_table(self.reader.call_backends()), id="backend")
            yield Static(self.tally.text(), id="figures")
            yield Static(Text("What a model changes", HEAD), classes="head")
            yield Static(WHAT_A_MODEL_CHANGES, id="what", markup=False)
            yield Static(Text("How to get one", HEAD), classes="head")
            yield Static(commands_text(), id="how")
            yield Static(local_text(), id="local")
            yield Static(Text("escape or m closes this", "dim"))

    def reload(self) -> None:
        """Count the calls saved since the last read; one query when none were."""
        if not self.is_mounted or not self.tally.read(self.reader):
            return
        self.query_one("#figures", Static).update(self.tally.text())
        if self.facts is None:
            self.query_one("#backend", Static).update(recorded_table(self.reader.call_backends()))

    def action_close(self) -> None:
        self.dismiss()


class CallCount:
    """The save's calls and those a fallback answered, for the clock bar: read a little at a time,
    only the calls saved since the last read, and not at all when none were."""

    def __init__(self) -> None:
        self.seen = -1  # the newest call id counted (none yet: the first read shows the figures)
        self.calls = 0
        self.fallbacks = 0

    def read(self, reader: SaveReader) -> bool:
        """Count what was saved since the last read; whether anything was."""
        newest = reader.newest_id("llm_calls")
        if newest == self.seen:
            return False
        self.add(reader, max(self.seen, 0), newest)
        self.seen = newest
        return True

    def add(self, reader: SaveReader, after: int, upto: int) -> None:
        """Count the calls with ids in (after, upto]."""
        self.count(reader.call_figures(after, upto))

    def count(self, figures: dict) -> None:
        self.calls += figures["calls"]
        self.fallbacks += figures["fallbacks"]


class CallTally(CallCount):
    """What the models screen says of the calls: a `CallCount` with the fallbacks' reasons, the
    calls with a note, and the prompt and cached tokens."""

    def __init__(self) -> None:
        super().__init__()
        self.by_reason: dict[str, int] = {}
        self.noted = self.prompt = self.cached = 0

    def add(self, reader: SaveReader, after: int, upto: int) -> None:
        super().add(reader, after, upto)
        sums = reader.call_sums(after=after, upto=upto)
        self.prompt += sums.prompt_tokens
        self.cached += sums.cached_tokens
        self.noted += reader.call_sums(notes_only=True, after=after, upto=upto).calls

    def count(self, figures: dict) -> None:
        super().count(figures)
        for why, n in figures["by_reason"].items():
            self.by_reason[why] = self.by_reason.get(why, 0) + n

    def text(self) -> Text:
        reasons = dict(sorted(self.by_reason.items(), key=lambda kv: (-kv[1], kv[0])))  # most first
        return calls_text({"calls": self.calls, "fallbacks": self.fallbacks, "by_reason": reasons},
                          self.noted, self.prompt, self.cached)
