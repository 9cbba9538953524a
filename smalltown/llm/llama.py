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

import ctypes
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from smalltown.llm import validate
from smalltown.llm.backend import Answer, Capabilities, Stopped
from smalltown.llm.llama_grammar import (CHAR_RULE, GRAMMAR_CACHE, SPACE_RULE, declared_grammar, grammar_text,
                                         representative, task_grammar)
from smalltown.llm.llama_model import ModelError, check_gguf, cores_from_cpuinfo, llama_log, load_model, physical_cores
from smalltown.llm.llama_states import AgentStates, SavedState, common_prefix, recurring
from smalltown.llm.schema import max_answer_tokens
from smalltown.llm.tasks import RULES, TASKS, Task
from smalltown.llm.validate import UnusableAnswer
from smalltown.llm.wrappers import RetryPolicy

# (the names importers take from here: the backend, its model's errors, its grammars)
__all__ = ["AgentStates", "CHAR_RULE", "LlamaBackend", "ModelError", "SPACE_RULE", "SYSTEM", "common_prefix",
           "cores_from_cpuinfo", "declared_grammar", "grammar_text", "physical_cores", "representative",
           "task_grammar"]

SYSTEM = RULES  # shared with every model backend (llm/tasks.py)
CHATML = (  # for a GGUF without a chat template
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
MIN_ROOM = 64  # tokens an answer needs at least (or its whole budget, if smaller) after the prompt


# --- the backend ------------------------------------------------------------------------------


class LlamaBackend:
    """Answers tasks with a local GGUF model through llama-cpp-python."""

    name = "llama"

    def __init__(self, model_path: str | Path, n_ctx: int = 4096, n_threads: int | None = None,
                 n_gpu_layers: int = 0, seed: int = 0, temperature: float = 0.7, retries: int = 2,
                 cache_bytes: int = 2 << 30, repack: str = "auto"):
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
        self._llm = load_model(path, repack, n_ctx=n_ctx, n_threads=self.n_threads, n_threads_batch=self.n_threads,
                               n_gpu_layers=n_gpu_layers, seed=seed)
        self.cpu, self.buffers = self._llm.cpu, self._llm.buffers  # the CPU paths taken (the models screen)
        self._formatter, self._system_in_user = self._chat_formatter()
        self._grammars: OrderedDict[str, object] = OrderedDict()  # grammar text -> LlamaGrammar (LRU)
        self._refused: dict[str, str] = {}  # task -> what it decodes under instead: "declared" or "json"
        self._check_grammars()

    @property
    def can(self) -> Capabilities:
        return Capabilities(context=self.context, count=self.count, abort=self.abort, close=self.close,
                            retry=RetryPolicy(self.retries, seeded=True, count_attempts=True), seed=self.seed)

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

    def answer(self, task: Task, prompt: str, attempt: int = 0, seed: int | None = None) -> Answer:
        """One attempt, sampled with seed `seed + attempt` (the question's seed, given by the Asker,
        else the run's; the Retry wrapper counts attempts, so each retry samples anew): a validated
        answer, decoded under the question's grammar, for at most the answer's token budget
        (`max_answer_tokens`); else UnusableAnswer with its cost."""
        with self._lock:
            tokens, stop = self.prompt_tokens(prompt)
            room = self.n_ctx - len(tokens)
            budget = max_answer_tokens(task)
            if room < min(budget, MIN_ROOM):
                raise UnusableAnswer(f"a prompt of {len(tokens)} tokens leaves no room for an answer "
                                     f"in the context window of {self.n_ctx}", "", kind="too long")
            max_tokens = min(room, budget)
            used = [0, 0, 0]  # prompt, completion, cached tokens
            sampled = ((self.seed if seed is None else seed) + attempt) & 0xFFFFFFFF  # llama.cpp's seeds: uint32
            raw, finish = self._complete(task, tokens, stop, max_tokens, sampled, used)
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
        # after it, are both reused the next time that agent asks that kind of question (kinds
        # whose prompts agree, like a conversation's lines, share one: `recurring`)
        kind, head = recurring(task)
        agent = f"{task.persona.name}\x1f{kind}"
        prompt = np.asarray(tokens, dtype=np.intc)
        restored = self._switch_to(agent, prompt)
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
        # what a saved state keeps: never the answer (the next prompt does not share it), and of
        # the prompt only the part the next one is expected to share
        # (the growing part's tokens: as far as it, chat-formatted alone, agrees with the prompt)
        grown = common_prefix(self.prompt_tokens(head)[0], prompt) if head else 0
        self._prompt_len = self.states.keep(agent, prompt, restored, grown)
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

    def _switch_to(self, agent: str, tokens: np.ndarray) -> int:
        """Before evaluating `agent`'s prompt: save the state of the agent the KV cache holds, if
        we leave it, and load the saved state that shares most of this prompt, if that beats
        what the KV cache already shares. How many of the prompt's tokens the KV cache then holds."""
        llm = self._llm
        if self._owner is not None and self._owner != agent and not self._saved:
            self.states.put(self._owner, self._save())
            self._saved = True
        current = np.asarray(llm.input_ids[:llm.n_tokens], dtype=np.intc)
        held = common_prefix(current, tokens)
        state, shared = self.states.best(tokens)
        if state is not None and shared > held:
            self._restore(state)
            self._saved = True  # what the KV cache holds is saved (as `state`)
            return shared
        return held

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
