"""The llama.cpp backend: a local GGUF model answers each question under its own JSON grammar.

The grammar is the question's request schema (`schema.request_schema`: its options, its counts,
every field required, every string and list bounded) turned into GBNF, with one-line strings and
at most one space between tokens, so an answer ends within `schema.max_answer_tokens`.

One model, one context, one lock: llama.cpp is not thread-safe, so concurrent callers queue.
Every prompt is the GGUF's own chat template over a fixed system message and the task's prompt,
which starts with the agent's stable prefix (its persona card); the evaluated KV cache of each
agent is kept (see `AgentStates`) so that switching agents does not re-read their prefixes.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import threading
import typing
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from smalltown.llm import validate
from smalltown.llm.backend import Answer, BackendUnavailable, Capabilities, Stopped
from smalltown.llm.schema import grammar_schema, max_answer_tokens, request_schema
from smalltown.llm.tasks import RULES, TASKS, Task
from smalltown.llm.validate import UnusableAnswer
from smalltown.llm.wrappers import RetryPolicy

SYSTEM = RULES  # shared with every model backend (llm/tasks.py)
CHATML = (  # for a GGUF without a chat template
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MIN_ROOM = 64  # tokens an answer needs at least (or its whole budget, if smaller) after the prompt
GGUF_MAGIC = b"GGUF"


class ModelError(BackendUnavailable):
    """A model file that cannot be used; the message is one line, for the user."""


# --- the machine ------------------------------------------------------------------------------


def cores_from_cpuinfo(text: str, allowed: set[int] | None = None) -> int:
    """Physical cores in a /proc/cpuinfo listing (of the allowed processors); 0 if it lacks
    the topology fields (as on many ARM machines)."""
    cores = set()
    for block in text.strip().split("\n\n"):
        fields = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in block.splitlines())}
        if "processor" not in fields or "core id" not in fields:
            return 0
        if allowed is None or int(fields["processor"]) in allowed:
            cores.add((fields.get("physical id", "0"), fields["core id"]))
    return len(cores)


def physical_cores() -> int:
    """The physical cores this process may run on: llama.cpp is fastest with one thread per
    physical core (hyper-threads share a core's arithmetic units and only add contention),
    while llama-cpp-python's default counts logical ones."""
    try:
        allowed = os.sched_getaffinity(0)
    except AttributeError:  # macOS, Windows
        allowed = set(range(os.cpu_count() or 1))
    siblings = set()  # sysfs: each allowed cpu's set of hardware threads is one core
    for cpu in allowed:
        try:
            siblings.add(Path(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings_list").read_text().strip())
        except OSError:
            siblings.clear()
            break
    if siblings:
        return len(siblings)
    with contextlib.suppress(OSError, ValueError):
        if n := cores_from_cpuinfo(Path("/proc/cpuinfo").read_text(), allowed):
            return n
    with contextlib.suppress(ImportError):
        import psutil  # optional

        if n := psutil.cpu_count(logical=False):
            return min(n, len(allowed))
    return max(1, len(allowed))


# --- the model file ---------------------------------------------------------------------------


def check_gguf(path: Path) -> None:
    """Refuse what is not a GGUF file before llama.cpp sees it."""
    if not path.exists():
        raise ModelError(f"model file not found: {path}")
    if not path.is_file():
        raise ModelError(f"not a model file (a directory?): {path}")
    try:
        with path.open("rb") as f:
            magic = f.read(4)
    except OSError as e:
        raise ModelError(f"cannot read model file {path}: {e.strerror}") from None
    if magic != GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")


@contextlib.contextmanager
def llama_log() -> Iterator[list[str]]:
    """Collect llama.cpp's error lines instead of printing them (for an error message)."""
    import llama_cpp
    from llama_cpp import _logger

    lines: list[str] = []

    @llama_cpp.llama_log_callback
    def collect(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if level == 4:  # ggml's error level (llama-cpp-python's level table predates it)
            lines.append(text.decode("utf-8", "replace").strip())

    llama_cpp.llama_log_set(collect, ctypes.c_void_p(0))
    try:
        yield lines
    finally:
        llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


# --- grammars ---------------------------------------------------------------------------------

GRAMMAR_CACHE = 256  # per-question grammars kept, by text (options and counts vary by question)
# A JSON string's character: no control characters (json.loads rejects them raw) and no escape but
# \" and \\: answers are one line, with no line-break or unicode escape spelled out, so a string
# of n characters is at most n + 2 tokens, as `schema.max_answer_tokens` assumes.
CHAR_RULE = r'char ::= [^"\\\x7F\x00-\x1F] | "\\" ["\\]'
SPACE_RULE = 'space ::= " "?'  # at most one space between tokens: no runaway whitespace
_GBNF_ESCAPES = {"\\": "\\\\", '"': '\\"', "\r": "\\r", "\n": "\\n"}


def _converter():
    """llama-cpp-python's schema converter, with its literals escaped as GBNF needs: it leaves a
    backslash as it is (an option holding one, or a quote, would end its literal early or break
    the grammar) and spells non-ASCII options as \\u escapes the model would have to copy."""
    from llama_cpp.llama_grammar import SchemaConverter

    class Converter(SchemaConverter):
        def _format_literal(self, literal: str) -> str:
            return '"' + "".join(_GBNF_ESCAPES.get(c, c) for c in literal) + '"'

        def _generate_constant_rule(self, value) -> str:
            return self._format_literal(json.dumps(value, ensure_ascii=False))

    return Converter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)


def grammar_text(schema: dict) -> str:
    """GBNF for a request schema (`schema.request_schema`), as llama.cpp decodes under it."""
    converter = _converter()
    converter.visit(converter.resolve_refs(grammar_schema(schema), "request"), "")
    rules = converter.format_grammar().split("\n")  # (not splitlines: an option may hold U+2028)
    rules = [CHAR_RULE if r.startswith("char ::=") else SPACE_RULE if r.startswith("space ::=") else r
             for r in rules]
    return "\n".join(rules) + "\n"


def task_grammar(task: Task) -> str:
    """The grammar of this very question: its options, its counts, every field required."""
    return grammar_text(request_schema(task))


class _Declared:
    """A task seen through its output model alone, not narrowed to its question."""

    def __init__(self, task: Task):
        self.task = task

    def schema(self) -> dict:
        return Task.schema(self.task)


def declared_grammar(task: Task) -> str:
    """The task's grammar before narrowing (any options, any count): the fallback for a
    narrowed grammar llama.cpp refuses."""
    return grammar_text(request_schema(_Declared(task)))  # type: ignore[arg-type]


def representative(task: type[Task]) -> Task:
    """An instance of `task` for checking its grammars at load: every narrowing at work (a list of
    names becomes options, other lists give counts and citation numbers). Only `schema()` is
    asked of it, so its inputs are left unvalidated (the persona and time are absent)."""
    values = {}
    for name, field in task.model_fields.items():
        if typing.get_origin(field.annotation) is list:
            (item,) = typing.get_args(field.annotation) or (object,)
            values[name] = ([f"Sector {i}: Ñandú café's room: the keeper's big armchair {i}" for i in range(1, 13)]
                            if item is str else [None] * 9)
    return task.model_construct(**values)


# --- per-agent evaluated state ----------------------------------------------------------------


@dataclass
class SavedState:
    tokens: np.ndarray  # the tokens whose keys and values the state holds, in order
    data: ctypes.Array  # llama.cpp's sequence state (the KV cells of sequence 0)
    size: int


class AgentStates:
    """Each agent's evaluated KV cache, saved when the model turns to another agent and restored
    when it turns back; least recently used states go first beyond `capacity_bytes`.

    One state per agent and task (its latest prompt and answer of that kind): calls share the
    agent's prefix, and calls of one task also share that task's instructions. Only the KV cells are saved
    (llama.cpp's sequence state), not llama-cpp-python's LlamaState, which also copies a
    batch-by-vocabulary score matrix and is not counted against a cache's capacity."""

    def __init__(self, capacity_bytes: int):
        self.capacity_bytes = capacity_bytes
        self._states: OrderedDict[str, SavedState] = OrderedDict()

    def put(self, agent: str, state: SavedState) -> None:
        self._states.pop(agent, None)
        self._states[agent] = state
        while self._states and self.nbytes > self.capacity_bytes:
            self._states.popitem(last=False)

    def best(self, tokens: np.ndarray) -> tuple[SavedState | None, int]:
        """The saved state sharing the longest prefix with `tokens`, and that length."""
        found, length = None, 0
        for agent, state in self._states.items():
            n = common_prefix(state.tokens, tokens)
            if n > length:
                found, length, owner = state, n, agent
        if found is not None:
            self._states.move_to_end(owner)
        return found, length

    @property
    def nbytes(self) -> int:
        return sum(s.size for s in self._states.values())

    def __len__(self) -> int:
        return len(self._states)


def common_prefix(a, b) -> int:
    """How many tokens two sequences share from the start."""
    a, b = np.asarray(a), np.asarray(b)
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


# --- the backend ------------------------------------------------------------------------------


class LlamaBackend:
    """Answers tasks with a local GGUF model through llama-cpp-python."""

    name = "llama"

    def __init__(self, model_path: str | Path, n_ctx: int = 4096, n_threads: int | None = None,
                 n_gpu_layers: int = 0, seed: int = 0, temperature: float = 0.7, retries: int = 2,
                 cache_bytes: int = 2 << 30):
        if retries < 0 or n_ctx < 2 * MIN_ROOM or cache_bytes < 0:
            raise ValueError("need retries >= 0, n_ctx >= 128, cache_bytes >= 0")
        path = Path(model_path)
        check_gguf(path)
        self.model = path.name
        self.path = path
        self.n_ctx = n_ctx
        self.context = n_ctx  # the Asker fits prompts to it (Backend.context)
        self.n_threads = n_threads or physical_cores()
        self.seed = seed
        self.temperature = temperature
        self.retries = retries
        self.states = AgentStates(cache_bytes)
        self._lock = threading.RLock()
        self._owner: str | None = None  # whose prompt the KV cache holds
        self._prompt_len = 0  # how many of the tokens in the KV cache are the owner's prompt
        self._saved = True  # ... and whether that is already in `states`
        self._llm = _load(path, n_ctx=n_ctx, n_threads=self.n_threads, n_threads_batch=self.n_threads,
                          n_gpu_layers=n_gpu_layers, seed=seed)
        self._formatter, self._system_in_user = self._chat_formatter()
        self._grammars: OrderedDict[str, object] = OrderedDict()  # grammar text -> LlamaGrammar (LRU)
        self._refused: dict[str, str] = {}  # task -> what it decodes under instead: "declared" or "json"
        self._check_grammars()

    @property
    def can(self) -> Capabilities:
        return Capabilities(context=self.context, count=self.count, abort=self.abort, close=self.close,
                            retry=RetryPolicy(self.retries, seeded=True, count_attempts=True))

    def abort(self) -> None:
        """Stop: the generation in flight ends before its next batch or token and raises Stopped,
        and so does every later one (Backend.abort). Only sets a flag: safe from a signal handler."""
        self._llm.stopping.set()

    # --- prompts ---

    def _chat_formatter(self):
        """The GGUF's own chat template (what llama-cpp-python uses when no chat_format is
        given), and whether it refuses a system message (then the rules lead the user turn)."""
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        llm = self._llm
        eos, bos = llm.token_eos(), llm.token_bos()
        template = llm.metadata.get("tokenizer.chat_template") or CHATML
        formatter = Jinja2ChatFormatter(
            template=template, eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
            bos_token=llm._model.token_get_text(bos) if bos != -1 else "", stop_token_ids=[eos])
        try:
            formatter(messages=[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])
            return formatter, False
        except Exception:  # e.g. "System role not supported"
            return formatter, True

    def messages(self, prompt: str) -> list[dict]:
        """The rules, then the prompt (which ends with the answer's shape and the question)."""
        if self._system_in_user:
            return [{"role": "user", "content": f"{SYSTEM}\n\n{prompt}"}]
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}]

    def prompt_tokens(self, prompt: str) -> tuple[list[int], list[str]]:
        """The chat-formatted prompt as tokens, and the stop strings."""
        result = self._formatter(messages=self.messages(prompt))
        tokens = self._llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
        stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        return tokens, [s for s in stop if s]

    def count(self, prompt: str) -> int:
        """Exactly the tokens llama.cpp evaluates for `prompt` (Backend.count): the rules and the
        prompt in the model's chat template, with its tokenizer."""
        with self._lock:
            return len(self.prompt_tokens(prompt)[0])

    def count_tokens(self, text: str) -> int:
        """Tokens of a piece of text alone, with the model's tokenizer (Backend.count_tokens: what
        a retrieved record costs a list's budget)."""
        with self._lock:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    # --- grammars ---

    def _accepts(self, text: str) -> bool:
        """Whether llama.cpp parses the grammar (it would crash a completion if it did not)."""
        import llama_cpp

        sampler = llama_cpp.llama_sampler_init_grammar(self._llm._model.vocab, text.encode(), b"root")
        if sampler:
            llama_cpp.llama_sampler_free(sampler)
        return bool(sampler)

    def _check_grammars(self) -> None:
        """Every task's grammar, narrowed for a representative question, parsed by llama.cpp once,
        at load; should one not parse, that task decodes under its grammar before narrowing, or
        failing that as any JSON (validation still applies every rule). llama.cpp's grammar
        parser prints what it refuses: quieted here, with stdout and stderr, as during the load
        (not later, when a TUI may be drawing on them). A question's own grammar differs from its
        representative's only in its options and counts, which llama.cpp does not limit."""
        from llama_cpp._utils import suppress_stdout_stderr

        with llama_log(), suppress_stdout_stderr(disable=False):
            for name, task in TASKS.items():
                example = representative(task)
                if self._accepts(task_grammar(example)):
                    continue
                self._refused[name] = "declared" if self._accepts(declared_grammar(example)) else "json"

    def _grammar(self, task: Task):
        """The grammar of this question, from a bounded cache by its text; the task's fallback
        if llama.cpp refused the task's grammar at load (or, unforeseen, this question's)."""
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        refused = self._refused.get(task.name)
        text = JSON_GBNF if refused == "json" else declared_grammar(task) if refused else task_grammar(task)
        grammar = self._grammars.get(text)
        if grammar is not None:
            self._grammars.move_to_end(text)
            return grammar
        if text == JSON_GBNF or self._accepts(text):
            grammar = LlamaGrammar.from_string(text, verbose=False)
        else:  # not foreseen at load (llama.cpp has printed why): this question falls back
            fallback = declared_grammar(task) if refused is None else JSON_GBNF
            grammar = LlamaGrammar.from_string(fallback if self._accepts(fallback) else JSON_GBNF, verbose=False)
        self._grammars[text] = grammar
        while len(self._grammars) > GRAMMAR_CACHE:
            self._grammars.popitem(last=False)
        return grammar

    # --- answering ---

    def answer(self, task: Task, prompt: str, attempt: int = 0) -> Answer:
        """One attempt, sampled with seed `seed + attempt` (the Retry wrapper counts attempts, so
        each retry samples anew): a validated answer, decoded under the question's grammar, for at
        most the answer's token budget (`max_answer_tokens`); else UnusableAnswer with its cost."""
        with self._lock:
            tokens, stop = self.prompt_tokens(prompt)
            room = self.n_ctx - len(tokens)
            budget = max_answer_tokens(task)
            if room < min(budget, MIN_ROOM):
                raise UnusableAnswer(f"a prompt of {len(tokens)} tokens leaves no room for an answer "
                                     f"in the context window of {self.n_ctx}", "", kind="too long")
            max_tokens = min(room, budget)
            used = [0, 0, 0]  # prompt, completion, cached tokens
            raw, finish = self._complete(task, tokens, stop, max_tokens, self.seed + attempt, used)
            try:
                return Answer(validate.parse_answer(task, raw), raw, *used)
            except UnusableAnswer as e:
                if finish == "length":  # the token limit, not the model, ended it
                    e = UnusableAnswer(f"cut off at {max_tokens} tokens: {e.reason}", raw, kind="cut off")
                e.usage = (used[0], used[1], used[2])
                raise e from None

    def _complete(self, task: Task, tokens: list[int], stop: list[str], max_tokens: int, seed: int,
                  used: list[int]) -> tuple[str, str]:
        """(the completion's text, why it stopped: "stop" or "length")."""
        # one saved state per agent and task: the agent's prefix, and the task's own instructions
        # after it, are both reused the next time that agent asks that kind of question
        agent = f"{task.persona.name}\x1f{task.name}"
        self._switch_to(agent, np.asarray(tokens, dtype=np.intc))
        llm = self._llm
        llm.evaluated.clear()
        try:
            out = llm.create_completion(tokens, max_tokens=max_tokens, temperature=self.temperature,
                                        seed=seed, grammar=self._grammar(task), stop=stop)
        except (Exception, Stopped) as e:  # a failed or stopped decode, not the answer: start clean
            llm.reset()
            self._owner, self._saved = None, True
            if isinstance(e, Stopped):
                raise
            raise UnusableAnswer(f"llama.cpp failed: {e}", "", kind="failed") from None
        self._owner, self._saved = agent, False
        self._prompt_len = len(tokens)  # what a saved state keeps: the next prompt never shares the answer
        usage = out["usage"]
        # Cached prompt tokens, measured, not inferred: llama-cpp-python evaluates only the part
        # of the prompt after its longest common prefix with the tokens in the KV cache (after
        # `_switch_to` has restored the best saved state), in its first `eval` call of the
        # completion; every later call is one sampled token. So: prompt - that first eval.
        evaluated = llm.evaluated[0] if llm.evaluated else 0
        used[0] += usage["prompt_tokens"]
        used[1] += usage["completion_tokens"]
        used[2] += usage["prompt_tokens"] - evaluated
        choice = out["choices"][0]
        return choice["text"], choice["finish_reason"] or "stop"

    def _switch_to(self, agent: str, tokens: np.ndarray) -> None:
        """Before evaluating `agent`'s prompt: save the state of the agent the KV cache holds, if
        we leave it, and load the saved state that shares most of this prompt, if that beats
        what the KV cache already shares."""
        llm = self._llm
        current = np.asarray(llm.input_ids[:llm.n_tokens], dtype=np.intc)
        if self._owner is not None and self._owner != agent and not self._saved:
            self.states.put(self._owner, self._save())
            self._saved = True
        state, shared = self.states.best(tokens)
        if state is not None and shared > common_prefix(current, tokens):
            self._restore(state)
            self._saved = True  # what the KV cache holds is saved (as `state`)

    def _save(self) -> SavedState:
        import llama_cpp

        llm = self._llm
        n = min(llm.n_tokens, self._prompt_len)  # the prompt's tokens: smaller states, more of them kept
        llm._ctx.kv_cache_seq_rm(0, n, -1)  # only the cells of the tokens we record
        llm.n_tokens = n
        ctx = llm._ctx.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        data = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, data, size, 0)
        return SavedState(np.array(llm.input_ids[:n], dtype=np.intc), data, int(written))

    def _restore(self, state: SavedState) -> None:
        import llama_cpp

        llm = self._llm
        llm._ctx.kv_cache_clear()
        if llama_cpp.llama_state_seq_set_data(llm._ctx.ctx, state.data, state.size, 0) == 0:
            llm.reset()  # could not load: evaluate from scratch
            return
        n = len(state.tokens)
        llm.input_ids[:n] = state.tokens
        llm.n_tokens = n
        llm._requires_eval = True  # the logits are not those of the restored tokens

    def close(self) -> None:
        with self._lock:
            self._llm.close()


def _load(path: Path, **params):
    """The model, or a ModelError saying why not (llama.cpp's own reason, if it gave one)."""
    from llama_cpp import Llama

    class CountingLlama(Llama):
        """Records how many tokens each `eval` call evaluates (to measure cached tokens), and
        stops between batches of a prompt and between sampled tokens once `stopping` is set."""

        def eval(self, tokens):
            self.evaluated.append(len(tokens))
            for i in range(0, len(tokens), self.n_batch):  # as Llama.eval batches them, checked between
                if self.stopping.is_set():
                    raise Stopped
                super().eval(tokens[i:i + self.n_batch])

    with llama_log() as log:
        try:
            llm = CountingLlama(model_path=str(path), verbose=False, **params)
        except Exception as e:  # ValueError from llama-cpp-python; whatever else a bad file causes
            said = [line.split("error loading model: ")[-1].split(": ", 1)[-1] for line in log if line]
            said = [line for line in said if "failed to load model" not in line]
            reason = said[0] if said else str(e)
            hint = (f"not enough memory for a context of {params['n_ctx']} tokens?" if "context" in str(e)
                    else "is the file complete, and a model llama.cpp supports?")
            raise ModelError(f"llama.cpp could not load {path.name}: {reason} ({hint})") from None
    llm.evaluated = []
    llm.stopping = threading.Event()
    return llm
