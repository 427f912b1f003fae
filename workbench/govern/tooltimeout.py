"""The tool-timeout guard: the same exact call (name + argument text) timing out 3 times in the round stops the leaf
(docs/governors.md §5.9). Only results flagged ``timed_out`` count; the first call to reach the cap stops at once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from workbench.govern.noprogress import CallFact, ResultFact, Signature

TOOL_TIMEOUT_REPEAT_CAP = 3  # docs/governors.md §2 toolTimeoutRepeatCap (tooltimeout.go)
COMMAND_CLIP_BYTES = 200  # docs/governors.md §5.9: the reason's command is clipped to 200 bytes


def command_text(call: CallFact) -> str:
    """The shell command a call ran, for the reason text: ``command`` of JSON arguments (an array joined with
    " && "), else the argument text itself; clipped to 200 bytes."""
    text = call.arguments
    try:
        args = json.loads(call.arguments)
    except (ValueError, TypeError):
        args = None
    if isinstance(args, dict):
        cmd = args.get("command", args.get("cmd"))
        if isinstance(cmd, list):
            text = " && ".join(str(c) for c in cmd)
        elif isinstance(cmd, str):
            text = cmd
    data = text.encode("utf-8")
    if len(data) > COMMAND_CLIP_BYTES:
        text = data[:COMMAND_CLIP_BYTES].decode("utf-8", "ignore")
    return text


@dataclass(frozen=True, slots=True)
class TimeoutStop:
    reason: str
    count: int
    command: str


class ToolTimeoutGuard:
    def __init__(self, cap: int = TOOL_TIMEOUT_REPEAT_CAP) -> None:
        self.cap = cap
        self.counts: dict[Signature, int] = {}

    def observe(self, calls: Sequence[CallFact], results: Sequence[ResultFact]) -> TimeoutStop | None:
        for call, result in zip(calls, results, strict=False):
            if not result.timed_out:
                continue
            key = call.signature
            self.counts[key] = self.counts.get(key, 0) + 1
            if self.counts[key] >= self.cap:
                cmd = command_text(call)
                return TimeoutStop(
                    reason=(
                        f"the same command timed out {self.counts[key]} times, so it was stopped rather "
                        f"than run again: {cmd}"
                    ),
                    count=self.counts[key],
                    command=cmd,
                )
        return None
