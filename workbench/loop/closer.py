"""Reading its own landing (docs/loop.md, "Reading its own landing"; the seed's self-closer, docs/governors.md §5.17):
after a final answer a closer inspects the workspace. :class:`CheckCloser` runs ``--check`` as ``sh`` runs commands;
:class:`RecordedCloser` gives back the findings a recording's ``self-close`` and ``standing-finding`` events name.

    closer.inspect(turn, budget_s) -> list[Finding]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import orjson

from workbench.loop.tools import SH_MAX_TIMEOUT_S, Toolbox
from workbench.trace.schema import EventKind, Run, ToolCall

CHECK_RED = "check-red"


@dataclass(frozen=True)
class Finding:
    kind: str
    note: str


class Closer(Protocol):
    async def inspect(self, turn: int, budget_s: float | None) -> list[Finding]: ...


def check_note(command: str, output: str) -> str:
    """The finding put to the leaf: what was run, how it ended, and the end of its output."""
    return (
        f"Before your answer is delivered, the project's check was run on the workspace: `{command}`. It failed:\n"
        f"{output.strip()}\n"
        "Fix what it reports (only that), run the check yourself, then give your final answer again."
    )


@dataclass
class CheckCloser:
    """Runs ``command`` in the workspace through ``tools`` (the sandbox, the output caps, the lease)."""

    command: str
    tools: Toolbox
    timeout_s: int = SH_MAX_TIMEOUT_S

    async def inspect(self, turn: int, budget_s: float | None) -> list[Finding]:
        args = orjson.dumps({"command": self.command, "timeout_seconds": self.timeout_s}).decode()
        call = ToolCall(id=f"check_{turn}", name="sh", arguments=args)
        batch = await self.tools.run_batch([call], turn, budget_s=budget_s)
        result = batch.results[0]
        if not result.is_error:
            return []
        return [Finding(CHECK_RED, check_note(self.command, result.content or ""))]


@dataclass
class RecordedCloser:
    """The findings the recording's events put back (``self-close``) or left standing (``standing-finding``)."""

    run: Run

    async def inspect(self, turn: int, budget_s: float | None) -> list[Finding]:
        return [
            Finding(str(e.data.get("finding", "")), str(e.data.get("note", "")))
            for e in self.run.events
            if e.turn == turn and e.kind in (EventKind.SELF_CLOSE, EventKind.STANDING_FINDING)
        ]
