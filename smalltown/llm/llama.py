"""The llama.cpp backend: a local GGUF model answers tasks under each task's JSON-schema grammar.

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
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from smalltown.llm import validate
from smalltown.llm.backend import Answer, BackendUnavailable
from smalltown.llm.tasks import RULES, TASKS, ChoosePlace, Task
from smalltown.llm.validate import UnusableAnswer

SYSTEM = RULES  # shared with every model backend (llm/tasks.py)
CHATML = (  # for a GGUF without a chat template
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MIN_ROOM = 64  # tokens an answer needs at least, after the prompt, in the context window
LONG_TASKS = frozenset({"hourly_schedule", "reflection_insights", "interview"})  # twice max_tokens
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


# --- grammars and the answer's shape ----------------------------------------------------------

_CLASSES = {r"\d": "[0-9]", r"\w": "[A-Za-z0-9_]", r"\s": "[ \\t\\n]"}
MAX_ENUM_RANGE = 200  # an integer range up to this many values is spelled out in the grammar
MAX_GRAMMAR_LENGTH = 600  # llama.cpp refuses a grammar repeating `char` (much) more often


def grammar_schema(node: object) -> object:
    """The schema as the grammar should enforce it, for llama-cpp-python's converter:
    - `\\d` in a pattern would reach the grammar as an escape llama.cpp rejects: spelled out;
    - integer bounds are ignored by the converter: a small range becomes an enum of its values;
    - a long maxLength unrolls into more rules than llama.cpp accepts: left to validation."""
    if isinstance(node, list):
        return [grammar_schema(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: grammar_schema(v) for k, v in node.items()}
    if isinstance(out.get("pattern"), str):
        for cls, spelled in _CLASSES.items():
            out["pattern"] = out["pattern"].replace(cls, spelled)
    lo, hi = out.get("minimum"), out.get("maximum")
    if out.get("type") == "integer" and isinstance(lo, int) and isinstance(hi, int) and 0 <= hi - lo < MAX_ENUM_RANGE:
        out = {k: v for k, v in out.items() if k not in ("type", "minimum", "maximum")}
        out["enum"] = list(range(lo, hi + 1))
    if out.get("maxLength", 0) > MAX_GRAMMAR_LENGTH:
        del out["maxLength"]
    return out


def output_schema(task: type[Task] | Task) -> dict:
    """The task's output schema, narrowed where the inputs fix the answer's values: a place
    chosen must be one of the options (the mind trusts nothing else)."""
    schema = validate.schema_for(task)
    # (the converter does not escape a backslash in a literal: such options stay free text)
    if isinstance(task, ChoosePlace) and task.options and not any('"' in o or "\\" in o for o in task.options):
        schema = {**schema, "properties": {**schema["properties"], "choice": {"enum": list(task.options)}}}
    return schema


def grammar_text(task: type[Task] | Task) -> str:
    """GBNF for the task's output schema; JSON strings may not hold raw control characters
    (the converter's `char` rule allows them, and json.loads then rejects the answer)."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    gbnf = json_schema_to_gbnf(json.dumps(grammar_schema(output_schema(task))))
    return gbnf.replace('char ::= [^"\\\\] |', 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |')


def _describe(schema: dict, defs: dict) -> str:
    if "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    kind = schema.get("type")
    if kind == "object":
        fields = ", ".join(f'"{k}": {_field(v, defs)}' for k, v in schema.get("properties", {}).items())
        return "{" + fields + "}"
    if kind == "array":
        lo, hi = schema.get("minItems"), schema.get("maxItems")
        count = f"{lo} " if lo == hi and lo else f"{lo} to {hi} " if lo and hi else f"up to {hi} " if hi else ""
        return f"a list of {count}{_describe(schema.get('items', {}), defs)}"
    if kind == "integer":
        lo, hi = schema.get("minimum"), schema.get("maximum")
        return f"integer {lo} to {hi}" if lo is not None and hi is not None else "integer"
    if kind == "boolean":
        return "true or false"
    return "text"


def _field(schema: dict, defs: dict) -> str:
    text = _describe(schema, defs)
    return f"{text} ({schema['description']})" if schema.get("description") else text


def answer_shape(task: type[Task] | Task) -> str:
    """What the answer looks like, told in words at the end of the prompt (the grammar forces
    the shape; this tells the model what each field means)."""
    schema = validate.schema_for(task)
    return "Answer with JSON only, in this shape: " + _describe(schema, schema.get("$defs", {}))


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
                 cache_bytes: int = 2 << 30, max_tokens: int = 512):
        if retries < 0 or max_tokens < 1 or n_ctx < 2 * MIN_ROOM or cache_bytes < 0:
            raise ValueError("need retries >= 0, max_tokens >= 1, n_ctx >= 128, cache_bytes >= 0")
        path = Path(model_path)
        check_gguf(path)
        self.model = path.name
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads or physical_cores()
        self.seed = seed
        self.temperature = temperature
        self.retries = retries
        self.max_tokens = max_tokens
        self.states = AgentStates(cache_bytes)
        self._lock = threading.RLock()
        self._owner: str | None = None  # whose prompt the KV cache holds
        self._saved = True  # ... and whether that is already in `states`
        self._llm = _load(path, n_ctx=n_ctx, n_threads=self.n_threads, n_threads_batch=self.n_threads,
                          n_gpu_layers=n_gpu_layers, seed=seed)
        self._formatter, self._system_in_user = self._chat_formatter()
        self._refused: set[str] = set()  # tasks whose grammar llama.cpp refused
        self._grammars = self._check_grammars()
        self._choices: dict[str, object] = {}  # choose_place grammars, by their text

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

    def messages(self, task: Task, prompt: str) -> list[dict]:
        user = f"{prompt.rstrip()}\n\n{answer_shape(task)}"
        if self._system_in_user:
            return [{"role": "user", "content": f"{SYSTEM}\n\n{user}"}]
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]

    def prompt_tokens(self, task: Task, prompt: str) -> tuple[list[int], list[str]]:
        """The chat-formatted prompt as tokens, and the stop strings."""
        result = self._formatter(messages=self.messages(task, prompt))
        tokens = self._llm.tokenize(result.prompt.encode("utf-8"), add_bos=not result.added_special, special=True)
        stop = result.stop if isinstance(result.stop, list) else [result.stop] if result.stop else []
        return tokens, [s for s in stop if s]

    def count_tokens(self, text: str) -> int:
        with self._lock:
            return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def _check_grammars(self) -> dict[str, object]:
        """Each task's grammar, parsed by llama.cpp once, at load; should one not parse, that
        task is decoded as any JSON (validation still applies every rule). llama.cpp's grammar
        parser prints what it refuses: quieted here, with stdout and stderr, as during the load
        (not later, when a TUI may be drawing on them)."""
        import llama_cpp
        from llama_cpp._utils import suppress_stdout_stderr
        from llama_cpp.llama_grammar import JSON_GBNF, LlamaGrammar

        grammars = {}
        with llama_log(), suppress_stdout_stderr(disable=False):
            for name, task in TASKS.items():
                text = grammar_text(task)
                sampler = llama_cpp.llama_sampler_init_grammar(self._llm._model.vocab, text.encode(), b"root")
                if sampler:
                    llama_cpp.llama_sampler_free(sampler)
                else:
                    self._refused.add(name)
                grammars[name] = LlamaGrammar.from_string(text if sampler else JSON_GBNF, verbose=False)
        return grammars

    def _grammar(self, task: Task):
        """The task's grammar; a place choice's is narrowed to its options (literals added to a
        grammar llama.cpp accepted), one per set of options."""
        from llama_cpp.llama_grammar import LlamaGrammar

        if not isinstance(task, ChoosePlace) or task.name in self._refused:
            return self._grammars[task.name]
        text = grammar_text(task)
        if text not in self._choices:
            if len(self._choices) > 1000:
                self._choices.clear()
            self._choices[text] = LlamaGrammar.from_string(text, verbose=False)
        return self._choices[text]

    # --- answering ---

    def answer(self, task: Task, prompt: str) -> Answer:
        with self._lock:
            tokens, stop = self.prompt_tokens(task, prompt)
            room = self.n_ctx - len(tokens)
            if room < MIN_ROOM:
                raise UnusableAnswer(f"a prompt of {len(tokens)} tokens leaves no room for an answer "
                                     f"in the context window of {self.n_ctx}", "")
            max_tokens = min(room, self.max_tokens * (2 if task.name in LONG_TASKS else 1))
            used = [0, 0, 0]  # prompt, completion, cached tokens over all attempts
            last = UnusableAnswer("no attempt", "")
            for attempt in range(1 + self.retries):
                try:
                    raw = self._complete(task, tokens, stop, max_tokens, self.seed + attempt, used)
                    return Answer(validate.parse_answer(task, raw), raw, *used)
                except UnusableAnswer as e:
                    last = e
            err = UnusableAnswer(f"{last.reason} ({1 + self.retries} attempts)", last.raw)
            err.usage = tuple(used)  # (prompt, completion, cached) tokens the attempts cost
            raise err

    def _complete(self, task: Task, tokens: list[int], stop: list[str], max_tokens: int, seed: int,
                  used: list[int]) -> str:
        # one saved state per agent and task: the agent's prefix, and the task's own instructions
        # after it, are both reused the next time that agent asks that kind of question
        agent = f"{task.persona.name}\x1f{task.name}"
        self._switch_to(agent, np.asarray(tokens, dtype=np.intc))
        llm = self._llm
        llm.evaluated.clear()
        try:
            out = llm.create_completion(tokens, max_tokens=max_tokens, temperature=self.temperature,
                                        seed=seed, grammar=self._grammar(task), stop=stop)
        except Exception as e:  # a failed decode (llama.cpp), not the answer: start clean
            llm.reset()
            self._owner, self._saved = None, True
            raise UnusableAnswer(f"llama.cpp failed: {e}", "") from None
        self._owner, self._saved = agent, False
        usage = out["usage"]
        # Cached prompt tokens, measured, not inferred: llama-cpp-python evaluates only the part
        # of the prompt after its longest common prefix with the tokens in the KV cache (after
        # `_switch_to` has restored the best saved state), in its first `eval` call of the
        # completion; every later call is one sampled token. So: prompt - that first eval.
        evaluated = llm.evaluated[0] if llm.evaluated else 0
        used[0] += usage["prompt_tokens"]
        used[1] += usage["completion_tokens"]
        used[2] += usage["prompt_tokens"] - evaluated
        raw = out["choices"][0]["text"]
        if out["choices"][0]["finish_reason"] == "length":  # runaway: usable only if complete
            try:
                validate.parse_answer(task, raw)
            except UnusableAnswer as e:
                raise UnusableAnswer(f"cut off at {max_tokens} tokens: {e.reason}", raw) from None
        return raw

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
        n = llm.n_tokens
        llm._ctx.kv_cache_seq_rm(0, n, -1)  # only the cells of the tokens we record
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
        """Records how many tokens each `eval` call evaluates (to measure cached tokens)."""

        def eval(self, tokens):
            self.evaluated.append(len(tokens))
            super().eval(tokens)

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
    return llm
