"""The distinct-copy curve (issue 24 item 8): ``workbench report``, ``frontier``, ``bills`` and ``calibrate`` end to
end, each in a fresh process, over K copies of ../shared/traces whose content differs (benchmarks/distinct_copies.py),
cold (an empty cache folder) and warm (the cache the cold run filled).

    python benchmarks/distinct_bench.py [--distinct 1,10,100] [--commands report,frontier,bills,calibrate]
                                        [--data /tmp/wb-distinct] [--parse] [--dask] [--old WORKTREE]
                                        [--pss-duty 0.02] [--leaves]

Per copies x command x cold/warm it prints wall seconds, CPU seconds (user + system of the child and its children)
and peak resident memory (the sum over every process the command started, from psutil sampled every 0.2 s when
psutil is installed, else the largest child's ``ru_maxrss``; beside it the summed proportional set size, which counts
a page that forked workers share once: what the command really holds, read as often as 2% of a core allows,
``--pss-duty``), the CPU the sampling took, the machine's 1-minute load average before and after, and the issue's
goal beside each figure. Then the 10 -> 100 ratio per command and phase (or between the two largest sizes given).

``--parse`` compares the workbench's reading of the largest copy folder, each in a fresh process — its parse alone
(``workbench.load(cache=False)``) and its cold load (an empty cache, filled) — to an orjson-only pass over the same
bytes (``orjson.loads`` of every JSON file and every JSONL line; the best of three), and to that pass plus the
cheapest builds of the same runs (the floor: an importer that did nothing else). ``--dask`` times a cold load
and the 100-grant sweep over the largest folder, then the warm ones, in one process, with the load's local pool and
on a Dask LocalCluster of 2 workers (when dask.distributed is installed). ``--old WORKTREE`` runs every measurement
also with ``PYTHONPATH=WORKTREE`` (another checkout, e.g. the commit before an optimisation) in the same invocation,
so the before/after ratio is measured under the same load. ``--leaves`` says what the report's leaves alone hold
in memory over the largest folder (their text, and the rest), against the 4 GB goal.

The issue's goals: the warm report over 100 distinct copies <= 300 s and <= 4 GB, cold <= 600 s; 10 -> 100 <= 11x;
parsing at least half as fast as an orjson-only pass; Dask with 2 workers beats one process on the 100x sweep.
Asserts nothing: it prints.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

COMMANDS = ("report", "frontier", "bills", "calibrate")


@dataclass(frozen=True)
class Figure:
    """One end-to-end command: wall and CPU seconds, peak resident memory summed over its processes (MB), the load
    average before and after, and its exit code."""

    wall: float
    cpu: float
    peak_mb: float
    load_before: float
    load_after: float
    rc: int
    pss_mb: float = 0.0
    """The peak of the processes' summed proportional set size (0: not measured)."""
    sampling_cpu: float = 0.0
    """The CPU seconds the memory sampling took (in this process, from the command's cores)."""
    pss_reads: int = 0
    """How many times PSS was read: ``wall / pss_reads`` is how briefly a peak could pass unread."""


def _argv(command: str, folder: Path, out: Path) -> list[str]:
    base = [sys.executable, "-m", "workbench", command, str(folder)]
    if command == "report":
        return [*base, "--out", str(out / "report")]
    if command == "calibrate":
        return [*base, "--json"]
    if command == "frontier":
        return [*base, "--json"]
    return base


PSS_DUTY = 0.02
"""The share of one core the PSS readings may take (``--pss-duty``). Reading a process's PSS walks its page tables
in the kernel (``smaps_rollup``), charged to this process: on the 100x report's 6 GB parent that is tens of
milliseconds a read, and read five times a second, with its workers, it took the cores the report was being timed
on (its warm wall went from 266-304 s unsampled to 336-337 s sampled, each run after the other on one cache). So
PSS is read only this often (the summed RSS, which costs microseconds, every 0.2 s): every 2-3 s at 100 copies,
where a briefer peak can be missed (the cold 100x report read 9.3 GB at every 0.2 s, 7.4 GB so). ``--pss-duty 1``
reads it every 0.2 s again, for a run that measures memory rather than time."""


def _sample_peak(
    pid: int,
    stop: threading.Event,
    peak: list[float],
    duty: float = PSS_DUTY,
    clock: Callable[[], float] = time.perf_counter,
) -> None:
    """The largest sums of resident memory (``peak[0]``, every 0.2 s) and of proportional set size (``peak[1]``:
    each page shared by forked workers counted once across them, the memory the command really holds; read after
    waiting ``1 / duty`` times longer than the last reading took) over ``pid`` and its descendants, and the CPU
    seconds the sampling itself took (``peak[2]``: what it took from the command's cores) and the PSS readings
    (``peak[3]``). ``clock``: the time the waits are measured on."""
    import psutil

    start = time.thread_time()
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    next_pss = 0.0
    while not stop.is_set():
        total = 0
        try:
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            break
        for p in procs:
            with contextlib.suppress(psutil.Error):
                total += p.memory_info().rss
        peak[0] = max(peak[0], total / 2**20)
        now = clock()
        if now >= next_pss:
            pss = 0
            for p in procs:
                with contextlib.suppress(psutil.Error):
                    pss += getattr(p.memory_full_info(), "pss", 0)  # Linux has it; elsewhere 0: not measured
            peak[1] = max(peak[1], pss / 2**20)
            peak[3] += 1
            next_pss = now + (clock() - now) / duty
        peak[2] = time.thread_time() - start
        stop.wait(0.2)


def run_command(argv: list[str], env: dict[str, str], cwd: Path = ROOT, pss_duty: float = PSS_DUTY) -> Figure:
    """``argv`` in a fresh process started in ``cwd``: wall, CPU (from ``RUSAGE_CHILDREN`` deltas: this process
    waits for one child at a time) and peak memory. ``python -m`` puts its working folder first on ``sys.path``,
    ahead of ``PYTHONPATH``: a checkout is measured only when the command starts in it."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()[0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    peak = [0.0, 0.0, 0.0, 0.0]
    stop = threading.Event()
    sampler: threading.Thread | None = None
    try:
        import psutil  # noqa: F401

        sampler = threading.Thread(target=_sample_peak, args=(proc.pid, stop, peak, pss_duty), daemon=True)
        sampler.start()
    except ImportError:
        pass
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    stop.set()
    if sampler is not None:
        sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # ru_maxrss of RUSAGE_CHILDREN is the largest single descendant's peak (KB): a floor for the sum
    peak_mb = max(peak[0], after.ru_maxrss / 1024)
    if proc.returncode not in (0, 1):  # 1: a file was reported (the copies' results files are not runs)
        print(f"      ! {' '.join(argv[2:4])} exited {proc.returncode}: {err.decode()[-300:].strip()}")
    return Figure(
        wall, cpu, peak_mb, load_before, os.getloadavg()[0], proc.returncode, peak[1], peak[2], int(peak[3])
    )


GOALS = {("report", "warm"): "goal <= 300 s, <= 4 GB at 100", ("report", "cold"): "goal <= 600 s at 100"}


def _every(f: Figure) -> str:
    """How often PSS was read: a peak briefer than that may have passed unread (``PSS_DUTY``)."""
    return f" read every {f.wall / f.pss_reads:.1f} s" if f.pss_reads else ""


def _fmt(f: Figure) -> str:
    return (
        f"wall {f.wall:8.1f} s  cpu {f.cpu:8.1f} s  peak {f.peak_mb:7,.0f} MB (PSS {f.pss_mb:7,.0f} MB{_every(f)}, "
        f"sampling {f.sampling_cpu:.1f} cpu-s)  load {f.load_before:4.1f}->{f.load_after:4.1f}  rc {f.rc}"
    )


def measure(
    folder: Path, command: str, code: Path, data: Path, pss_duty: float = PSS_DUTY
) -> dict[str, Figure]:
    """Cold (an empty cache folder) then warm (the same, now filled) for one command over one folder."""
    cache = data / f"cache-{code.name}-{folder.name}-{command}"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(code), "MPLBACKEND": "Agg"}
    out: dict[str, Figure] = {}
    for phase in ("cold", "warm"):
        tmp = Path(tempfile.mkdtemp(prefix="distinct-bench-"))
        try:
            out[phase] = run_command(_argv(command, folder, tmp), env, cwd=code, pss_duty=pss_duty)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return out


def parse_ratio(folder: Path, data: Path) -> None:
    """The workbench's reading of ``folder`` against an orjson-only pass over the same bytes (the best of three:
    the pass takes a second and moves by half on this shared machine): its parse alone (``load(cache=False)``:
    detection, the importers, the schema) and its cold load (the parse, plus each file's facts and cache entries
    written), each in a fresh process."""
    import orjson

    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in (".json", ".jsonl"))
    nbytes = sum(p.stat().st_size for p in files)
    bare = float("inf")
    for _ in range(3):
        t0 = time.perf_counter()
        for p in files:
            raw = p.read_bytes()
            if p.suffix == ".json":
                with contextlib.suppress(orjson.JSONDecodeError):
                    orjson.loads(raw)
                continue
            for line in raw.splitlines():
                if line.strip():
                    with contextlib.suppress(orjson.JSONDecodeError):
                        orjson.loads(line)
        bare = min(bare, time.perf_counter() - t0)
    cache = data / "cache-parse"
    mb = nbytes / 2**20
    print(f"  parse: {mb:,.0f} MB in {len(files):,} files; orjson-only {bare:.1f} s ({mb / bare:.0f} MB/s)")
    for what, flag in (("parse alone (no cache)", "False"), ("cold load (cache written)", "True")):
        shutil.rmtree(cache, ignore_errors=True)
        code = "import sys, time; from workbench.scale import load; t=time.perf_counter(); " \
            f"load(sys.argv[1], cache={flag}); print(time.perf_counter()-t)"  # fmt: skip
        env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, env=env
        )
        took = float(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else float("nan")
        print(
            f"    workbench {what} {took:.1f} s ({mb / took:.0f} MB/s): workbench/orjson speed {bare / took:.2f} "
            f"(goal >= 0.50) | load {os.getloadavg()[0]:.1f}"
        )
    shutil.rmtree(cache, ignore_errors=True)
    done = subprocess.run(
        [sys.executable, "-c", FLOOR_CODE, str(folder)], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    if done.returncode != 0:
        print(f"    the floor could not be measured: {done.stderr.strip().splitlines()[-1:]}")
        return
    validate, unpickle = map(float, done.stdout.split())
    for what, took in (("validated by pydantic from plain dicts, one call a run", validate),
                       ("unpickled from the cache's compact pickle", unpickle)):  # fmt: skip
        print(
            f"    floor: orjson-only + the same runs {what} ({took:.1f} s): orjson/that "
            f"{bare / (bare + took):.2f} (an importer that did nothing else; goal >= 0.50)"
        )


FLOOR_CODE = """
import gc, pickle, sys, time
from workbench.scale import load
from workbench.scale.pickling import dumps
from workbench.trace.schema import Run
runs = list(load(sys.argv[1], cache=False).runs)
plain, packed = [r.model_dump() for r in runs], [dumps(r) for r in runs]
del runs
best = [float("inf"), float("inf")]
for _ in range(3):
    for k, build in enumerate((lambda: [Run.model_validate(d) for d in plain],
                               lambda: [pickle.loads(b) for b in packed])):
        gc.collect(); gc.disable(); t = time.perf_counter(); built = build()
        best[k] = min(best[k], time.perf_counter() - t); del built; gc.enable()
print(*best)
"""
"""The floor of the parse ratio: the runs the parse made, built again the two cheapest ways this process has (no
format read, no rule applied), each the best of three with the collector paused: kinder than the parse it is set
against, which the library runs with the collector on (28% of its time over 10 copies: docs/scale.md)."""


DASK_CODE = """
import os, sys, time
from workbench.scale import load
from workbench.scale.executor import cores
from workbench.scale.sweep import sweep
folder, mode = sys.argv[1:3]
grid = {"grant": range(100_000, 300_000, 2_000)}
t = time.perf_counter()
client = None
if mode == "dask":
    from dask.distributed import Client, LocalCluster
    client = Client(LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None))
took = [time.perf_counter() - t]
workers = cores() if mode == "pool" else 1
for _ in ("cold", "warm"):
    t = time.perf_counter()
    corpus = load(folder, workers=workers, client=client)
    took.append(time.perf_counter() - t)
    t = time.perf_counter()
    sweep(corpus, grid, workers=1, client=client, progress=False)
    took.append(time.perf_counter() - t)
print(" ".join(f"{x:.2f}" for x in took), os.getloadavg()[0])
"""
"""One mode of :func:`dask_vs_one` in a fresh process over an empty cache: the cluster's start, then the cold load,
its sweep, the warm load and its sweep (seconds), and the load average."""


def dask_vs_one(folder: Path, data: Path) -> None:
    """The real case for a cluster, a cold corpus: the load (parsing every file) and the 100-grant sweep, in one
    process, with the load's local pool (the CLI's default, one process per core) and on a LocalCluster of 2
    workers (``client=`` to both: the load parses a large corpus there, the sheet's sweep stays in this process),
    each from an empty cache; then the warm load and sweep alone."""
    took: dict[str, list[float]] = {}
    for mode in ("one", "pool", "dask"):
        cache = data / f"cache-dask-{mode}"
        shutil.rmtree(cache, ignore_errors=True)
        env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", DASK_CODE, str(folder), mode], capture_output=True, text=True, env=env
        )
        shutil.rmtree(cache, ignore_errors=True)
        if done.returncode != 0:
            print(f"  {mode}: failed: {done.stderr.strip()[-300:]}")
            continue
        *secs, load = map(float, done.stdout.split()[-6:])
        took[mode] = secs
        start, cold_load, cold_sweep, warm_load, warm_sweep = secs
        print(
            f"  {folder.name} {mode:>4}: start {start:5.1f} s  cold load {cold_load:6.1f} + sweep {cold_sweep:5.1f} s"
            f"  warm load {warm_load:5.1f} + sweep {warm_sweep:5.1f} s | load {load:.1f}",
            flush=True,
        )
    one = took.get("one")
    for mode in ("pool", "dask"):
        if one and mode in took:
            other = took[mode]
            cold = (one[1] + one[2]) / (other[1] + other[2])
            print(
                f"  one process / {mode}{' (goal > 1)' if mode == 'dask' else ''}: cold load + sweep {cold:.2f} "
                f"(with the cluster's start {(one[1] + one[2]) / (other[0] + other[1] + other[2]):.2f}), "
                f"warm sweep {one[4] / other[4]:.2f}, warm load + sweep {(one[3] + one[4]) / (other[3] + other[4]):.2f}"
            )


LEAVES_CODE = """
import sys
from pydantic import BaseModel
from workbench.report.context import report_leaves
from workbench.scale import load
corpus = load(sys.argv[1])
leaves, _ = report_leaves(corpus)
seen, text, wide, objects = set(), 0, 0, 0
stack = list(leaves)
while stack:  # every object reachable from the leaves, once: its strings by width, the rest by size
    o = stack.pop()
    if id(o) in seen:
        continue
    seen.add(id(o))
    size = sys.getsizeof(o)
    if type(o) is str:
        text += size
        if not o.isascii():  # a compact str of 1, 2 or 4 bytes a character: what it holds past one a character
            wide += size - (sys.getsizeof(o.encode("latin-1", "replace").decode("latin-1")))
        continue
    objects += size
    if isinstance(o, BaseModel):
        objects += sys.getsizeof(o.__dict__)
        stack.extend([*o.__dict__.values(), o.__pydantic_fields_set__])
    elif isinstance(o, (list, tuple, set, frozenset)):
        stack.extend(o)
    elif isinstance(o, dict):
        stack.extend(o.values())
print(len(corpus.runs), len(leaves), text, wide, objects)
"""


def leaf_memory(folder: Path, data: Path) -> None:
    """What the report's leaves alone hold (``report_leaves`` over a warm cache, in a fresh process; every object
    reachable from them, once, by ``sys.getsizeof``): their text (every ``str``; ``wide``: what the strings with a
    character past Latin-1 hold beyond one byte a character, CPython's two or four for each) and their other
    objects, against the report's 4 GB goal."""
    cache = data / "cache-leaves"
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    fill = "import sys; from workbench.scale import load; load(sys.argv[1])"
    try:
        for code in (fill, LEAVES_CODE):
            done = subprocess.run(
                [sys.executable, "-c", code, str(folder)], capture_output=True, text=True, env=env
            )
            if done.returncode != 0:
                print(f"  leaves: failed: {done.stderr.strip()[-300:]}")
                return
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    runs, leaves, text, wide, objects = map(int, done.stdout.split()[-5:])
    mb = 1e6
    print(
        f"  leaves of {folder.name}: {runs:,} runs, {leaves:,} leaves hold {(text + objects) / mb:,.0f} MB "
        f"({(text + objects) / 4e9:.0%} of the report's 4 GB goal): text {text / mb:,.0f} MB (of it {wide / mb:,.0f} "
        f"MB for characters past Latin-1), other objects {objects / mb:,.0f} MB"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--distinct", default="1,10,100", help="comma list of copy counts")
    ap.add_argument("--commands", default=",".join(COMMANDS))
    ap.add_argument("--data", type=Path, default=Path("/tmp/wb-distinct"))
    ap.add_argument("--parse", action="store_true", help="also the parse vs orjson-only ratio")
    ap.add_argument(
        "--dask", action="store_true", help="also cold load + 100-grant sweep, one process vs Dask"
    )
    ap.add_argument(
        "--leaves",
        action="store_true",
        help="also what the report's leaves alone hold in memory (largest size)",
    )
    ap.add_argument("--old", type=Path, help="another checkout to measure beside this one, in the same run")
    ap.add_argument(
        "--pss-duty",
        type=float,
        default=PSS_DUTY,
        help="the share of a core the PSS readings may take (1: every 0.2 s, for a memory run)",
    )
    args = ap.parse_args()
    if not 0 < args.pss_duty <= 1:
        ap.error("--pss-duty must be in (0, 1]")

    from benchmarks.distinct_copies import write_copies
    from workbench.paths import shared_traces

    shared = shared_traces()
    if shared is None:
        raise SystemExit("../shared/traces is absent: nothing to copy")
    sizes = [int(k) for k in args.distinct.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    codes = [ROOT] + ([args.old.resolve()] if args.old else [])
    print(f"distinct copies of {shared}; {os.cpu_count()} cores; load average {os.getloadavg()}")
    for code in codes:  # which checkout each label measures, as its commands import it
        env = {**os.environ, "PYTHONPATH": str(code)}
        got = subprocess.run(
            [sys.executable, "-c", "import workbench; print(workbench.__file__)"],
            cwd=code,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        print(f"  {code.name}: {got}")
    figures: dict[tuple[str, int, str, str], Figure] = {}
    for k in sizes:
        folder = write_copies(shared, args.data, k)
        for command in commands:
            for code in codes:
                for phase, f in measure(folder, command, code, args.data, args.pss_duty).items():
                    figures[(code.name, k, command, phase)] = f
                    goal = GOALS.get((command, phase), "") if k == 100 else ""
                    print(f"  {code.name:>12} x{k:<4} {command:>9} {phase:4}  {_fmt(f)}  {goal}", flush=True)
    if len(sizes) >= 2:
        a, b = (10, 100) if {10, 100} <= set(sizes) else sorted(sizes)[-2:]
        print(f"ratios x{a} -> x{b} (goal <= {11 * b / a / 10:.0f}x wall for 10 -> 100):")
        for code in codes:
            for command in commands:
                for phase in ("cold", "warm"):
                    fa, fb = (
                        figures.get((code.name, a, command, phase)),
                        figures.get((code.name, b, command, phase)),
                    )
                    if fa and fb:
                        print(
                            f"  {code.name:>12} {command:>9} {phase}: wall {fb.wall / fa.wall:5.1f}x  "
                            f"cpu {fb.cpu / fa.cpu:5.1f}x  peak {fb.peak_mb / fa.peak_mb:5.1f}x"
                        )
    if args.old:
        print("new / old (same invocation, same load):")
        for (name, k, command, phase), f in figures.items():
            old = figures.get((args.old.resolve().name, k, command, phase))
            if name == ROOT.name and old:
                print(
                    f"  x{k:<4} {command:>9} {phase}: wall {f.wall / old.wall:.2f}  cpu {f.cpu / old.cpu:.2f}"
                )
    largest = write_copies(shared, args.data, max(sizes))
    if args.parse:
        parse_ratio(largest, args.data)
    if args.dask:
        dask_vs_one(largest, args.data)
    if args.leaves:
        leaf_memory(largest, args.data)
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
