"""The llama.cpp model file and the machine it runs on: a GGUF refused before llama.cpp sees it,
loaded with llama.cpp's own reason when it fails, the thread count (one per physical core) and
the CPU paths llama.cpp takes (its features; weight repacking, kept off where AMX is: llama.cpp's
AMX matrix kernel crashes the process on some models and CPUs, upstream ggml-org/llama.cpp#20824).
Shared by the chat backend (llm/llama.py) and the embedder (llm/embed_llama.py)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from smalltown.llm.backend import BackendUnavailable, Stopped

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


REPACK_CHOICES = ("auto", "on", "off")


@dataclass(frozen=True)
class CpuPaths:
    """Which CPU paths llama.cpp takes. `repack` is the user's choice: on/off, or auto (on unless
    AMX is present). Repacking means llama.cpp's "extra buffer types": weights copied into a
    layout for a faster kernel (REPACK for AVX2/AVX512/NEON, AMX where the build and CPU have it)."""

    features: tuple[str, ...]  # as llama.cpp reports them: "AVX2", "AVX512", "REPACK", ...
    amx_built: bool  # this llama.cpp build has the AMX kernels (AMX_INT8)
    amx_cpu: bool | None  # the CPU reports AMX (None: it cannot be told, e.g. no /proc/cpuinfo)
    repack: str = "auto"

    @property
    def amx(self) -> bool:
        """AMX is present: built in, and the CPU has it (or cannot say it has not)."""
        return self.amx_built and self.amx_cpu is not False

    @property
    def extra_bufts(self) -> bool:
        """llama_model_params.use_extra_bufts: whether weights may be repacked (the AMX path
        is one of these buffer types, so off keeps the faulty kernel unreachable)."""
        return self.repack == "on" or (self.repack == "auto" and not self.amx)

    def describe(self) -> list[tuple[str, str]]:
        """(what, how) lines for `smalltown models` and the models screen."""
        shown = [f for f in self.features if f not in ("REPACK", "AMX_INT8")]
        repack = "on" if self.extra_bufts else "off"
        why = {"on": " (--repack on)", "off": " (--repack off)"}.get(self.repack, "")
        if self.repack == "auto":
            why = " (auto: kept off because AMX is present)" if self.amx else " (auto)"
        if not self.amx:
            amx = "absent" + (" (the CPU does not report it)" if self.amx_built else " (not in this llama.cpp build)")
        elif self.extra_bufts:
            amx = "on (forced by --repack on; llama.cpp's AMX kernel is known to crash on some models)"
        else:
            amx = ("present, kept off: llama.cpp's AMX kernel is known to crash on some models "
                   "(--repack on uses it)")
        return [("CPU features", ", ".join(shown) or "none reported"),
                ("weight repacking", repack + why), ("AMX", amx)]


def cpu_features(info: str) -> tuple[str, ...]:
    """The features `llama_print_system_info()` reports as present in its CPU section,
    e.g. "CPU : SSE3 = 1 | AVX2 = 1 | REPACK = 1 | " (other backends follow their own name)."""
    cpu = info.split("CPU :", 1)[-1] if "CPU :" in info else info
    cpu = re.split(r"\|\s*[A-Za-z][\w-]* :", cpu, maxsplit=1)[0]  # up to the next backend's section
    return tuple(name for name, value in re.findall(r"([A-Za-z0-9_]+) = (\S+)", cpu) if value not in ("0", ""))


def cpu_reports_amx(cpuinfo: str | None = None) -> bool | None:
    """Whether the CPU's flags include AMX (Linux); None when they cannot be read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return None
    flags = next((line.split(":", 1)[1].split() for line in cpuinfo.splitlines() if line.startswith("flags")), None)
    return None if flags is None else any(f.startswith("amx") for f in flags)


def cpu_paths(repack: str = "auto") -> CpuPaths:
    """The CPU paths of the installed llama.cpp on this machine, under the user's choice."""
    if repack not in REPACK_CHOICES:
        raise ModelError(f"repack must be one of {', '.join(REPACK_CHOICES)}, not {repack!r}")
    import llama_cpp

    features = cpu_features(llama_cpp.llama_print_system_info().decode("utf-8", "replace"))
    return CpuPaths(features, "AMX_INT8" in features, cpu_reports_amx(), repack)


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
def llama_log(buffers: list[str] | None = None) -> Iterator[list[str]]:
    """Collect llama.cpp's error lines instead of printing them (for an error message), and the
    buffer types the weights were loaded into (e.g. "CPU_Mapped", "CPU_REPACK", "AMX")."""
    import llama_cpp
    from llama_cpp import _logger

    lines: list[str] = []

    @llama_cpp.llama_log_callback
    def collect(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        line = text.decode("utf-8", "replace").strip()
        if level == 4:  # ggml's error level (llama-cpp-python's level table predates it)
            lines.append(line)
        elif buffers is not None and (m := re.match(r"load_tensors:\s+(\S+) model buffer size", line)):
            buffers.append(m.group(1))

    llama_cpp.llama_log_set(collect, ctypes.c_void_p(0))
    try:
        yield lines
    finally:
        llama_cpp.llama_log_set(_logger.llama_log_callback, ctypes.c_void_p(0))


def load_model(path: Path, repack: str = "auto", **params):
    """The model, or a ModelError saying why not (llama.cpp's own reason, if it gave one).
    `repack`: whether llama.cpp may repack the weights (see CpuPaths); the model keeps the
    decision as `cpu` and the buffer types its weights went into as `buffers`."""
    from llama_cpp import Llama

    paths = cpu_paths(repack)

    class CountingLlama(Llama):
        """Records how many tokens each `eval` call evaluates (to measure cached tokens), and
        stops between batches of a prompt and between sampled tokens once `stopping` is set."""

        # Llama.__init__ makes its model params and loads the model in one go: our choice is
        # applied as it assigns them, before the load reads them
        @property
        def model_params(self):
            return self._model_params

        @model_params.setter
        def model_params(self, value) -> None:
            value.use_extra_bufts = paths.extra_bufts
            self._model_params = value

        def eval(self, tokens):
            self.evaluated.append(len(tokens))
            for i in range(0, len(tokens), self.n_batch):  # as Llama.eval batches them, checked between
                if self.stopping.is_set():
                    raise Stopped
                super().eval(tokens[i:i + self.n_batch])

    buffers: list[str] = []
    with llama_log(buffers) as log:
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
    llm.cpu = paths
    llm.buffers = list(dict.fromkeys(buffers))
    return llm
