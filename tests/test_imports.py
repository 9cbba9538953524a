"""The import graph (tests/import_graph.py): layers import only downward, and the
command line's modules do not import each other in a loop (DESIGN.md, "Layers")."""

from __future__ import annotations

from import_graph import cycles, graph


# Top to bottom; a package may import only packages on a lower rank. Packages on one rank are
# peers that must not import each other. (To tighten: split a rank; a package not listed is free.)
LAYERS: list[set[str]] = [
    {"cli"},  # it opens the TUI and runs the measures
    {"tui", "eval"},
    {"sim"},
    {"mind", "scripted"},
    {"state"},  # what an agent carries between ticks, as data: the front ends and eval read saves with it
    {"llm"},
    {"world", "store"},
]

# Upward imports still there, each to be removed by the change that moves it; the test fails on
# any other (and on one of these once it is gone: delete it here then).
KNOWN: set[str] = set()


def layer_of(module: str) -> int | None:
    top = module.split(".")[1] if module.count(".") else ""
    return next((i for i, layer in enumerate(LAYERS) if top in layer), None)


def upward(g: dict[str, set[str]]) -> list[str]:
    """Imports from a package to one on its own rank (another package) or a higher one."""
    bad = []
    for m, targets in g.items():
        mine = layer_of(m)
        for t in targets:
            theirs = layer_of(t)
            if mine is None or theirs is None or m.split(".")[1] == t.split(".")[1]:
                continue
            if theirs <= mine:
                bad.append(f"{m} -> {t}")
    return sorted(bad)


def test_llm_imports_no_layer_above_it():
    g = graph()
    above = ("smalltown.scripted", "smalltown.sim", "smalltown.mind", "smalltown.tui", "smalltown.cli",
             "smalltown.eval")
    bad = [f"{m} -> {t}" for m, ts in g.items() if m.startswith("smalltown.llm") for t in ts
           if t.startswith(above)]
    assert bad == []


def test_imports_point_downward_between_layers():
    assert upward(graph()) == sorted(KNOWN)


def test_no_import_loop_among_the_command_line_modules():
    assert cycles(graph(), "smalltown.cli") == []


def test_no_import_loop_among_the_simulations_modules():
    """sim/open.py builds a Simulation; the engine imports neither the opener nor the commands
    that call it (not even inside a function)."""
    assert cycles(graph(), "smalltown.sim") == []


def test_the_checks_see_an_upward_import_and_a_loop():
    """The checks themselves: a made-up graph with an upward arrow and a loop is caught."""
    g = {"smalltown.llm.a": {"smalltown.scripted.b"}, "smalltown.scripted.b": set(),
         "smalltown.cli.x": {"smalltown.cli.y"}, "smalltown.cli.y": {"smalltown.cli.x"}}
    assert upward(g) == ["smalltown.llm.a -> smalltown.scripted.b"]
    assert cycles(g, "smalltown.cli") == [["smalltown.cli.x", "smalltown.cli.y"]]


def reaching(g: dict[str, set[str]], sources: tuple[str, ...], targets: tuple[str, ...]) -> list[str]:
    """Imports from a module under one of `sources` to one under one of `targets`."""
    under = lambda m, pkgs: any(m == f"smalltown.{p}" or m.startswith(f"smalltown.{p}.") for p in pkgs)  # noqa: E731
    return sorted(f"{m} -> {t}" for m, ts in g.items() if under(m, sources) for t in ts if under(t, targets))


def test_no_front_end_imports_the_mind():
    """The command line and the TUI read an agent's state from state/ (a save's, or the run's
    through sim/), never from the mind's modules."""
    assert reaching(graph(), ("cli", "tui"), ("mind",)) == []


def test_no_measure_imports_the_mind_or_the_engine():
    """eval/ reads saves (through store/ and state/); a measure that needs the run to act is
    handed it (eval/interview.py `Subjects`)."""
    assert reaching(graph(), ("eval",), ("mind", "sim")) == []


def test_the_front_end_and_measure_checks_see_an_import_added_back():
    g = {"smalltown.tui.screens.inspector": {"smalltown.mind.state", "smalltown.state.agent"},
         "smalltown.cli.agents": {"smalltown.mind"}, "smalltown.eval.interview": {"smalltown.sim.simulation"},
         "smalltown.eval.behaviour": {"smalltown.mind.plan"}, "smalltown.eval.town": {"smalltown.store.reader"},
         "smalltown.sim.look": {"smalltown.mind.places"}, "smalltown.state.agent": {"smalltown.llm.tasks"}}
    assert reaching(g, ("cli", "tui"), ("mind",)) == ["smalltown.cli.agents -> smalltown.mind",
                                                     "smalltown.tui.screens.inspector -> smalltown.mind.state"]
    assert reaching(g, ("eval",), ("mind", "sim")) == ["smalltown.eval.behaviour -> smalltown.mind.plan",
                                                      "smalltown.eval.interview -> smalltown.sim.simulation"]
    assert ["smalltown.state.agent -> smalltown.mind.x"] == upward({"smalltown.state.agent": {"smalltown.mind.x"},
                                                                    "smalltown.mind.x": set()})


# the modules of a concrete backend: the stand-in, llama.cpp, an OpenAI-compatible server, a cassette,
# a GGUF embedder (a backend is chosen above the engine, from the command line's registry)
CONCRETE_BACKENDS = ("smalltown.scripted", "smalltown.llm.llama", "smalltown.llm.openai_compat",
                     "smalltown.llm.endpoints", "smalltown.llm.structured", "smalltown.llm.watched",
                     "smalltown.llm.streamed", "smalltown.llm.cassette", "smalltown.llm.embed_llama")


def concrete_backends_imported(g: dict[str, set[str]], within: str) -> list[str]:
    return sorted(f"{m} -> {t}" for m, ts in g.items() if m == within or m.startswith(within + ".")
                  for t in ts if t.startswith(CONCRETE_BACKENDS))


def test_the_engine_imports_no_concrete_backend():
    """sim/ is handed a backend, an embedder and a fallback (sim/backends.py BackendChoice); it
    names none itself, not even inside a function."""
    assert concrete_backends_imported(graph(), "smalltown.sim") == []
    made_up = {"smalltown.sim.open": {"smalltown.llm.backend", "smalltown.llm.llama_model"},
               "smalltown.sim.x": {"smalltown.scripted"}}  # (the check itself catches one)
    assert concrete_backends_imported(made_up, "smalltown.sim") == [
        "smalltown.sim.open -> smalltown.llm.llama_model", "smalltown.sim.x -> smalltown.scripted"]


def test_no_import_loop_among_the_model_sides_modules():
    """The prompts' renderers are a table the renderer modules fill (llm/render_parts.py): no task
    imports the renderer, no renderer module imports llm/render.py (not even inside a function)."""
    assert cycles(graph(), "smalltown.llm") == []
