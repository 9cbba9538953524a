"""The llama backend keeps, of each agent+task's prompt, only the part its next prompt is expected
to share (`kept_length`): a truncated state restores to the same greedy answer as evaluating
afresh, takes fewer bytes, and the cache's capacity still bounds the states; benchmarks/cost.py's
`tally` models the same policy."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from smalltown.llm.render import render
from smalltown.llm.render_parts import quote
from smalltown.llm import llama_states
from smalltown.llm.llama_states import KEEP_MARGIN, AgentStates, common_prefix, kept_length

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from cost import shared, tally  # noqa: E402


def test_the_whole_prompt_first_then_what_recurs_and_a_margin():
    assert kept_length(900, 100, None) == 900  # no previous prompt: nothing tells what recurs
    assert kept_length(900, 100, 300) == 300 + KEEP_MARGIN
    assert kept_length(900, 500, 300) == 500 + KEEP_MARGIN
    assert kept_length(320, 300, 10) == 320  # never past the prompt


def test_each_agent_tasks_latest_prompt_is_remembered_within_its_room(monkeypatch):
    states = AgentStates(1 << 20)
    a, b = np.arange(400), np.concatenate([np.arange(250), np.arange(150) + 1000])
    assert states.keep("k\x1fchoose", a, 0) == 400
    assert states.keep("k\x1fchoose", b, 20) == 250 + KEEP_MARGIN  # shares 250 with the previous
    assert states.keep("i\x1fchoose", b, 250) == 400  # another agent: its first
    monkeypatch.setattr(llama_states, "PROMPTS_BYTES", b.astype(np.intc).nbytes)  # room for one
    assert states.keep("j\x1fchoose", a, 0) == 400  # forgets the least recently asked...
    assert states.keep("k\x1fchoose", a, 0) == 400  # ... so Klaus's next is kept whole again


@pytest.mark.parametrize("truncated", [True, False])
def test_the_cost_tally_keeps_the_same_part(truncated, monkeypatch):
    """Klaus asks twice, Isabella once (sharing only the instructions), then Klaus a third time:
    truncated, his state holds only what his two prompts shared (plus the margin), so with room
    for just that much both states fit; kept whole, his would be pushed out."""
    import cost

    if not truncated:
        monkeypatch.setattr(cost, "kept_length", lambda whole, *_: whole)
    head, card = "instructions " * 20, "Klaus card " * 20
    k1, k2 = head + card + "time 1" + "x" * 600, head + card + "time 2" + "y" * 600
    i1 = head + "Isabella" + "z" * 300
    calls = [("K", "t", k1, "", 10), ("K", "t", k2, "", 10), ("I", "t", i1, "", 10), ("K", "t", k1, "", 10)]
    system = len(cost.RULES) + cost.TEMPLATE_TOKENS  # a token a character, below
    kept = shared(k1, k2) + KEEP_MARGIN * 4
    by_task, _ = tally(calls, len, 1, 2 * system + len(i1) + kept)
    klaus_again = shared(k1, k2) if truncated else shared(k1, i1)
    assert by_task["t"][2] == 4 * system + shared(k1, k2) + shared(k2, i1) + klaus_again
    assert shared(k1, i1) == len(head) < shared(k1, k2)


# --- the backend, on the tiny model -----------------------------------------------------------

@pytest.fixture(scope="module")
def model(tmp_path_factory):
    pytest.importorskip("llama_cpp")
    pytest.importorskip("gguf")
    from tinymodel import build_tiny_gguf

    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


def greedy(model, **kw):
    from smalltown.llm.llama import LlamaBackend

    return LlamaBackend(model, n_threads=1, n_ctx=8192, temperature=0, **kw)


def klaus_and_isabella():
    """Klaus's two questions of one task (the same instructions and card, another activity and
    order of options), and Isabella's of that task."""
    from realistic import realistic_tasks

    tasks = realistic_tasks()
    k1 = tasks["choose_place"]
    k2 = k1.model_copy(update={"activity": "meet his study group", "options": k1.options[::-1]})
    i1 = k1.model_copy(update={"persona": tasks["object_state"].persona})
    return k1, k2, i1


def ask(backend, *tasks):
    return [backend.answer(t, render(t)) for t in tasks]


def test_a_truncated_state_is_smaller_and_restores_to_the_same_answer(model, monkeypatch):
    k1, k2, i1 = klaus_and_isabella()
    key = f"{k1.persona.name}\x1f{k1.name}"
    t1, t2 = (np.asarray(greedy_tokens, dtype=np.intc) for greedy_tokens in
              (greedy(model).prompt_tokens(render(t))[0] for t in (k1, k2)))
    keep = kept_length(len(t2), common_prefix(t1, t2), common_prefix(t1, t2))
    assert common_prefix(t1, t2) < keep < len(t2)

    cut = greedy(model)
    ask(cut, k1, k2, i1)  # turning to Isabella saves Klaus's state, cut
    state = cut.states._states[key]
    assert len(state.tokens) == keep and np.array_equal(state.tokens, t2[:keep])
    again = cut.answer(k1, render(k1))  # restores the cut state
    assert again.cached_tokens == common_prefix(t1, t2)
    assert again.raw == greedy(model).answer(k1, render(k1)).raw  # as if evaluated afresh

    from smalltown.llm.llama_states import AgentStates as States

    monkeypatch.setattr(States, "keep", lambda self, agent, tokens, *_: len(tokens))  # as before
    whole = greedy(model)
    ask(whole, k1, k2, i1)
    assert len(whole.states._states[key].tokens) == len(t2)
    assert state.size < whole.states._states[key].size * keep / len(t2) * 1.1  # bytes shrink with the tokens
    assert again.raw == whole.answer(k1, render(k1)).raw


def test_the_capacity_still_bounds_the_states_and_now_holds_more(model, monkeypatch):
    k1, k2, i1 = klaus_and_isabella()
    probe = greedy(model)
    ask(probe, k1, k2, i1, k1)  # Klaus's cut state and Isabella's whole one, saved
    sizes = {k.split("\x1f")[0]: s.size for k, s in probe.states._states.items()}
    room = sum(sizes.values())
    cut = greedy(model, cache_bytes=room)
    ask(cut, k1, k2, i1, k1, i1)
    assert len(cut.states) == 2 and cut.states.nbytes <= room

    from smalltown.llm.llama_states import AgentStates as States

    monkeypatch.setattr(States, "keep", lambda self, agent, tokens, *_: len(tokens))
    whole = greedy(model, cache_bytes=room)
    ask(whole, k1, k2, i1, k1, i1)
    assert len(whole.states) < 2 and whole.states.nbytes <= room  # Klaus's whole state did not fit


# --- a conversation's lines: kept through the transcript, one state for both kinds of line ------

def conversation():
    """Isabella's line to Tom in an earlier talk, then her first line to Klaus (which may
    promise), Klaus's answer, and her next line (plain): her two lines to Klaus share their
    prompt through the transcript of the first."""
    from realistic import realistic_tasks
    from smalltown.llm.tasks import TranscriptLine

    tasks = realistic_tasks()
    first, line = tasks["utterance_commit"], tasks["utterance"]
    earlier = first.model_copy(update={"listener": "Tom Moreno", "reason": "Tom Moreno is at the counter",
                                       "transcript": []})
    said = [*first.transcript, TranscriptLine(speaker=first.persona.name, text="Come to the party tomorrow!"),
            TranscriptLine(speaker="Klaus Mueller", text="I will, if my paper is done by then.")]
    nxt = line.model_copy(update={k: getattr(first, k) for k in ("reason", "memories", "news", "facts", "relationship")}
                          | {"transcript": said})
    klaus = line.model_copy(update={"persona": tasks["choose_place"].persona, "listener": first.persona.name,
                                    "transcript": said[:-1]})
    return earlier, first, klaus, nxt


def test_a_lines_state_is_kept_through_its_transcript_and_shared_by_both_kinds():
    from smalltown.llm.llama_states import recurring

    earlier, first, _, nxt = conversation()
    (kind, head), (kind2, head2) = recurring(first), recurring(nxt)
    assert kind == kind2 == "utterance"  # one state for a line that may promise and a plain one
    last = f'{first.transcript[-1].speaker}: {quote(first.transcript[-1].text)}'
    assert render(first).startswith(head) and head.endswith(last)  # through the transcript's end
    assert shared(render(first), render(nxt)) >= len(head)  # ... which the next line repeats
    assert recurring(klaus_and_isabella()[0]) == ("choose_place", "")  # no growing part: as before
    assert kept_length(900, 100, 300, grown=700) == 700
    assert kept_length(900, 100, None, grown=700) == 700  # not the whole: the rest changes
    assert kept_length(900, 800, 300, grown=700) == 800 and kept_length(600, 0, None, grown=700) == 600


@pytest.mark.parametrize("gguf", ["model", "smollm2"])
def test_the_next_line_reuses_the_first_through_its_transcript_on_llama(gguf, request, monkeypatch):
    """Measured on llama.cpp (tokens it evaluated), on the tiny model and on SmolLM2: Isabella's
    next line to Klaus restores her first line's state through its transcript; kept as before (to
    what her previous line of that kind shared, plus the margin; a state per kind), it re-reads
    the transcript."""
    model = request.getfixturevalue(gguf)
    earlier, first, klaus, nxt = conversation()
    backend = greedy(model)
    t1, t2 = (np.asarray(backend.prompt_tokens(render(t))[0], dtype=np.intc) for t in (first, nxt))
    from smalltown.llm.llama_states import recurring

    transcript_end = common_prefix(backend.prompt_tokens(recurring(first)[1])[0], t1)
    transcript_start = common_prefix(backend.prompt_tokens(render(first).split("The conversation so far:")[0])[0], t1)
    assert transcript_start < transcript_end <= common_prefix(t1, t2)
    ask(backend, earlier, first, klaus)  # turning to Klaus saves Isabella's first line
    state = backend.states._states[f"{first.persona.name}\x1futterance"]
    assert len(state.tokens) == transcript_end < len(t1)  # through the transcript, not the whole
    again = backend.answer(nxt, render(nxt))
    assert again.cached_tokens == transcript_end  # (llama.cpp evaluated only what follows)
    assert again.raw == greedy(model).answer(nxt, render(nxt)).raw  # as if evaluated afresh

    from smalltown.llm import llama_states

    monkeypatch.setattr(llama_states, "grown_part", lambda task: "")  # as before: ...
    monkeypatch.setattr(type(first), "shares_state", "")  # ... each kind its own state
    monkeypatch.setattr(type(nxt), "shares_state", "")
    before = greedy(model)
    ask(before, earlier.model_copy(update={"transcript": first.transcript}), first, klaus)
    old = before.answer(nxt, render(nxt))
    assert old.cached_tokens < again.cached_tokens - 20  # the transcript read again
