"""A writer killed at any point leaves a file readable up to its last complete turn."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.paths import REPO_ROOT
from workbench.trace import Message, Run, TraceError, TraceWriter, Turn, Usage, read_run

WRITER = """
import sys
from workbench.trace import Message, Run, TraceWriter, Turn, Usage
path = sys.argv[1]
with TraceWriter(path, Run(run_id="crash", source="synthetic")) as w:
    w.add_message(Message(role="user", content="start"))
    for i in range(1_000_000):
        m = w.add_message(Message(role="assistant", content="x" * (20_000 + 37 * i)))
        w.add_turn(Turn(index=i, usage=Usage(prompt=100 + i, completion=i), sent=[(0, m + 1)], text="t" * 5000))
        print(i, flush=True)
"""


def complete_turn_lines(path: Path) -> int:
    """Independent count: lines that parse as a turn record (a last line cut exactly before its newline is
    still a whole record; one cut anywhere else does not parse)."""
    n = 0
    for raw in path.read_bytes().split(b"\n"):
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        n += isinstance(rec, dict) and "turn" in rec
    return n


@pytest.mark.parametrize("seed", range(5))
def test_killed_writer_leaves_every_complete_turn(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / "trace.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, env=env)
    target = rng.randint(0, 40)
    reported = -1
    assert child.stdout is not None
    while reported < target:
        line = child.stdout.readline()
        assert line, "writer exited early"
        reported = int(line)
    time.sleep(rng.random() * 0.02)  # land the kill anywhere: between turns or mid-line
    child.send_signal(signal.SIGKILL)
    child.wait()
    run = read_run(path)
    assert [t.index for t in run.turns] == list(range(len(run.turns)))
    assert len(run.turns) >= reported + 1  # every turn the writer reported flushed is there
    assert len(run.turns) == complete_turn_lines(path)
    for t in run.turns:  # and every one can rebuild its request
        assert t.sent is not None
        assert len(run.request(t)) == t.index + 2
    assert all("truncated" in d.message or d.field == "message" for d in run.diagnostics)


def _trace(tmp: Path, turns: int) -> Path:
    path = tmp / "full.jsonl"
    with TraceWriter(path, Run(run_id="t", source="synthetic")) as w:
        w.add_message(Message(role="user", content="go"))
        for i in range(turns):
            m = w.add_message(Message(role="assistant", content=f"answer {i}"))
            w.add_turn(Turn(index=i, usage=Usage(prompt=10 * i, completion=i), sent=[(0, m + 1)]))
    return path


@settings(max_examples=80, deadline=None)
@given(turns=st.integers(0, 12), fraction=st.floats(0, 1))
def test_truncated_at_any_byte_reads_up_to_the_last_complete_turn(turns: int, fraction: float) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        full = _trace(Path(tmp), turns).read_bytes()
        cut = int(len(full) * fraction)
        path = Path(tmp) / "cut.jsonl"
        path.write_bytes(full[:cut])
        header_end = full.index(b"\n")
        if cut < header_end:  # the header line itself is cut short
            with pytest.raises(TraceError):
                read_run(path)
            return
        run = read_run(path)
        assert len(run.turns) == complete_turn_lines(path)
        assert all(t.sent is not None for t in run.turns)
        assert [t.usage.prompt for t in run.turns] == [10 * i for i in range(len(run.turns))]
