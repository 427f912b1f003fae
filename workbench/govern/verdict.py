"""``verdictFor``: the grading a stop earns (docs/governors.md §5.18; first match wins)."""

from __future__ import annotations

BUDGET_STOP = "budget_stop"  # seed 001 linear.go provider.ReadingBudgetStop
TURN_CAP = "turn_cap"  # seed 001 linear.go provider.ReadingTurnCap
UNVERIFIED_SUCCESS = "unverified_success"  # seed 001 linear.go provider.ReadingUnverifiedSuccess
EMPTY_RESPONSE = "empty_response"  # seed 001 linear.go provider.ReadingEmptyResponse (string cut in source)
PROVIDER_FAILURE = "provider_failure"  # seed 001 linear.go provider.ReadingProviderFailure
# Workbench addition (the seed has no context-window manager): ADR-107's terminus, the send no longer fits the
# window. Not a budget stop — no grant was spent out — so it is graded on its own.
CONTEXT_TRUNCATED = "context_truncated"

VERDICTS = (BUDGET_STOP, TURN_CAP, UNVERIFIED_SUCCESS, EMPTY_RESPONSE, PROVIDER_FAILURE, CONTEXT_TRUNCATED)

_BY_STOP = {
    "budget": BUDGET_STOP,
    "turn-cap": TURN_CAP,
    "promote": UNVERIFIED_SUCCESS,
    "split": UNVERIFIED_SUCCESS,
    "paused": UNVERIFIED_SUCCESS,
    "cancelled": UNVERIFIED_SUCCESS,
    "empty": EMPTY_RESPONSE,
    "no-progress": BUDGET_STOP,
    "tool-timeouts": BUDGET_STOP,
    "error": PROVIDER_FAILURE,
    "deadline": PROVIDER_FAILURE,
    # Workbench additions (not in the seed): OpenHands' stuck detector is a structural runaway bound like the
    # no-progress guard; a context-window terminus is the run running out of room, graded as such.
    "stuck": BUDGET_STOP,
    "context-truncated": CONTEXT_TRUNCATED,
    # Other agents' own limits (workbench.govern.agent_limits): a dollar or token cap spent out is a budget stop.
    "max-budget": BUDGET_STOP,
    "max-tokens": BUDGET_STOP,
}
GRADED_EXHAUSTION = frozenset({"budget", "overrun", "no-progress"})


def verdict_for(stop: str, exhausted: str | None, text: str | None, preset: str | None = None) -> str:
    """The seed's ``verdictFor``. ``overrun`` (retired) has an empty case in the current code, so it falls through
    to the exhaustion check."""
    if preset:
        return preset
    if stop in _BY_STOP:
        return _BY_STOP[stop]
    if exhausted in GRADED_EXHAUSTION:
        return BUDGET_STOP
    if not (text or "").strip():
        return EMPTY_RESPONSE
    return UNVERIFIED_SUCCESS
