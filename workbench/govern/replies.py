"""Replies without tool calls, and replies cut at the output limit (docs/governors.md §5.11, §5.12).

Nudges continue *before* any budget check, so they never start a landing or consume a landing turn.
"""

from __future__ import annotations

LENGTH_FINISH_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_length", "output_limit"}
)  # docs/governors.md §5.12 (store.ClassifyEnd EndLength family)
EMPTY_REPLY_DIVISOR = (
    2  # docs/governors.md, empty reply: abandons when completion > remaining/2 (seed linear.go Run)
)


def is_length(finish_reason: str | None) -> bool:
    """The finish reason (trimmed, lower-cased) is in the output-limit family."""
    return finish_reason is not None and finish_reason.strip().lower() in LENGTH_FINISH_REASONS


def abandon_empty(
    text: str, remaining: int, completion: int | None, divisor: int = EMPTY_REPLY_DIVISOR
) -> bool:
    """Step K.2: an empty reply that ate more than 1/``divisor`` of what was left (half, in the seed) is
    abandoned (Go integer division)."""
    return text == "" and remaining > 0 and (completion or 0) > remaining // divisor
