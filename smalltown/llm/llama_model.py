"""The llama.cpp model file and the machine it runs on: a GGUF refused before llama.cpp sees it,
loaded with llama.cpp's own reason when it fails, and the thread count (one per physical core).
Shared by the chat backend (llm/llama.py) and the embedder (llm/embed_llama.py)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import threading
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


def load_model(path: Path, **params):
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
