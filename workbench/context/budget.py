"""ADR-107's budget: ``context length - reserve - safety``, and where the reserve comes from.

Call signature (pure)::

    context_budget(context_length, reserve=None, safety=None, max_tokens=None, output_cap=None) -> Budget
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.estimate.constants import (
    CLAUDE_CODE_OUTPUT_RESERVE_CAP,
    RESERVE_FLOOR_SHARE,
    SAFETY_SHARE,
    UNKNOWN_CONTEXT_LENGTH,
)


@dataclass(frozen=True)
class Budget:
    """The prompt budget and how it was derived (``reserve_from``: policy | max_tokens | output_cap | floor)."""

    context_length: int
    reserve: int
    safety: int
    reserve_from: str
    length_known: bool

    @property
    def tokens(self) -> int:
        return max(0, self.context_length - self.reserve - self.safety)


def context_budget(
    context_length: int | None,
    *,
    reserve: int | None = None,
    safety: int | None = None,
    max_tokens: int | None = None,
    output_cap: int | None = None,
) -> Budget:
    """The reserve is the response allocation: an explicit ``reserve`` (a policy's), else the request's
    ``max_tokens``, else the model's output cap, else a proportional floor. Unknown length -> 8,192."""
    known = context_length is not None and context_length > 0
    length = int(context_length) if known else UNKNOWN_CONTEXT_LENGTH  # type: ignore[arg-type]
    if reserve is not None:
        res, source = int(reserve), "policy"
    elif max_tokens:
        res, source = int(max_tokens), "max_tokens"
    elif output_cap:
        res, source = int(output_cap), "output_cap"
    else:
        res, source = int(length * RESERVE_FLOOR_SHARE), "floor"
    saf = int(safety) if safety is not None else int(length * SAFETY_SHARE)
    if res < 0 or saf < 0:
        raise ValueError(f"reserve ({res}) and safety ({saf}) must not be negative")
    return Budget(length, res, saf, source, known)


def claude_code_reserve(output_cap: int | None) -> int:
    """Claude Code's output reserve in its auto-compact threshold: ``min(max_output, 20,000)`` (docs/anchors.md §5).

    With ``safety = CLAUDE_CODE_AUTOCOMPACT_BUFFER`` (13,000) a 200,000 window gives a 167,000-token budget,
    the threshold the recorded compactions fire just above (preTokens 167,094-170,251).
    """
    if output_cap is None:
        return CLAUDE_CODE_OUTPUT_RESERVE_CAP
    return min(output_cap, CLAUDE_CODE_OUTPUT_RESERVE_CAP)
