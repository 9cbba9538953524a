"""One llama-cpp-python server (`python -m llama_cpp.server`, its `server` extra) on 127.0.0.1 at
a free port, serving a GGUF to several runs at once (`eval matrix`): the model is loaded once,
not once per run. Stopped (and waited for) when the block ends, whatever happened in it, and killed
by the kernel if this process is killed first (`dies_with_parent`, Linux)."""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from smalltown.llm.backend import BackendUnavailable

READY_SECONDS = 600.0  # a large model on a slow disk takes minutes to load
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def dies_with_parent() -> Callable[[], None] | None:
    """A `preexec_fn` that has the child killed (SIGKILL) when the process that started it dies,
    however it dies (a killed run or test would otherwise leave its server holding a model and a
    port): Linux's PR_SET_PDEATHSIG. Strictly it fires when the starting *thread* ends, so start the
    child from the thread that outlives its use. None where prctl is not there (the child outlives
    a killed parent, as before)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the child only calls it
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before the call took: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def llama_server(opts, say: Callable[[str], None]) -> Iterator[tuple[str, str]]:
    """(base URL, the model's name there) of a server serving `opts.model` (or the default model)
    with its window, threads and GPU layers."""
    from smalltown.llm.models import default_model

    model = opts.model or default_model()
    if model is None or not Path(model).is_file():
        raise BackendUnavailable(f"--backend llama needs a GGUF file (--model PATH.gguf): {model or 'none given'}")
    try:
        import llama_cpp.server  # noqa: F401 - only whether it is there
    except ImportError:
        raise BackendUnavailable("sharing one model among runs needs llama-cpp-python's server: "
                                 "pip install 'llama-cpp-python[server]'") from None
    alias, port = Path(model).stem, free_port()
    argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--model_alias", alias,
            "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(opts.ctx),
            "--n_gpu_layers", str(opts.gpu_layers)] + (["--n_threads", str(opts.threads)] if opts.threads else [])
    url = f"http://127.0.0.1:{port}/v1"
    with tempfile.TemporaryDirectory(prefix="smalltown-server-") as tmp:
        log = Path(tmp) / "server.log"
        with open(log, "wb") as out:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True,  # (stopped by us, not by the terminal's Ctrl-C)
                                    preexec_fn=dies_with_parent())  # (or by the kernel, if we are killed)
        try:
            say(f"starting llama_cpp.server for {alias} at {url}")
            _wait_ready(proc, url, log)
            yield url, alias
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _wait_ready(proc: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + READY_SECONDS
    while True:
        if proc.poll() is not None:
            tail = "\n".join(log.read_text(errors="replace").splitlines()[-10:])
            raise BackendUnavailable(f"llama_cpp.server exited ({proc.returncode}):\n{tail}")
        try:
            urllib.request.urlopen(f"{url}/models", timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise BackendUnavailable(f"llama_cpp.server did not answer at {url} in {READY_SECONDS:.0f} s") from None
            time.sleep(0.2)
