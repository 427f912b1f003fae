"""The stop reasons and verdicts, and ``verdictFor``: the grading a stop earns (docs/governors.md §5.18; first match
wins)."""

from __future__ import annotations

from enum import StrEnum


class StopReason(StrEnum):
    """Why a run ends, in the seed's words where it has them (``Stop.kind``, ``Outcome.stop_reason``). A recording
    keeps its source's own reason where none of these maps; the values are the strings traces have always held."""

    DONE = "done"
    BUDGET = "budget"
    TURN_CAP = "turn-cap"
    PROMOTE = "promote"
    SPLIT = "split"
    PAUSED = "paused"
    CANCELLED = "cancelled"
    EMPTY = "empty"
    NO_PROGRESS = "no-progress"
    TOOL_TIMEOUTS = "tool-timeouts"
    ERROR = "error"
    DEADLINE = "deadline"
    # Workbench additions (not in the seed): OpenHands' stuck detector is a structural runaway bound like the
    # no-progress guard; a context-window terminus is the run running out of room.
    STUCK = "stuck"
    CONTEXT_TRUNCATED = "context-truncated"
    # Other agents' own limits (workbench.govern.agent_limits): a dollar or token cap spent out.
    MAX_BUDGET = "max-budget"
    MAX_TOKENS = "max-tokens"


class Verdict(StrEnum):
    """The grading a stop earns (``Stop.verdict``, ``Outcome.verdict``)."""

    BUDGET_STOP = "budget_stop"  # seed 001 linear.go provider.ReadingBudgetStop
    TURN_CAP = "turn_cap"  # seed 001 linear.go provider.ReadingTurnCap
    UNVERIFIED_SUCCESS = "unverified_success"  # seed 001 linear.go provider.ReadingUnverifiedSuccess
    EMPTY_RESPONSE = (
        "empty_response"  # seed 001 linear.go provider.ReadingEmptyResponse (string cut in source)
    )
    PROVIDER_FAILURE = "provider_failure"  # seed 001 linear.go provider.ReadingProviderFailure
    # Workbench addition (the seed has no context-window manager): ADR-107's terminus, the send no longer fits the
    # window. Not a budget stop — no grant was spent out — so it is graded on its own.
    CONTEXT_TRUNCATED = "context_truncated"


# The verdicts as plain strings, for the vectorised path's arrays (workbench.replay.fast).
BUDGET_STOP = Verdict.BUDGET_STOP.value
TURN_CAP = Verdict.TURN_CAP.value
UNVERIFIED_SUCCESS = Verdict.UNVERIFIED_SUCCESS.value
EMPTY_RESPONSE = Verdict.EMPTY_RESPONSE.value
PROVIDER_FAILURE = Verdict.PROVIDER_FAILURE.value
CONTEXT_TRUNCATED = Verdict.CONTEXT_TRUNCATED.value
VERDICTS = tuple(v.value for v in Verdict)

_BY_STOP = {
    StopReason.BUDGET: Verdict.BUDGET_STOP,
    StopReason.TURN_CAP: Verdict.TURN_CAP,
    StopReason.PROMOTE: Verdict.UNVERIFIED_SUCCESS,
    StopReason.SPLIT: Verdict.UNVERIFIED_SUCCESS,
    StopReason.PAUSED: Verdict.UNVERIFIED_SUCCESS,
    StopReason.CANCELLED: Verdict.UNVERIFIED_SUCCESS,
    StopReason.EMPTY: Verdict.EMPTY_RESPONSE,
    StopReason.NO_PROGRESS: Verdict.BUDGET_STOP,
    StopReason.TOOL_TIMEOUTS: Verdict.BUDGET_STOP,
    StopReason.ERROR: Verdict.PROVIDER_FAILURE,
    StopReason.DEADLINE: Verdict.PROVIDER_FAILURE,
    StopReason.STUCK: Verdict.BUDGET_STOP,
    StopReason.CONTEXT_TRUNCATED: Verdict.CONTEXT_TRUNCATED,
    StopReason.MAX_BUDGET: Verdict.BUDGET_STOP,
    StopReason.MAX_TOKENS: Verdict.BUDGET_STOP,
}
GRADED_EXHAUSTION = frozenset({"budget", "overrun", "no-progress"})


def verdict_for(stop: str, exhausted: str | None, text: str | None, preset: str | None = None) -> str:
    """The seed's ``verdictFor`` (a :class:`Verdict`'s plain string, as traces hold it). ``overrun`` (retired) has
    an empty case in the current code, so it falls through to the exhaustion check."""
    if preset:
        return preset
    if stop in _BY_STOP:
        return _BY_STOP[StopReason(stop)].value
    if exhausted in GRADED_EXHAUSTION:
        return Verdict.BUDGET_STOP.value
    if not (text or "").strip():
        return Verdict.EMPTY_RESPONSE.value
    return Verdict.UNVERIFIED_SUCCESS.value
