"""The llama.cpp backend on real llama.cpp, with a tiny random-weight GGUF the tests write
themselves: every task is answered under its grammar (or falls back, visibly), agents' prefixes
stay evaluated across agent switches, bad model files fail with a clear message, and a town runs.

Tests run llama.cpp with one thread: the tiny model's work per token is so small that a second
thread only adds synchronisation (and on a busy 2-core machine, much waiting)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest
from pydantic import model_validator

pytest.importorskip("llama_cpp")
pytest.importorskip("gguf")

from conftest import SMALLVILLE, TINY, query
from smalltown.llm.backend import Answer, Asker, CallRecord
from smalltown.llm.llama import (
    SYSTEM,
    LlamaBackend,
    ModelError,
    common_prefix,
    cores_from_cpuinfo,
    grammar_text,
    physical_cores,
)
from smalltown.scripted import ScriptedBackend
from smalltown.llm.tasks import TASKS, ObjectState, ObjectStateOut, Persona, Task
from smalltown.llm.validate import UnusableAnswer, schema_for
from smalltown.world.load import load_world
from test_scripted import realistic_tasks
from tinymodel import CHAT_TEMPLATE, build_tiny_gguf


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


def backend_for(model, **kw) -> LlamaBackend:
    return LlamaBackend(model, n_threads=1, **kw)


@pytest.fixture(scope="module")
def backend(model):
    b = backend_for(model)
    yield b
    b.close()


@pytest.fixture(scope="module")
def tasks():
    return realistic_tasks(load_world(SMALLVILLE))


# --- the model and the machine ----------------------------------------------------------------

def test_the_tiny_model_is_small_and_loads_with_its_chat_template(model, backend):
    assert model.stat().st_size < 2_000_000
    assert backend.name == "llama" and backend.model == "tiny.gguf"
    assert backend._llm.chat_format == "chat_template.default"  # llama-cpp-python found it too
    assert backend._formatter.template == CHAT_TEMPLATE and not backend._system_in_user
    task = ObjectState(persona=Persona(name="A", age=30, traits="calm", description="", home="h"),
                       activity="brew coffee", object="coffee machine")
    text = backend._formatter(messages=backend.messages(task, task.render())).prompt
    assert text.startswith(f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\nA is using the coffee machine")
    assert text.endswith("<|im_start|>assistant\n")


def test_count_tokens_with_the_models_tokenizer(backend):
    text = 'Día 1: {"state": "brewing"} ☕\n'
    assert 0 < backend.count_tokens(text) <= len(text.encode())  # bytes, and a few merges
    assert backend.count_tokens("") == 0
    assert backend.count_tokens("zzz") == 3


def test_physical_cores_is_a_positive_count_of_this_machines_cores():
    n = physical_cores()
    assert isinstance(n, int) and 1 <= n <= os.cpu_count()


def test_hyperthreads_count_once_in_cpuinfo():
    listing = "\n\n".join(f"processor\t: {p}\nphysical id\t: 0\ncore id\t\t: {p % 2}\nsiblings\t: 4"
                          for p in range(4))
    assert cores_from_cpuinfo(listing) == 2
    assert cores_from_cpuinfo(listing, allowed={0, 2}) == 1
    assert cores_from_cpuinfo("processor\t: 0\nBogoMIPS\t: 50\n\nprocessor\t: 1\n") == 0  # no topology


# --- answering every task ---------------------------------------------------------------------

def test_every_task_gets_a_valid_model_answer_or_a_logged_fallback(backend, tasks):
    assert set(tasks) == set(TASKS)
    records: list[CallRecord] = []
    asker = Asker(backend, records.append, fallback=ScriptedBackend(0))
    for name, task in tasks.items():
        out = asker.ask(task.persona.name, task)
        rec = records[-1]
        assert isinstance(out, task.output) and rec.task == name and rec.backend == "llama"
        assert task.output.model_validate_json(rec.parsed_answer) == out
        if rec.note:
            assert rec.note.startswith("fallback to scripted"), rec.note
        else:
            assert task.output.model_validate(json.loads(rec.raw_answer)) == out  # the model's own
            assert rec.prompt_tokens > 0 and rec.completion_tokens > 0
    answered = [r.task for r in records if not r.note]
    print(f"\nanswered by the model: {len(answered)}/{len(records)}; fallbacks: "
          f"{[r.task for r in records if r.note]}")
    assert len(answered) >= len(records) // 2


def test_every_task_grammar_is_accepted_by_llama_cpp(backend, tasks):
    from llama_cpp.llama_grammar import JSON_GBNF

    assert not backend._refused
    for task in tasks.values():
        assert backend._grammar(task)._grammar == grammar_text(task) != JSON_GBNF, task.name


def test_a_grammar_llama_cpp_refuses_falls_back_to_any_json_quietly(model, tasks, monkeypatch, capfd):
    import smalltown.llm.llama as llama

    monkeypatch.setattr(llama, "MAX_GRAMMAR_LENGTH", 10_000)  # interview's 1500 characters unrolled
    backend = backend_for(model)
    assert backend._refused == {"interview"}
    assert capfd.readouterr() == ("", "")
    records = []
    Asker(backend, records.append, fallback=ScriptedBackend(0)).ask("Klaus Mueller", tasks["interview"])
    assert records[-1].note == "" or records[-1].note.startswith("fallback to scripted")


def test_the_grammar_enforces_what_the_converter_alone_would_not(tasks):
    assert r"\d" not in grammar_text(TASKS["hourly_schedule"])  # llama.cpp rejects that escape
    assert '"3" | "4"' in grammar_text(TASKS["daily_plan"])  # wake_up_hour in 3..12
    assert "\\x00-\\x1F" in grammar_text(TASKS["object_state"])  # no raw control characters
    choose = tasks["choose_place"]
    assert all(json.dumps(json.dumps(o))[1:-1] in grammar_text(choose) for o in choose.options)


@pytest.mark.parametrize("name", ["object_state", "choose_place", "decompose", "react"])
def test_random_weights_still_answer_json_of_the_schemas_shape(model, tasks, name):
    task = tasks[name]
    schema = schema_for(task)
    props, required = set(schema["properties"]), set(schema.get("required", []))
    for seed in range(3):
        answer = backend_for(model, seed=seed, retries=0)  # (a load takes milliseconds)
        try:
            raw = answer.answer(task, task.render()).raw
        except UnusableAnswer as e:  # valid JSON breaking a rule (a bound the grammar leaves open)
            if e.reason.startswith("cut off"):
                continue
            raw = e.raw
        data = json.loads(raw)
        assert required <= set(data) <= props
        if name == "choose_place":
            assert data["choice"] in task.options


class Never(ObjectStateOut):
    @model_validator(mode="after")
    def refuse(self):
        raise ValueError("never good enough")


class Unpleasable(ObjectState):
    output = Never


def test_an_unusable_answer_is_retried_with_other_seeds_then_raised(model, tasks, monkeypatch):
    backend = backend_for(model, retries=2)
    seeds = []
    complete = backend._complete
    monkeypatch.setattr(backend, "_complete", lambda *a: (seeds.append(a[4]), complete(*a))[1])
    task = Unpleasable(**tasks["object_state"].model_dump())
    with pytest.raises(UnusableAnswer) as e:
        backend.answer(task, task.render())
    assert seeds == [0, 1, 2]
    assert "never good enough" in e.value.reason and e.value.reason.endswith("(3 attempts)")
    assert json.loads(e.value.raw)["state"]
    prompt, completion, cached = e.value.usage
    assert prompt > 0 and completion > 0 and cached >= 2 * prompt // 3 - 3  # retries reuse the prompt
    records = []
    assert Asker(backend, records.append, fallback=Idle()).ask("Isabella Rodriguez", task).state == "idle"
    assert records[-1].note.startswith("fallback to idle: ") and json.loads(records[-1].raw_answer)


class Idle:
    name = model = "idle"

    def answer(self, task: Task, prompt: str) -> Answer:
        return Answer(ObjectStateOut(state="idle"), '{"state": "idle"}')


def test_a_prompt_too_long_for_the_context_is_unusable_not_an_error(model, tasks):
    backend = backend_for(model, n_ctx=512)
    task = tasks["interview"]
    with pytest.raises(UnusableAnswer, match="no room for an answer"):
        backend.answer(task, task.render())
    records = []
    Asker(backend, records.append, fallback=ScriptedBackend(0)).ask("Klaus Mueller", task)
    assert records[-1].note.startswith("fallback to scripted")


def test_concurrent_callers_are_served_one_at_a_time(model, tasks):
    backend = backend_for(model)
    active, most = [0], [0]
    complete = backend._complete

    def one_at_a_time(*a):
        active[0] += 1
        most[0] = max(most[0], active[0])
        time.sleep(0.01)
        try:
            return complete(*a)
        finally:
            active[0] -= 1

    backend._complete = one_at_a_time
    errors = []

    def ask(task):
        try:
            backend.answer(task, task.render())
        except UnusableAnswer:
            pass
        except Exception as e:  # pragma: no cover - what this test is for
            errors.append(e)

    threads = [threading.Thread(target=ask, args=(t,)) for t in
               (tasks["object_state"], tasks["choose_place"], tasks["utterance"], tasks["object_state"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and most[0] == 1


# --- each agent's prefix stays evaluated ------------------------------------------------------

def test_switching_agents_reuses_each_agents_evaluated_prefix(model, tasks):
    backend = backend_for(model)
    a1, a2, a3 = tasks["next_action"], tasks["choose_place"], tasks["rate_importance"]  # Klaus
    b = tasks["decompose"]  # Isabella
    assert {a1.persona.name, a2.persona.name, a3.persona.name} == {"Klaus Mueller"} != {b.persona.name}
    tok = {id(t): backend.prompt_tokens(t, t.render())[0] for t in (a1, a2, a3, b)}

    first = backend.answer(a1, a1.render())
    assert first.cached_tokens == 0  # a fresh context
    kv = list(backend._llm.input_ids[:backend._llm.n_tokens])  # a1's prompt and answer
    second = backend.answer(a2, a2.render())
    assert second.cached_tokens == common_prefix(kv, tok[id(a2)])  # measured = what was shared
    other = backend.answer(b, b.render())
    system_only = common_prefix(tok[id(a2)], tok[id(b)])
    assert 0 < other.cached_tokens <= system_only + 1  # Isabella shares the rules, not Klaus's card
    again = backend.answer(a3, a3.render())
    assert again.cached_tokens >= common_prefix(tok[id(a2)], tok[id(a3)]) > system_only  # Klaus's state came back
    assert len(backend.states) == 3  # one saved state per agent and task: Klaus twice, Isabella once

    # without room for saved states, the same sequence re-reads Klaus's card
    bare = backend_for(model, cache_bytes=0)
    for t in (a1, a2, b):
        bare.answer(t, t.render())
    assert bare.answer(a3, a3.render()).cached_tokens <= system_only + 1 < again.cached_tokens

    # what was restored is what evaluating afresh gives: the same answer, greedily decoded
    greedy, fresh = backend_for(model, temperature=0), backend_for(model, temperature=0)
    for t in (a1, b):
        greedy.answer(t, t.render())
    restored = greedy.answer(a3, a3.render())
    assert restored.cached_tokens > system_only and restored.raw == fresh.answer(a3, a3.render()).raw

    calls = [first, second, other, again]
    share = sum(c.cached_tokens for c in calls) / sum(c.prompt_tokens for c in calls)
    print(f"\ncached prompt tokens: {[c.cached_tokens for c in calls]} of {[c.prompt_tokens for c in calls]}"
          f" ({share:.0%})")


# --- bad model files --------------------------------------------------------------------------

def test_load_errors_are_one_clear_line(tmp_path, model, capfd):
    text = tmp_path / "notes.gguf"
    text.write_text("these are my notes, not a model\n")
    truncated = tmp_path / "truncated.gguf"
    truncated.write_bytes(model.read_bytes()[:200_000])
    header_only = tmp_path / "header.gguf"
    header_only.write_bytes(model.read_bytes()[:64])
    cases = {
        tmp_path / "missing.gguf": "model file not found",
        tmp_path: "not a model file",
        text: "is not a GGUF model file",
        truncated: "llama.cpp could not load truncated.gguf: tensor 'blk.0.attn_output.weight' data is not "
                   "within the file bounds",
        header_only: "llama.cpp could not load header.gguf: ",
    }
    messages = []
    for path, message in cases.items():
        with pytest.raises(ModelError) as e:
            LlamaBackend(path)
        assert message in str(e.value) and "\n" not in str(e.value)
        assert e.value.__cause__ is None  # no chained traceback
        assert e.value.__context__ is None or e.value.__suppress_context__
        messages.append(str(e.value))
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # llama.cpp's own noise stays quiet
    print("", *messages, sep="\n")


# --- a town -----------------------------------------------------------------------------------

def test_the_tiny_town_runs_an_hour_on_the_tiny_model(tmp_path, model):
    from smalltown.sim.simulation import Simulation

    world = load_world(TINY)
    save = tmp_path / "t.sqlite"
    sim = Simulation.create(world, save, backend_for(model, seed=world.seed))
    sim.asker.fallback = ScriptedBackend(world.seed)  # see the report: the Simulation should do this
    t0 = time.perf_counter()
    for _ in range(360):  # an hour of 10-second ticks
        sim.step()
    seconds = time.perf_counter() - t0
    sim.close()
    rows = query(save, "select backend, count(*), sum(prompt_tokens), sum(cached_tokens), "
                       "sum(completion_tokens), sum(note like 'fallback to scripted%') from llm_calls group by backend")
    [(backend, calls, prompt, cached, completion, fallbacks)] = rows
    assert backend == "llama" and calls > 10 and prompt > 0 and completion > 0
    assert query(save, "select count(*) from llm_calls where backend='llama' and prompt_tokens > 0")[0][0] > 0
    print(f"\n360 ticks in {seconds:.1f}s: {calls} calls, {fallbacks} fallbacks, {prompt} prompt tokens "
          f"({cached / prompt:.0%} cached), {completion} completion tokens")
