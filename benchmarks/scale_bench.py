"""The scale curve: load time (cold and from the cache), peak memory, a 100-grant sweep and the report, at 1k, 10k
and 100k synthetic runs, and the report over copies of ../shared/traces — with the ratios between sizes.

    python benchmarks/scale_bench.py [--sizes 1000,10000,100000] [--copies 1,10,100] [--report-max 10000]
                                     [--data DIR] [--startup]

Each measurement runs in a fresh interpreter (peak memory is that process's maximum resident set, from
``getrusage``). Synthetic corpora (``workbench.scenarios.seed.mixed_corpus``, up to 60 turns a run) are written
once as native traces under ``--data`` (default /tmp/workbench-scale) and reused; copies of ../shared/traces are
made there too. Per size it prints:

* load, cold: ``workbench.load`` with an empty cache (parsing every file, filling the cache and the index), and
  that process's peak memory;
* load, warm: the same folder again, in a fresh process (the index and cache), and its peak memory after loading
  (the corpus in memory);
* sweep: 100 grants over every run, in this process (``workbench.replay.sweep``);
* report: ``build_report`` with the default configuration (grant band, survival, context heat map, estimator
  study) — skipped above ``--report-max`` runs and said so;
* for the copies, also ``workbench report FOLDER --out DIR`` end to end in a fresh process, with the cache filled
  and with an empty cache (load, report, charts and files: what a user waits for).

The issue's goals: 100k runs load in <= 60 s within 4 GB; a 100-grant sweep over them <= 60 s; the report over
100x copies of ../shared/traces <= 120 s with 10x -> 100x <= 12x; ``workbench --help`` <= 0.15 s (``--startup``).
Wall seconds on a shared machine: the load average is printed with every figure. Asserts nothing.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _child(phase: str, folder: Path, report: bool, cache: Path) -> dict[str, float | None]:
    """One measurement in this (fresh) interpreter: ``cold`` loads with an empty cache (parsing every file, filling
    the cache and the index); ``warm`` loads the folder again, then sweeps and reports — so its peak memory is
    the loaded corpus's, not the cold load's."""
    import resource
    from datetime import UTC, datetime

    os.environ["WORKBENCH_CACHE_DIR"] = str(cache)
    from workbench.scale import load
    from workbench.scale.sweep import sweep

    out: dict[str, float | None] = {"load_avg": os.getloadavg()[0]}
    t0 = time.perf_counter()
    corpus = load(folder)
    out["load"] = time.perf_counter() - t0
    out["runs"] = len(corpus.runs)
    # counted from the index's sheet where there is one: summing over corpus.runs would build every Run
    sheet = corpus.sheet
    out["turns"] = int(sheet.n.sum()) if sheet is not None else sum(len(r.turns) for r in corpus.runs)
    out["peak_mb_after_load"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if phase == "cold":
        return out
    t0 = time.perf_counter()
    rows = sweep(corpus, {"grant": range(100_000, 100_000 + 100 * 2_000, 2_000)}, workers=1, progress=False)
    out["sweep_100"] = time.perf_counter() - t0
    out["sweep_rows"] = len(rows)
    del rows
    out["report"] = None
    if report:
        from workbench.report import build_report

        t0 = time.perf_counter()
        build_report(corpus=corpus, now=datetime(2026, 1, 1, tzinfo=UTC))
        out["report"] = time.perf_counter() - t0
    out["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return out


def _synthetic(data: Path, n: int) -> Path:
    folder = data / f"synthetic-{n}"
    if (folder / ".complete").exists():
        return folder
    from workbench.scenarios.seed import mixed_run
    from workbench.trace.native import write_run

    shutil.rmtree(folder, ignore_errors=True)
    t0 = time.perf_counter()
    for i in range(n):  # one run at a time: the generator never holds the corpus
        sub = folder / f"{i // 1000:04d}"
        sub.mkdir(parents=True, exist_ok=True)
        write_run(mixed_run(i, max_turns=60), sub / f"{i:06d}.jsonl")
    (folder / ".complete").write_text("")
    print(f"   (wrote {n:,} synthetic runs to {folder} in {time.perf_counter() - t0:.0f} s, once)")
    return folder


def _copies(data: Path, k: int) -> Path | None:
    from workbench.paths import shared_traces

    shared = shared_traces()
    if shared is None:
        return None
    folder = data / f"shared-x{k}"
    if (folder / ".complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    for i in range(k):
        shutil.copytree(shared, folder / f"copy{i:03d}")
    (folder / ".complete").write_text("")
    return folder


def _run(phase: str, folder: Path, report: bool, cache: Path) -> dict[str, float | None]:
    code = (
        "import json, sys; sys.path.insert(0, sys.argv[1]); from benchmarks.scale_bench import _child; "
        "from pathlib import Path; "
        "print(json.dumps(_child(sys.argv[2], Path(sys.argv[3]), sys.argv[4] == '1', Path(sys.argv[5]))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(ROOT), phase, str(folder), "1" if report else "0", str(cache)],
        capture_output=True,
        text=True,
        env={**os.environ, "MPLBACKEND": "Agg"},
        cwd=ROOT,
    )
    if done.returncode:
        raise SystemExit(done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _cli_report(folder: Path, cache: Path) -> float:
    """``workbench report FOLDER --out DIR`` end to end, in a fresh process: what a user waits for (load, report,
    charts and files written)."""
    out = Path(tempfile.mkdtemp(prefix="scale-report-"))
    env = {**os.environ, "WORKBENCH_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "report", str(folder), "--out", str(out / "report")],
        capture_output=True,
        text=True,
        env=env,
    )
    took = time.perf_counter() - t0
    shutil.rmtree(out, ignore_errors=True)
    if done.returncode not in (0, 1):  # 1: some file was reported (the copies' results files are not runs)
        raise SystemExit(f"workbench report failed: {done.stderr.strip()[-400:]}")
    return took


def _measure(
    kind: str, folder: Path, n: int, report: bool, data: Path, cli: bool = False
) -> dict[str, float | None]:
    cache = data / f"cache-{kind}-{n}"
    shutil.rmtree(cache, ignore_errors=True)  # cold means cold
    cold = _run("cold", folder, False, cache)
    warm = _run("warm", folder, report, cache)
    out: dict[str, float | None] = {
        **warm,
        "load_cold": cold["load"],
        "load_warm": warm["load"],
        "peak_mb_cold": cold["peak_mb_after_load"],
        "cli_cold": None,
        "cli_warm": None,
    }
    if cli:
        out["cli_warm"] = _cli_report(folder, cache)
        fresh = data / f"cache-{kind}-{n}-cli"
        shutil.rmtree(fresh, ignore_errors=True)
        out["cli_cold"] = _cli_report(folder, fresh)
        shutil.rmtree(fresh, ignore_errors=True)
    return out


def _line(label: str, f: dict[str, float | None]) -> str:
    rep = "skipped" if f["report"] is None else f"{f['report']:.1f} s"
    return (
        f"{label:>18}: {int(f['runs'] or 0):>7,} runs {int(f['turns'] or 0):>9,} turns | load cold "
        f"{f['load_cold']:6.1f} s (peak {f['peak_mb_cold']:6,.0f} MB), warm {f['load_warm']:6.1f} s (peak "
        f"{f['peak_mb_after_load']:6,.0f} MB) | 100-grant sweep {f['sweep_100']:6.1f} s | report {rep} "
        f"(whole job peak {f['peak_mb']:6,.0f} MB) | load avg {f['load_avg']:.1f}"
        + (
            f" | `workbench report` end to end: {f['cli_cold']:.1f} s with an empty cache, {f['cli_warm']:.1f} s "
            "with the cache filled"
            if f.get("cli_cold") is not None
            else ""
        )
    )


def _ratios(label: str, figures: list[tuple[int, dict[str, float | None]]]) -> None:
    for (a, fa), (b, fb) in itertools.pairwise(figures):
        parts = []
        for key in (
            "load_cold", "load_warm", "peak_mb_cold", "peak_mb_after_load", "sweep_100", "report", "cli_cold",
            "cli_warm",
        ):  # fmt: skip
            if fa[key] and fb[key]:
                parts.append(f"{key} {fb[key] / fa[key]:.1f}x")  # type: ignore[operator]
        print(f"   {label} {a:,} -> {b:,} ({b / a:.0f}x the data): " + ", ".join(parts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--copies", default="1,10,100", help="copies of ../shared/traces ('' for none)")
    parser.add_argument(
        "--report-max", type=int, default=10_000, help="largest synthetic corpus to report on"
    )
    parser.add_argument("--data", type=Path, default=Path("/tmp/workbench-scale"))
    parser.add_argument("--startup", action="store_true", help="also time `workbench --help`")
    args = parser.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    print(
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} (wall seconds; the machine is shared)"
    )
    if args.startup:
        from benchmarks.startup_bench import measure

        figures = measure(7)
        print(
            f"workbench --help: {figures['workbench --help']:.3f} s (bare interpreter "
            f"{figures['python -c pass']:.3f} s; goal <= 0.150 s)"
        )
    synthetic: list[tuple[int, dict[str, float | None]]] = []
    for n in [int(x) for x in args.sizes.split(",") if x]:
        folder = _synthetic(args.data, n)
        f = _measure("synthetic", folder, n, n <= args.report_max, args.data)
        synthetic.append((n, f))
        print(_line(f"synthetic {n:,}", f), flush=True)
    _ratios("synthetic", synthetic)
    copies: list[tuple[int, dict[str, float | None]]] = []
    for k in [int(x) for x in args.copies.split(",") if x]:
        folder = _copies(args.data, k)
        if folder is None:
            print("../shared/traces is absent: copies skipped")
            break
        f = _measure("shared", folder, k, True, args.data, cli=True)
        copies.append((k, f))
        print(_line(f"shared x{k}", f), flush=True)
    _ratios("copies of ../shared/traces", copies)
    return 0


if __name__ == "__main__":
    sys.exit(main())
