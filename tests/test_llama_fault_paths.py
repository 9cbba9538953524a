"""The CPU paths llama.cpp takes (llm/llama_model.py): weight repacking ("extra buffer types")
kept off where AMX is present (llama.cpp's AMX kernel crashes the process on some models and
CPUs), forced either way by --repack, and said by `smalltown models`.

This machine's llama.cpp is the one tested: whether the choice reaches llama.cpp is read from the
buffer types it loads a Q4_0 model's weights into (REPACK, where the build has it)."""

from __future__ import annotations

from pathlib import Path

import gguf
import pytest
from gguf import quants

from helpers import cli
from smalltown.llm.llama_model import CpuPaths, cpu_features, cpu_paths, cpu_reports_amx, load_model
from tinymodel import build_tiny_gguf

# llama_print_system_info() of a llama.cpp built on a Sapphire Rapids Xeon (AMX), then a GPU's section
AMX_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
            "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
            "REPACK = 1 | CUDA : ARCHS = 890 | USE_GRAPHS = 1 | ")


def test_the_cpu_section_of_llama_cpp_s_system_info_is_read() -> None:
    features = cpu_features(AMX_INFO)
    assert features[:4] == ("SSE3", "SSSE3", "AVX", "AVX2")
    assert "AMX_INT8" in features and "REPACK" in features
    assert "ARCHS" not in features and "USE_GRAPHS" not in features  # the GPU's section is not the CPU's
    assert cpu_features("CPU : SSE3 = 1 | AVX = 0 | ") == ("SSE3",)


def test_the_cpu_s_own_amx_flags_are_read() -> None:
    assert cpu_reports_amx("processor : 0\nflags : fpu sse avx512f amx_bf16 amx_tile amx_int8\n") is True
    assert cpu_reports_amx("processor : 0\nflags : fpu sse avx2 avx512f avx512_vnni\n") is False
    assert cpu_reports_amx("processor : 0\nFeatures : fp asimd\n") is None  # (an ARM machine: no flags line)


@pytest.mark.parametrize("repack, cpu, extra, says", [
    ("auto", True, False, "present, kept off"),
    ("auto", False, True, "absent (the CPU does not report it)"),
    ("auto", None, False, "present, kept off"),  # cannot tell: the safe side
    ("on", True, True, "on (forced by --repack on"),
    ("off", False, False, "absent"),
])
def test_repacking_is_kept_off_where_amx_is_present_unless_forced(repack, cpu, extra, says) -> None:
    paths = CpuPaths(cpu_features(AMX_INFO), amx_built=True, amx_cpu=cpu, repack=repack)
    assert paths.extra_bufts is extra
    lines = dict(paths.describe())
    assert lines["AMX"].startswith(says)
    assert lines["weight repacking"].startswith("on" if extra else "off")
    assert "AVX512_VNNI" in lines["CPU features"] and "REPACK" not in lines["CPU features"]


def test_a_build_without_amx_keeps_repacking_on() -> None:
    paths = CpuPaths(("AVX2", "REPACK"), amx_built=False, amx_cpu=True)
    assert paths.extra_bufts and dict(paths.describe())["AMX"] == "absent (not in this llama.cpp build)"


@pytest.fixture(scope="module")
def tiny_q4_0(tmp_path_factory) -> Path:
    """The tests' tiny model with its layers' matrices in Q4_0, a type llama.cpp repacks."""
    original = gguf.GGUFWriter.add_tensor

    def add(self, name, tensor, raw_shape=None, raw_dtype=None, **kw):
        if name.startswith("blk.") and tensor.ndim == 2:
            q4 = gguf.GGMLQuantizationType.Q4_0
            return original(self, name, quants.quantize(tensor, q4), raw_dtype=q4)
        return original(self, name, tensor, raw_shape=raw_shape, raw_dtype=raw_dtype, **kw)

    gguf.GGUFWriter.add_tensor = add
    try:
        return build_tiny_gguf(tmp_path_factory.mktemp("q4") / "tiny-q4_0.gguf")
    finally:
        gguf.GGUFWriter.add_tensor = original


def test_the_choice_reaches_llama_cpp(tiny_q4_0: Path) -> None:
    if "REPACK" not in cpu_paths().features:
        pytest.skip("this llama.cpp build repacks no weights (no REPACK)")
    on = load_model(tiny_q4_0, "on", n_ctx=256, n_threads=1)
    off = load_model(tiny_q4_0, "off", n_ctx=256, n_threads=1)
    try:
        assert on.model_params.use_extra_bufts and not off.model_params.use_extra_bufts
        assert "CPU_REPACK" in on.buffers and "CPU_REPACK" not in off.buffers
        assert off.buffers  # (the weights went somewhere: the plain CPU buffer)
        text = off("hello", max_tokens=4, seed=1)["choices"][0]["text"]
        assert text == on("hello", max_tokens=4, seed=1)["choices"][0]["text"]  # the same model either way
    finally:
        on.close()
        off.close()


def test_auto_on_this_machine_follows_its_amx() -> None:
    paths = cpu_paths()
    assert paths.extra_bufts is not paths.amx
    assert paths.amx == ("AMX_INT8" in paths.features and cpu_reports_amx() is not False)


def test_smalltown_models_says_which_cpu_paths_llama_cpp_takes() -> None:
    out = cli("models", check=True).stdout
    paths = dict(cpu_paths().describe())
    assert "llama.cpp on this machine (--repack auto|on|off changes it for a command):" in out
    for what, how in paths.items():
        assert f"  {what + ':':18} {how}" in out
    assert "CPU features:" in out and "AVX" in paths["CPU features"]


def test_repack_is_a_flag_of_the_commands_that_run_agents() -> None:
    assert "--repack [auto|on|off]" in cli("run", "--help").stdout
    bad = cli("run", "--repack", "maybe")
    assert bad.returncode == 2 and "'maybe' is not one of 'auto', 'on', 'off'" in bad.stderr
