"""The budget landing reserve: after the grant is spent, a few turns to land — 4 at most, fewer when the token
half (20% of the grant, added to the spend at the crossing) runs out first, but always at least one.
"""

from __future__ import annotations

from dataclasses import dataclass

LANDING_TURNS = 4  # seed 001 linear.go landingTurns
LANDING_TOKEN_SHARE = 0.2  # seed 001 linear.go landingTokenShare


def landing_allowance(grant: int, share: float | None = LANDING_TOKEN_SHARE) -> int:
    """``landingAllowance``: ``int(grant x share)`` (float product then truncation, as Go); 0 for grant <= 0."""
    if grant <= 0 or share is None:
        return 0
    return int(float(grant) * share)


def landing_ceiling(crossing_spent: int, grant: int, share: float | None = LANDING_TOKEN_SHARE) -> int:
    """The spend at which a budget landing must end; 0 = no token half (the ink-s9 era, or ``share=None``)."""
    if share is None:
        return 0
    return crossing_spent + landing_allowance(grant, share)


@dataclass(frozen=True, slots=True)
class LandingStep:
    """What the countdown decided after one landing turn."""

    ends: bool
    left: int
    """Landing turns left after this one (0 when it ends)."""
    tokens_spent: bool
    """The token half was spent (which may end it before its last turn)."""


def countdown(left: int, spent: int, ceiling: int) -> LandingStep:
    """Step T of the seed's loop: end on the last landing turn or once the token half is spent."""
    allowance_spent = ceiling > 0 and spent >= ceiling
    if left == 1 or allowance_spent:
        return LandingStep(ends=True, left=0, tokens_spent=allowance_spent)
    return LandingStep(ends=False, left=left - 1, tokens_spent=False)
