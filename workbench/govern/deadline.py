"""The deadline landing reserve and the wall pace (docs/governors.md §5.6, §5.7).

The deadline landing runs on a *fresh* clock of ``reserve`` seconds from the moment it was ordered (the work cannot
spend it). All times are seconds since the leaf started, passed in; nothing here reads a clock.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

WATCHDOG_PAD_S = (
    120.0  # seed 001 linear.go watchdogPad (deadlineLandingReserve's cap; docs/governors.md §2: 2 min)
)
DEADLINE_RESERVE_DIVISOR = 10  # seed 001 linear.go deadlineLandingReserve (deadline / 10)
WALL_PACE_AT = 0.5  # seed 001 linear.go wallPaceAt
DEADLINE_FLOOR_S = 15 * 60.0  # docs/governors.md §2 linearInfo DeadlineFloor (15 min)
DEADLINE_STEP_S = 60.0  # docs/governors.md §2 linearInfo DeadlineStep (1 min)
DEADLINE_PER_TOKENS = 50_000  # docs/governors.md §2 linearInfo DeadlinePerTokens


def deadline_landing_reserve(wall_s: float, pad_s: float = WATCHDOG_PAD_S) -> float:
    """``deadlineLandingReserve``: a tenth of the wall, capped at the watchdog pad."""
    return min(wall_s / DEADLINE_RESERVE_DIVISOR, pad_s)


def default_deadline_s(grant: int) -> float:
    """The generalist's own wall when a caller names none: max(15 min, floor(grant / 50,000) min)."""
    return max(DEADLINE_FLOOR_S, (grant // DEADLINE_PER_TOKENS) * DEADLINE_STEP_S)


def landing_due(elapsed_s: float, wall_s: float, reserve_s: float, landing_active: bool) -> bool:
    """Step B: no landing yet and the time until the deadline is at or under the reserve."""
    return not landing_active and wall_s - elapsed_s <= reserve_s


def pace_due(
    elapsed_s: float, wall_s: float, paced: bool, landing_active: bool, at: float = WALL_PACE_AT
) -> bool:
    """Step C: once, not while landing, when elapsed is strictly above ``at`` x wall."""
    return not paced and not landing_active and elapsed_s > wall_s * at


def wall_duration_text(seconds: float) -> str:
    """``wallDurationText``: Go's Duration.String after rounding to the second, whole trailing units dropped
    (45m, 1h30m, 2h, 2m30s, 30s); "" for an unknown, zero or sub-second reading."""
    if seconds <= 0:
        return ""
    whole = int(Decimal(str(seconds)).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if whole <= 0:
        return ""
    h, rest = divmod(whole, 3600)
    m, s = divmod(rest, 60)
    if h:
        spelled = f"{h}h{m}m{s}s"
    elif m:
        spelled = f"{m}m{s}s"
    else:
        spelled = f"{s}s"
    if spelled.endswith("m0s"):
        spelled = spelled[:-2]
    if spelled.endswith("h0m"):
        spelled = spelled[:-2]
    return spelled
