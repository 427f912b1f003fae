"""What the Governor answers with: frozen decisions, and the step each phase returns.

Every decision names the model call it belongs to (``turn``: the 0-based index of the call — for the ``start``
phase, the call about to be made; for ``response``/``tools``/``error``, the call just made; for ``end``, the last
call made), the ``phase`` it was taken in, a ``kind``, a human ``reason`` and the ``numbers`` that triggered it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

from workbench.govern.meter_record import MeterRecord


class Phase(StrEnum):
    """The phase a decision was taken in: the governor's calls in a loop's order, ``close`` (``reopen``) and
    ``loop`` (a stop the live loop meets itself: a cancel, a failure inside the loop)."""

    START = "start"
    RESPONSE = "response"
    TOOLS = "tools"
    ERROR = "error"
    END = "end"
    CLOSE = "close"
    LOOP = "loop"


class Next(StrEnum):
    """What the caller does after a step (``Step.next``)."""

    CALL = "call"
    RUN_TOOLS = "run-tools"
    SKIP_TOOLS = "skip-tools"
    RETRY = "retry"
    CONTINUE = "continue"
    STOP = "stop"


PHASES = (Phase.START, Phase.RESPONSE, Phase.TOOLS, Phase.ERROR, Phase.END)
"""The phases a loop calls, in order."""


@dataclass(frozen=True)
class Decision:
    turn: int
    phase: str
    """A :class:`Phase`."""
    kind: str
    """The stop reason, landing kind, injected message kind or note kind."""
    reason: str = ""
    text: str = ""
    numbers: tuple[tuple[str, Any], ...] = ()
    action: ClassVar[str] = "note"

    def __post_init__(self) -> None:
        # Code names these words by their StrEnums; a decision holds the plain strings traces and frames carry.
        object.__setattr__(self, "phase", str(self.phase))
        object.__setattr__(self, "kind", str(self.kind))

    @property
    def data(self) -> dict[str, Any]:
        return dict(self.numbers)

    def _head(self) -> dict[str, Any]:  # what a row and a record both start with
        return {k: getattr(self, k) for k in ("turn", "phase", "action", "kind", "reason")}

    def to_row(self) -> dict[str, Any]:
        return {**self._head(), **{f"n_{k}": v for k, v in self.numbers}}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready record (the message text is left out: ``workbench.govern.messages`` has it by kind)."""
        return {**self._head(), "numbers": self.data}


def numbers(**kw: Any) -> tuple[tuple[str, Any], ...]:
    return tuple(kw.items())


@dataclass(frozen=True)
class Note(Decision):
    """A trace note: something worth recording that changes nothing the model sees."""

    action: ClassVar[str] = "note"


@dataclass(frozen=True)
class Inject(Decision):
    """Append a user message of ``kind`` with ``text`` (the live loop records it with ``Message.kind = kind``)."""

    action: ClassVar[str] = "inject"


@dataclass(frozen=True)
class SkipTools(Decision):
    """Run none of this reply's tool calls; answer every one of them with ``text``."""

    action: ClassVar[str] = "skip-tools"


@dataclass(frozen=True)
class StartLanding(Decision):
    """A landing was ordered (``kind`` ``budget`` or ``deadline``); ``meter`` is the bound as read at the order."""

    meter: MeterRecord | None = None
    action: ClassVar[str] = "start-landing"


@dataclass(frozen=True)
class Stop(Decision):
    """The run ends. ``kind`` is the stop reason; ``meter`` was re-read at land; ``text`` is the outcome text."""

    verdict: str = ""
    """A :class:`~workbench.govern.verdict.Verdict`."""
    meter: MeterRecord | None = None
    exhausted: str | None = None
    action: ClassVar[str] = "stop"

    def __post_init__(self) -> None:
        super().__post_init__()
        object.__setattr__(self, "verdict", str(self.verdict))
        if self.exhausted is not None:
            object.__setattr__(self, "exhausted", str(self.exhausted))


@dataclass(frozen=True)
class Step:
    """What one phase answered: its decisions and what the caller does next.

    ``next`` is one of: ``call`` (make the model call; finish it by ``call_deadline_s`` seconds since the start when
    that is set), ``run-tools`` (run the reply's calls, then ``after_tools``), ``skip-tools`` (run none; answer each
    with the SkipTools text), ``retry`` (a cut call was discarded; start the next turn), ``continue`` (start the next
    turn) or ``stop``.
    """

    decisions: tuple[Decision, ...]
    next: Next
    call_deadline_s: float | None = None

    @property
    def stop(self) -> Stop | None:
        for d in self.decisions:
            if isinstance(d, Stop):
                return d
        return None

    @property
    def injections(self) -> tuple[Inject, ...]:
        return tuple(d for d in self.decisions if isinstance(d, Inject))

    @property
    def skip(self) -> SkipTools | None:
        for d in self.decisions:
            if isinstance(d, SkipTools):
                return d
        return None
