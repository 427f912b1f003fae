"""The raw meter: every token sent and received, warm or cold — and its retired 3x ceiling (docs/governors.md §5.2)."""

from __future__ import annotations

RAW_TOKEN_CEILING_MULTIPLE = 3  # seed 001 linear.go rawTokenCeilingMultiple


def raw_spent(prompt: int, completion: int) -> int:
    """``rawSpent``: prompt + completion, no discount."""
    return prompt + completion


def raw_ceiling(grant: int, multiple: int = RAW_TOKEN_CEILING_MULTIPLE) -> int:
    """``rawCeiling``: the grant in undiscounted tokens."""
    return grant * multiple
