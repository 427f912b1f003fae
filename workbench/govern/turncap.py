"""The turn backstop and fold turns (docs/governors.md §5.10); an iteration includes nudge turns and a discarded
lease-expiry attempt.
"""

from __future__ import annotations

MAX_TURN_BACKSTOP = 400  # seed 001 linear.go maxTurnBackstop
FOLD_TURNS = 2  # seed 001 linear.go FoldTurns


def clamp_max_turns(max_turns: int, backstop: int | None = MAX_TURN_BACKSTOP) -> int:
    """``NewLinear``'s clamp: <= 0 or above the backstop becomes the backstop (no clamp when backstop is None)."""
    if backstop is None:
        return max_turns
    if max_turns <= 0 or max_turns > backstop:
        return backstop
    return max_turns


def turn_cap(max_turns: int, fold: bool = False) -> int:
    """The iterations this run is bound by: ``max_turns``, or ``FOLD_TURNS`` for a fold when that is lower."""
    return min(max_turns, FOLD_TURNS) if fold else max_turns


def fold_last_call_due(iteration: int, cap: int, fold: bool) -> bool:
    """Step R: a fold is told its next reply is the result when ``turn + 2 >= turnCap`` (``iteration`` is 1-based)."""
    return fold and iteration + 1 >= cap
