"""The seed loop's context law (``ctxbudget``): budgets derived from a model's window W, in tokens, as
docs/governors.md §3 and §5.16 restate them. Integer, truncating arithmetic as in Go; ``W <= 0`` or ``None`` is
unknown and every consumer uses its named fallback (unknown is never treated as small).

    observation_bytes(W) / observation_safety_bytes(W) / reuse_ceiling(W) / tool_caps(W)     (§3.1-3.3, §5.16)
    older_observation_bytes(grant)     # the older loop's single window, maxTokens/6 clamped (§5.21)
"""

from __future__ import annotations

from dataclasses import dataclass

# docs/governors.md §2, ctxbudget.go BytesPerToken.
BYTES_PER_TOKEN = 4
# docs/governors.md §2, ctxbudget.go DefaultFillPercent.
FILL_PERCENT = 60
# docs/governors.md §2, ctxbudget.go DefaultCompletionReserveTokens.
COMPLETION_RESERVE_TOKENS = 65_536
# docs/governors.md §2, ctxbudget.go DefaultWorkingSetTokens.
WORKING_SET_TOKENS = 160_000
# docs/governors.md §2, ctxbudget.go DefaultReusePercent.
REUSE_PERCENT = 250
# docs/governors.md §2, context.go ObservationFixedFloorTokens (measured ~3,778 over 332 leaf turns, rounded up).
OBSERVATION_FLOOR_TOKENS = 4_000
# docs/governors.md §2, context.go DefaultObservationBytes: the window when the context size is unknown.
DEFAULT_OBSERVATION_BYTES = 32_768
# docs/governors.md §2, context.go MinObservationBytes: arithmetic minimum for a known-but-tiny window.
MIN_OBSERVATION_BYTES = 4_096
# docs/governors.md §5.16, toolBudgetsFor: the reference denominator of the tool-cap shares.
TOOL_CAP_REFERENCE_BYTES = 32_768
# docs/governors.md §2 / §5.16: tool caps when the window is unknown (also the share weights).
UNKNOWN_RESULT_CAP = 12_288
UNKNOWN_SPILL_CAP = 10_240
UNKNOWN_PREVIEW_CAP = 4_096
UNKNOWN_RECALL_CAP = 8_192
# docs/governors.md §5.21 "Window = maxTokens/6" (older loop): obsBudget = clamp(maxTokens/6, 24 KiB, 64 KiB).
OLDER_OBSERVATION_DIVISOR = 6
OLDER_OBSERVATION_FLOOR_BYTES = 24_576
OLDER_OBSERVATION_CEILING_BYTES = 65_536
# docs/governors.md §2, maxResultLines: the line cap on any result.
MAX_RESULT_LINES = 2_000


def _known(window: int | None) -> bool:
    return window is not None and window > 0


def _tokens(window: int, *, working_set: bool) -> int:
    w = min(window, WORKING_SET_TOKENS) if working_set else window
    return max(0, w * FILL_PERCENT // 100 - OBSERVATION_FLOOR_TOKENS - COMPLETION_RESERVE_TOKENS)


def older_observation_bytes(grant: int) -> int:
    """§5.21, the older loop's one observation window: ``clamp(maxTokens / 6, 24 KiB, 64 KiB)`` bytes, from the
    leaf's token grant (25,000 B at a 150,000 grant). It served as both the working and the safety window."""
    return max(
        OLDER_OBSERVATION_FLOOR_BYTES,
        min(OLDER_OBSERVATION_CEILING_BYTES, grant // OLDER_OBSERVATION_DIVISOR),
    )


def observation_bytes(window: int | None) -> int:
    """§3.1 ``ObservationBytes``: the working target of the decayer, in bytes."""
    if not _known(window):
        return DEFAULT_OBSERVATION_BYTES
    assert window is not None
    return max(BYTES_PER_TOKEN * _tokens(window, working_set=True), MIN_OBSERVATION_BYTES)


def observation_safety_bytes(window: int | None) -> int:
    """§3.2 ``observationSafetyWindow``: the same law without the working-set clamp."""
    if not _known(window):
        return DEFAULT_OBSERVATION_BYTES
    assert window is not None
    return max(BYTES_PER_TOKEN * _tokens(window, working_set=False), MIN_OBSERVATION_BYTES)


def reuse_ceiling(window: int | None) -> int:
    """§3.3 ``ReuseCeiling`` in tokens; 0 (never fires) when the window is unknown."""
    if not _known(window):
        return 0
    assert window is not None
    return min(window, WORKING_SET_TOKENS) * FILL_PERCENT // 100 * REUSE_PERCENT // 100


@dataclass(frozen=True)
class ToolCaps:
    """§5.16 per-leaf tool-result caps, in bytes; fixed at toolbox construction."""

    result: int
    spill: int
    preview: int
    recall: int
    max_lines: int = MAX_RESULT_LINES


def tool_caps(window: int | None) -> ToolCaps:
    """§5.16 ``toolBudgetsFor``: each cap a share of the working-set observation bytes (floor 4,000 tokens)."""
    fallback = ToolCaps(UNKNOWN_RESULT_CAP, UNKNOWN_SPILL_CAP, UNKNOWN_PREVIEW_CAP, UNKNOWN_RECALL_CAP)
    if not _known(window):
        return fallback
    assert window is not None
    share_of = BYTES_PER_TOKEN * _tokens(window, working_set=True)
    if share_of <= 0:
        return fallback

    def share(weight: int) -> int:
        return share_of * weight // TOOL_CAP_REFERENCE_BYTES

    return ToolCaps(
        share(UNKNOWN_RESULT_CAP),
        share(UNKNOWN_SPILL_CAP),
        share(UNKNOWN_PREVIEW_CAP),
        share(UNKNOWN_RECALL_CAP),
    )
