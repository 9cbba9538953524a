"""A killed process takes its llama_cpp.server with it (cli/llama_server.py `dies_with_parent`,
Linux's PR_SET_PDEATHSIG): a parent process starts a real server on SmolLM2, the way the tests
(tests/realmodel.py `start_server`) and `eval matrix` (`llama_server`) start theirs, is killed with
SIGKILL (no `finally` runs), and the server is gone: its process ends and its port stops answering."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from helpers import ROOT
from realmodel import smollm2_gguf

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")

PARENTS = {
    "tests": """
from pathlib import Path
from realmodel import start_server
url, proc = start_server(Path(MODEL), Path(LOG), 512, extra=("--n_threads", "1"))
print(json.dumps({"url": url, "pid": proc.pid}), flush=True)
time.sleep(600)
""",
    "eval matrix": """
from types import SimpleNamespace
from smalltown.cli.llama_server import llama_server
opts = SimpleNamespace(model=MODEL, ctx=512, gpu_layers=0, threads=1)
with llama_server(opts, lambda s: None) as (url, alias):
    port = url.split(":")[2].split("/")[0]
    pid = next(int(p) for p in os.listdir("/proc") if p.isdigit() and _cmd(p).count(port) and "llama_cpp.server" in _cmd(p))
    print(json.dumps({"url": url, "pid": pid}), flush=True)
    time.sleep(600)
""",
}
HEAD = """
import json, os, sys, time
def _cmd(p):
    try:
        return open(f"/proc/{p}/cmdline", "rb").read().decode(errors="replace").replace("\\0", " ")
    except OSError:
        return ""
"""


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it has died)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _answers(url: str) -> bool:
    try:
        urllib.request.urlopen(f"{url}/models", timeout=2).close()
        return True
    except OSError:
        return False


@pytest.mark.parametrize("how", list(PARENTS))
def test_a_killed_parent_takes_its_server_with_it(tmp_path: Path, how: str) -> None:
    model = smollm2_gguf()
    script = HEAD + f"MODEL, LOG = {str(model)!r}, {str(tmp_path / 'server.log')!r}\n" + PARENTS[how]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=ROOT, env=env, text=True)
    server = None
    try:
        ready, _, _ = select.select([parent.stdout], [], [], 300)
        line = parent.stdout.readline() if ready else ""
        assert line, f"the parent did not start a server: {parent.poll()} {parent.stderr.read() if parent.poll() is not None else ''}"
        started = json.loads(line)
        server, url = started["pid"], started["url"]
        assert _alive(server) and _answers(url)
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 30
        while (_alive(server) or _answers(url)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(server), "the server outlived its killed parent"
        assert not _answers(url)
    finally:
        if parent.poll() is None:
            parent.kill()
            parent.wait(10)
        if server is not None and _alive(server):
            os.kill(server, signal.SIGKILL)  # (the test failed: leave nothing behind)
