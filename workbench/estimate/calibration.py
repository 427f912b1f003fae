"""The ADR-107 calibration factor: seeded above 1.0, only grows toward reported prompt tokens, reset on each run's
first send (docs/estimator.md, "What ADR-107 decides")."""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.estimate.constants import CALIBRATION_SEED


@dataclass
class Calibration:
    seed: float = CALIBRATION_SEED
    factor: float = field(init=False)
    observations: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if not self.seed > 0:
            raise ValueError(f"calibration seed must be positive, got {self.seed}")
        self.factor = self.seed

    def reset(self) -> None:
        self.factor = self.seed
        self.observations = 0

    def apply(self, estimate: float) -> float:
        return estimate * self.factor

    def observe(self, reported: int | float | None, estimate: float) -> float:
        """Grow the factor toward ``reported / estimate``; never shrinks. Returns the new factor."""
        if reported is not None and estimate > 0:
            self.factor = max(self.factor, reported / estimate)
            self.observations += 1
        return self.factor
