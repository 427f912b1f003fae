"""A recorder killed with SIGKILL at 20 random points leaves traces that load up to the last complete turn."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import random
import signal
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from workbench.govern import Policy
from workbench.loop.client import Completion
from workbench.loop.loop import LiveLoop
from workbench.loop.recorded import RecordedProvider, RecordedTools
from workbench.loop.recorder import Recorder
from workbench.scenarios.seed import warm_runaway
from workbench.trace import Message, read_run

KILLS = 20
SEED = 20261130


class SlowRecorded(RecordedProvider):
    """A recorded provider that takes a moment per call, so a kill can land anywhere in the run."""

    async def complete(self, messages: Sequence[Message], tools: Sequence[Mapping[str, Any]]) -> Completion:
        await asyncio.sleep(0.005)
        return await super().complete(messages, tools)


def _record(path: str) -> None:
    run = warm_runaway()
    loop = LiveLoop(Policy.named("current", grant=10**9), SlowRecorded(run), RecordedTools(run))
    with Recorder(path, loop.header("runaway")) as rec:
        asyncio.run(loop.run("runaway", rec))


@pytest.mark.timeout(120)
def test_sigkill_at_random_points_leaves_loadable_traces(artifacts: Path) -> None:
    source = warm_runaway()
    rng = random.Random(SEED)
    fork = multiprocessing.get_context("fork")
    folder = artifacts / "killed"
    folder.mkdir(exist_ok=True)
    loaded_turns: list[int] = []
    for k in range(KILLS):
        path = folder / f"kill{k:02d}.jsonl"
        child = fork.Process(target=_record, args=(str(path),))
        child.start()
        while not (path.exists() and path.stat().st_size > 0) and child.is_alive():
            time.sleep(0.001)
        time.sleep(rng.uniform(0.0, 0.7))
        if child.is_alive():
            os.kill(child.pid, signal.SIGKILL)  # type: ignore[arg-type]
        child.join(timeout=10)
        run = read_run(path)  # never raises for a file with its header
        # whole turns only, in order, each sending messages that were written before it
        assert [t.index for t in run.turns] == list(range(len(run.turns)))
        assert not [d for d in run.diagnostics if d.field == "turn.sent"]
        assert all(d.message.startswith("truncated line") for d in run.diagnostics)
        assert len(run.diagnostics) <= 1
        for turn in run.turns:
            original = source.turns[turn.index]
            assert (turn.usage, turn.tool_calls, turn.mutated) == (
                original.usage,
                original.tool_calls,
                original.mutated,
            )
            assert (
                len(run.request(turn)) == 2 + 2 * turn.index
            )  # system, brief, then assistant + tool result per turn
        if run.outcome.stop_reason is not None:
            assert len(run.turns) == len(source.turns)
        loaded_turns.append(len(run.turns))
    assert len(loaded_turns) == KILLS
    assert len(set(loaded_turns)) >= 5, loaded_turns  # the kills landed at different points
    print(f"turns loaded after each kill: {loaded_turns}")
