"""The llama.cpp backend on real llama.cpp, with a tiny random-weight GGUF the tests write
themselves: every question is answered under its own narrowed grammar (or falls back, visibly,
with the reason's kind), within the answer's token budget, prompts are counted exactly as
llama.cpp evaluates them, agents' prefixes stay evaluated across agent switches, bad model files
fail with a clear message, and a town runs.

Tests run llama.cpp with one thread: the tiny model's work per token is so small that a second
thread only adds synchronisation (and on a busy 2-core machine, much waiting)."""

from __future__ import annotations

import json
import os
import threading
import time

import pytest

from smalltown.llm.fit import estimate
from pydantic import model_validator

pytest.importorskip("llama_cpp")
pytest.importorskip("gguf")

from helpers import TINY, query
from realistic import KLAUS, MEMORIES, Spy, rate, realistic_tasks
from smalltown.llm.asker import Asker
from smalltown.llm.backend import Answer, CallRecord, question_seed
from smalltown.llm.llama import (
    CHAR_RULE,
    SPACE_RULE,
    SYSTEM,
    LlamaBackend,
    ModelError,
    common_prefix,
    cores_from_cpuinfo,
    declared_grammar,
    grammar_text,
    physical_cores,
    representative,
    task_grammar,
)
from smalltown.llm.render import render
from smalltown.llm.render_parts import quote, record
from smalltown.llm.schema import max_answer_tokens, request_schema
from smalltown.llm.tasks import TASKS, ChoosePlace, ObjectState, ObjectStateOut, Task
from smalltown.llm.validate import UnusableAnswer
from smalltown.scripted import ScriptedBackend
from smalltown.llm.wrappers import retrying
from smalltown.world.load import load_world
from tinymodel import CHAT_TEMPLATE, build_tiny_gguf

KINDS = {"invalid", "cut off", "failed", "too long", "copied", "incoherent"}


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return build_tiny_gguf(tmp_path_factory.mktemp("model") / "tiny.gguf")


def backend_for(model, **kw) -> LlamaBackend:
    """A window that holds every realistic prompt whole, by default: the tiny model's tokens are
    mostly single bytes, a prompt's several times a real model's."""
    return LlamaBackend(model, n_threads=1, **{"n_ctx": 8192, **kw})


@pytest.fixture(scope="module")
def backend(model):
    b = backend_for(model)
    yield b
    b.close()


@pytest.fixture(scope="module")
def tasks():
    return realistic_tasks()


# --- the model and the machine ----------------------------------------------------------------

def test_the_tiny_model_is_small_and_loads_with_its_chat_template(model, backend):
    assert model.stat().st_size < 2_000_000
    assert backend.name == "llama" and backend.model == "tiny.gguf"
    assert backend.context == backend.n_ctx == 8192
    assert backend._llm.chat_format == "chat_template.default"  # llama-cpp-python found it too
    assert backend._formatter.template == CHAT_TEMPLATE and not backend._system_in_user
    task = realistic_tasks()["object_state"]
    prompt = render(task)
    text = backend._formatter(messages=backend.messages(prompt)).prompt
    # the rules, then the prompt as rendered: it holds the answer's shape, nothing is appended
    assert text == f"<|im_start|>system\n{SYSTEM}<|im_end|>\n<|im_start|>user\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
    assert "Answer with one JSON object" in prompt


NO_SYSTEM = ("{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}"
             + CHAT_TEMPLATE)


def test_a_template_without_a_system_role_gets_the_rules_first_in_the_user_turn(tmp_path, tasks):
    b = backend_for(build_tiny_gguf(tmp_path / "nosys.gguf", chat_template=NO_SYSTEM))
    assert b._system_in_user
    prompt = render(tasks["object_state"])
    text = b._formatter(messages=b.messages(prompt)).prompt
    assert text == f"<|im_start|>user\n{SYSTEM}\n\n{prompt}<|im_end|>\n<|im_start|>assistant\n"
    assert b.count(prompt) == len(b.prompt_tokens(prompt)[0])
    try:
        assert b.answer(tasks["object_state"], prompt).prompt_tokens == b.count(prompt)
    except UnusableAnswer as e:
        assert e.usage[0] == b.count(prompt)


def test_count_is_the_exact_tokens_llama_cpp_evaluates(model, tasks):
    b = backend_for(model, retries=0, cache_bytes=0)
    for task in (tasks["object_state"], tasks["rate_importance"], tasks["utterance"]):
        prompt = render(task)
        b._llm.reset()  # nothing cached: every prompt token is evaluated
        try:
            used = b.answer(task, prompt).prompt_tokens
        except UnusableAnswer as e:
            used = e.usage[0]
        assert b.count(prompt) == used == b._llm.evaluated[0] > len(prompt) // 4
    text = 'Día 1: {"state": "brewing"} ☕\n'
    assert b.count(text) - b.count("") == b.count_tokens(text)  # the template adds a fixed frame


def test_count_tokens_of_a_text_alone_with_the_models_tokenizer(backend):
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
        assert rec.prompt_tokens > 0 and rec.completion_tokens > 0  # a fallback still counts what was spent
        if rec.fallback:
            assert rec.fallback in KINDS and rec.note.startswith("fallback to scripted"), rec.note
        else:
            assert task.output.model_validate(json.loads(rec.raw_answer)) == out  # the model's own
            assert not task.check(out)
    answered = [r.task for r in records if not r.fallback]
    print(f"\nanswered by the model: {len(answered)}/{len(records)}; fallbacks: "
          f"{[(r.task, r.fallback) for r in records if r.fallback]}")
    assert len(answered) >= len(records) // 2


def test_every_tasks_narrowed_grammar_is_accepted_by_llama_cpp(backend, tasks):
    from llama_cpp.llama_grammar import JSON_GBNF

    assert not backend._refused
    for task in tasks.values():
        assert backend._grammar(task)._grammar == task_grammar(task) != JSON_GBNF, task.name
    for name, cls in TASKS.items():
        assert backend._accepts(task_grammar(representative(cls))), name


def test_grammars_are_per_question_and_cached_by_text(model, tasks, monkeypatch):
    import smalltown.llm.llama as llama

    b = backend_for(model)
    monkeypatch.setattr(llama, "GRAMMAR_CACHE", 3)
    grammars = [b._grammar(rate(n)) for n in (1, 2, 1)]
    assert grammars[0] is grammars[2] is not grammars[1]  # the same question's grammar, cached
    assert list(b._grammars) == [task_grammar(rate(2)), task_grammar(rate(1))]  # least recently used first
    for n in (3, 4, 5):
        b._grammar(rate(n))
    assert len(b._grammars) == 3 and task_grammar(rate(1)) not in b._grammars


def test_a_grammar_llama_cpp_refuses_falls_back_quietly_to_the_tasks_then_to_any_json(model, tasks, monkeypatch, capfd):
    import smalltown.llm.llama as llama
    from llama_cpp.llama_grammar import JSON_GBNF

    broken = 'root ::= "unclosed\n'
    narrowed, declared = llama.task_grammar, llama.declared_grammar
    monkeypatch.setattr(llama, "task_grammar", lambda t: broken if t.name in ("interview", "choose_place")
                        else narrowed(t))
    monkeypatch.setattr(llama, "declared_grammar", lambda t: broken if t.name == "interview" else declared(t))
    b = backend_for(model)
    assert b._refused == {"interview": "json", "choose_place": "declared"}
    assert capfd.readouterr() == ("", "")  # llama.cpp's complaints stay quiet at load
    assert b._grammar(tasks["interview"])._grammar == JSON_GBNF
    assert b._grammar(tasks["choose_place"])._grammar == declared(tasks["choose_place"])
    records = []
    asker = Asker(b, records.append, fallback=ScriptedBackend(0))
    for name in ("interview", "choose_place"):
        asker.ask(tasks[name].persona.name, tasks[name])
        assert records[-1].fallback in KINDS | {""}


def test_the_grammar_enforces_what_the_converter_alone_would_not(tasks):
    hourly = task_grammar(tasks["hourly_schedule"])
    assert r"\d" not in hourly  # llama.cpp rejects that escape
    assert '"3" | "4"' in task_grammar(tasks["daily_plan"])  # wake_up_hour in 3..12
    for task in tasks.values():
        rules = task_grammar(task).split("\n")
        assert SPACE_RULE in rules  # at most one space between tokens
        assert all(r == CHAR_RULE for r in rules if r.startswith("char ::="))  # one-line strings, no \u escapes
        assert not any(r.startswith(("ws ::=", "value ::=", "string ::=")) for r in rules)  # nothing unbounded
    assert CHAR_RULE in hourly
    choose = tasks["choose_place"]
    assert all(f'"\\"{o}\\""' in task_grammar(choose) for o in choose.options)  # the options, exactly
    assert all(f'"\\"{p}\\""' in hourly for p in tasks["hourly_schedule"].known_places)
    assert all(f'"\\"{o}\\""' in task_grammar(tasks["decompose"]) for o in tasks["decompose"].objects)
    assert '"1" | "2" | "3" | "4" | "5" | "6" | "7" | "8" | "9" | "10"' in task_grammar(rate(9))
    assert task_grammar(rate(9)).count("ratings-item") == 10  # the rule, and nine ratings
    assert "tells ::= \"[\" space  \"]\" space" in task_grammar(tasks["utterance"].model_copy(
        update={"news": [], "memories": []}))  # nothing to cite: nothing cited
    assert declared_grammar(rate(9)) != task_grammar(rate(9)) == grammar_text(request_schema(rate(9)))


def test_options_with_quotes_backslashes_and_accents_are_spelled_exactly(backend, tasks):
    odd = ['Café "Ñandú"', "back\\slash: room", "line\u2028break", "tab\there", "plain"]
    task = ChoosePlace(**{**tasks["choose_place"].model_dump(), "options": odd})
    text = task_grammar(task)
    assert backend._accepts(text)
    for seed in range(4):
        b = backend_for(backend.path, seed=seed, retries=0)
        raw = b.answer(task, render(task)).raw
        assert json.loads(raw)["choice"] in odd


@pytest.mark.parametrize("n", [1, 4, 9])
def test_n_memories_get_exactly_n_ratings(backend, n):
    task = rate(n)
    answer = backend.answer(task, render(task))
    assert len(answer.output.ratings) == n and len(json.loads(answer.raw)["ratings"]) == n
    assert answer.completion_tokens <= max_answer_tokens(task)


@pytest.mark.parametrize("name", ["object_state", "choose_place", "decompose", "react", "utterance",
                                  "reflection_insights", "summarize_conversation",
                                  "summarize_conversation_social"])
def test_random_weights_still_answer_json_of_the_request_schemas_shape_within_its_budget(model, tasks, name):
    task = tasks[name]
    schema = request_schema(task)
    b = backend_for(model, retries=0)
    spy = Spy(b)
    for seed in range(3):
        b.seed = seed
        try:
            raw = b.answer(task, render(task)).raw
        except UnusableAnswer as e:  # valid JSON breaking a rule (a bound the grammar leaves open)
            assert e.kind == "invalid", e.reason  # never cut off: the grammar ends it within budget
            raw = e.raw
        data = json.loads(raw)
        assert set(data) == set(schema["properties"])  # every field, always
        assert "\n" not in raw
        assert spy.calls[-1]["max_tokens"] == max_answer_tokens(task) and spy.calls[-1]["finish"] == "stop"
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
        retrying(backend).answer(task, render(task))
    assert seeds == [0, 1, 2]
    assert "never good enough" in e.value.reason and e.value.reason.endswith("(3 attempts)")
    assert e.value.kind == "invalid" and json.loads(e.value.raw)["state"]
    prompt, completion, cached = e.value.usage
    assert prompt > 0 and completion > 0 and cached >= 2 * prompt // 3 - 3  # retries reuse the prompt
    records = []
    seeds.clear()
    assert Asker(backend, records.append, fallback=Idle()).ask("Isabella Rodriguez", task).state == "idle"
    assert records[-1].note.startswith("fallback to idle: ") and json.loads(records[-1].raw_answer)
    # asked by an agent, the question samples with its own seed (agent, task, tick 0), then anew
    first = question_seed(backend.seed, "Isabella Rodriguez", "object_state", 0)
    assert seeds == [first, first + 1, first + 2]
    assert records[-1].fallback == "invalid" and records[-1].completion_tokens > 0


class Idle:
    name = model = "idle"

    def answer(self, task: Task, prompt: str) -> Answer:
        return Answer(ObjectStateOut(state="idle"), '{"state": "idle"}')


def test_an_answer_stopped_by_its_token_limit_is_cut_off(model, tasks, monkeypatch):
    import smalltown.llm.llama as llama

    monkeypatch.setattr(llama, "max_answer_tokens", lambda task: 4)
    b = backend_for(model, retries=1)
    task = tasks["utterance"]
    with pytest.raises(UnusableAnswer) as e:
        retrying(b).answer(task, render(task))
    assert e.value.kind == "cut off" and e.value.reason.startswith("cut off at 4 tokens: not JSON")
    assert e.value.usage[1] == 8  # two attempts of 4 tokens


def test_a_failing_decode_is_failed_and_the_next_question_starts_clean(model, tasks):
    b = backend_for(model, retries=1)
    task = tasks["object_state"]

    def boom(*a, **kw):
        raise RuntimeError("llama_decode returned -3")

    create, b._llm.create_completion = b._llm.create_completion, boom
    with pytest.raises(UnusableAnswer, match="llama.cpp failed: llama_decode returned -3") as e:
        retrying(b).answer(task, render(task))
    assert e.value.kind == "failed" and e.value.usage == (0, 0, 0)
    b._llm.create_completion = create
    assert b.answer(task, render(task)).cached_tokens == 0  # (the state was dropped)


def test_max_tokens_is_the_answers_budget_or_the_room_left(model, backend, tasks):
    task = tasks["hourly_schedule"]
    prompt = render(task)
    b = backend_for(model, n_ctx=backend.count(prompt) + 300, retries=0)
    spy = Spy(b)
    room = 300
    assert room < max_answer_tokens(task)  # (2631 tokens: more than this window holds beside the prompt)
    with _anything():
        b.answer(task, prompt)
    assert spy.calls[-1]["max_tokens"] == room
    small = tasks["object_state"]
    with _anything():
        b.answer(small, render(small))
    assert spy.calls[-1]["max_tokens"] == max_answer_tokens(small)


class _anything:
    """A block whose UnusableAnswer is fine (random weights)."""

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        return kind is UnusableAnswer


def test_a_prompt_too_long_for_the_context_is_too_long_not_an_error(model, tasks):
    backend = backend_for(model, n_ctx=512)
    task = tasks["interview"].model_copy(update={"question": "What do you do all day? " * 40})
    with pytest.raises(UnusableAnswer, match="no room for an answer") as e:
        backend.answer(task, render(task))
    assert e.value.kind == "too long"
    records = []
    Asker(backend, records.append, fallback=ScriptedBackend(0)).ask("Klaus Mueller", task)
    assert records[-1].fallback == "too long" and records[-1].note.startswith("error: Klaus Mueller: the interview prompt is")


def test_the_asker_fits_a_prompt_to_its_budgets_and_the_window_by_exact_count(model, backend, tasks):
    memories = [r.model_copy(update={"id": i, "score": i / 10})
                for i, r in enumerate(tasks["reflection_questions"].statements * 3)]  # 27
    task = tasks["interview"].model_copy(update={"memories": memories})
    budgeted = n_budgeted = 0  # the tokens and memories the list's budget keeps (estimated, for every backend)
    for r in sorted(memories, key=lambda r: -r.score):
        if budgeted + estimate(record(r, task.now.date())) + 2 > task.budgets["memories"]:
            break
        budgeted += backend.count_tokens(record(r, task.now.date())) + 2
        n_budgeted += 1
    bare = task.model_copy(update={"memories": []})
    window = backend.count(render(bare)) + max_answer_tokens(task) + budgeted // 2  # room for half of them
    b = backend_for(model, n_ctx=window, retries=0)
    records = []
    Asker(b, records.append, fallback=ScriptedBackend(0)).ask("Klaus Mueller", task)
    rec = records[-1]
    assert "retrieved records dropped to fit" in rec.note and rec.fallback in ("", "invalid", "copied", "incoherent")
    kept = sum(rec.prompt.count(quote(t)) for t in MEMORIES)
    assert 0 < kept < n_budgeted < len(memories)  # cut to the list's budget, then to the window...
    assert b.count(rec.prompt) + max_answer_tokens(task) <= window == b.context  # ...within the window
    assert rec.prompt_tokens == b.count(rec.prompt)  # what llama.cpp read is what was counted


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
            backend.answer(task, render(task))
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

def test_a_question_reuses_the_longest_evaluated_prefix_across_agents_and_switches(model, tasks):
    """Prompts lead with the rules, then the task's instructions, then the agent's card: a
    question reuses what another agent's question of the same task evaluated (the instructions),
    and its own agent's earlier question of that task (the card too), saved across switches."""
    backend = backend_for(model)
    a1 = tasks["choose_place"]  # Klaus
    b = a1.model_copy(update={"persona": tasks["object_state"].persona})  # Isabella, the same question
    a3 = a1.model_copy(update={"activity": "meet his study group", "options": a1.options[::-1]})  # Klaus again
    c = tasks["rate_importance"].model_copy(update={"persona": KLAUS})  # Klaus, another task
    assert a1.persona.name == a3.persona.name == c.persona.name == "Klaus Mueller" != b.persona.name
    tok = {id(t): backend.prompt_tokens(render(t))[0] for t in (a1, b, a3, c)}
    rules_only = common_prefix(tok[id(a1)], tok[id(c)])
    instructions = common_prefix(tok[id(a1)], tok[id(b)])
    card = common_prefix(tok[id(a1)], tok[id(a3)])
    assert rules_only < instructions < card

    first = backend.answer(a1, render(a1))
    assert first.cached_tokens == 0  # a fresh context
    kv = list(backend._llm.input_ids[:backend._llm.n_tokens])  # a1's prompt and answer
    other = backend.answer(b, render(b))
    assert other.cached_tokens == common_prefix(kv, tok[id(b)]) >= instructions  # measured = what was shared
    again = backend.answer(a3, render(a3))
    assert again.cached_tokens >= card  # Klaus's state came back
    elsewhere = backend.answer(c, render(c))
    assert rules_only <= elsewhere.cached_tokens < instructions
    assert len(backend.states) == 2  # one saved state per agent and task (and Klaus's latest in the KV cache)

    # without room for saved states, the same sequence re-reads Klaus's card
    bare = backend_for(model, cache_bytes=0)
    for t in (a1, b):
        bare.answer(t, render(t))
    assert bare.answer(a3, render(a3)).cached_tokens < card <= again.cached_tokens

    # what was restored is what evaluating afresh gives: the same answer, greedily decoded
    greedy, fresh = backend_for(model, temperature=0), backend_for(model, temperature=0)
    for t in (a1, b):
        greedy.answer(t, render(t))
    restored = greedy.answer(a3, render(a3))
    assert restored.cached_tokens >= card and restored.raw == fresh.answer(a3, render(a3)).raw

    calls = [first, other, again, elsewhere]
    share = sum(x.cached_tokens for x in calls) / sum(x.prompt_tokens for x in calls)
    print(f"\ncached prompt tokens: {[x.cached_tokens for x in calls]} of {[x.prompt_tokens for x in calls]}"
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
    from smalltown.sim.open import create

    world = load_world(TINY)
    save = tmp_path / "t.sqlite"
    sim = create(world, save, backend_for(model, seed=world.seed))
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
