"""Import rate of each importer, in MB/s on one core.

Goal (issue 2): at least 20 MB/s for Claude Code. Run from the checkout root::

    python benchmarks/import_bench.py [--repeat N] [--format NAME ...]

Each format reads real recorded runs from ../shared/traces where they exist; the shapes with no real sample
there are built from the tests' own fixture writers, repeated to a few MB (marked "synthetic"). The process is
pinned to one CPU where the OS allows it; each input is imported ``--repeat`` times and the best pass is kept
(the least disturbed by other work on the machine). Prints the figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from workbench.importers import claude_code, openhands, openhands_conversation, openhands_trajectory
from workbench.paths import shared_traces
from workbench.trace.schema import Run

# name -> (inputs under the shared traces, or None; importer's load)
Inputs = Callable[[Path, Path], list[Path]]


def _real(pattern: str, *more: str) -> Inputs:
    def find(shared: Path, tmp: Path) -> list[Path]:
        return sorted(p for g in (pattern, *more) for p in shared.glob(g))

    return find


def _openhands_v1(shared: Path, tmp: Path) -> list[Path]:
    from tests.importers import openhands_shapes

    path = tmp / "v1-output.jsonl"
    with open(path, "w") as fh:
        for i in range(400):
            fh.write(json.dumps(openhands_shapes.v1_output_line(f"i{i}")) + "\n")
    return [path]


def _openhands_conversation(shared: Path, tmp: Path) -> list[Path]:
    from tests.importers import openhands_shapes

    events = []
    for k in range(150):  # the fixture's events, renamed so ids and response ids stay unique
        for e in openhands_shapes.v1_events()[1:]:
            text = json.dumps(e).replace('"r', f'"k{k}r').replace('"c', f'"k{k}c').replace('"e', f'"k{k}e')
            events.append(json.loads(text))
    return [openhands_shapes.write_conversation(tmp / "conv", events)]


def _openhands_trajectory(shared: Path, tmp: Path) -> list[Path]:
    from tests.importers import openhands_shapes

    events = []
    for k in range(300):  # response and call ids made unique per repetition, so each is its own call
        text = json.dumps(openhands_shapes.v0_trajectory()[1:] if k else openhands_shapes.v0_trajectory())
        events.extend(json.loads(text.replace("chatcmpl-", f"chatcmpl-{k}-").replace("call_", f"call_{k}_")))
    for i, e in enumerate(events):
        e["id"] = i
    path = tmp / "trajectory.json"
    path.write_text(json.dumps(events, indent=4))
    return [path]


FORMATS: dict[str, tuple[Inputs, Callable[[Path], list[Run]], bool]] = {
    "claude-code": (_real("claude-code/*.jsonl", "claude-code/*/subagents/*.jsonl"), claude_code.load, False),
    "openhands": (_real("openhands/*.jsonl"), openhands.load, False),
    "openhands-v1": (_openhands_v1, openhands.load, True),
    "openhands-conversation": (_openhands_conversation, openhands_conversation.load, True),
    "openhands-trajectory": (_openhands_trajectory, openhands_trajectory.load, True),
}


def size_of(path: Path) -> int:
    if path.is_dir():
        return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())
    return path.stat().st_size


def bench(
    name: str, files: list[Path], load: Callable[[Path], list[Run]], repeat: int, synthetic: bool
) -> None:
    size = sum(size_of(f) for f in files)
    passes = []
    calls = 0
    for _ in range(repeat):
        start = time.perf_counter()
        calls = sum(len(run.turns) for f in files for run in load(f))
        passes.append(time.perf_counter() - start)
    best = min(passes)
    kind = "synthetic" if synthetic else "real"
    print(
        f"{name:24} {kind:9} {len(files):4} inputs {size / 1e6:8.2f} MB {calls:7} calls "
        f"best {best:7.3f} s  {size / 1e6 / best:7.1f} MB/s"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--format", action="append", choices=sorted(FORMATS), help="only these formats")
    args = parser.parse_args()
    shared = shared_traces() or Path("missing")
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print("one core; best of", args.repeat, "passes (Claude Code goal: 20 MB/s)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.format or list(FORMATS):
            find, load, synthetic = FORMATS[name]
            files = find(shared, Path(tmp))
            if not files:
                print(f"{name:24} no inputs under {shared}")
                continue
            bench(name, files, load, args.repeat, synthetic)
    return 0


if __name__ == "__main__":
    sys.exit(main())
