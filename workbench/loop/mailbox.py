"""The mailbox: guidance that arrives while a run works, read when the model gives its final answer (the seed's
step K.5). The Governor decides whether the answer is reopened (outside a landing, before the last iteration); the
loop then appends the draft answer and the guidance, worded as the seed's ``readSteering`` words it.

:class:`QueueMailbox` is a plain queue a caller (a notebook, a UI) puts lines into. :class:`RecordedMailbox` is
recorded mode's: a recording that went on past a final answer had something arrive, exactly as the offline replay
reads it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Protocol

from workbench.loop.recorded import RecordedProvider

# seed 001 linear.go readSteering: how a line of guidance is put to the model.
GUIDANCE_PREFIX = (
    "Guidance from the user, mid-task — adjust course without discarding sound work already done:\n"
)


class Mailbox(Protocol):
    def pending(self) -> bool: ...

    def drain(self) -> list[str]: ...


def guidance_text(line: str) -> str:
    return GUIDANCE_PREFIX + line.strip()


@dataclass
class QueueMailbox:
    lines: deque[str] = field(default_factory=deque)

    def put(self, line: str) -> None:
        if line.strip():
            self.lines.append(line)

    def pending(self) -> bool:
        return bool(self.lines)

    def drain(self) -> list[str]:
        out = list(self.lines)
        self.lines.clear()
        return out


@dataclass
class RecordedMailbox:
    """Pending while the recording holds another model call after the one just answered; drains the user words
    the recording's next request added (or a placeholder when it recorded none)."""

    provider: RecordedProvider

    def pending(self) -> bool:
        return len(self.provider.requests) < len(self.provider.run.turns)

    def drain(self) -> list[str]:
        run = self.provider.run
        k = len(self.provider.requests)
        before = {id(m) for m in run.request(k - 1)} if k > 0 else set()
        added = [m.content for m in run.request(k) if id(m) not in before and m.role == "user" and m.content]
        return [text for text in added if text] or ["(the recording continued past this answer)"]
