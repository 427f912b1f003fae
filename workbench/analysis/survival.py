"""Survival of tokens-to-finish: which grant covers a given share of honest runs, with a confidence band.

A run that finished on its own contributes an *event* at its bill. A run whose recording was cut by a
budget, cap or deadline contributes a *censored* observation: it needed at least what it spent, and
nothing more is known. Kaplan-Meier (lifelines) uses both without pretending the censored runs finished.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

import pandas as pd
from lifelines import KaplanMeierFitter
from lifelines.utils import qth_survival_times


@dataclass(frozen=True)
class Coverage:
    """The grant that covers ``share`` of runs (their bill to finish is at most it), with its CI."""

    share: float
    grant: float
    lower: float
    upper: float
    alpha: float

    @property
    def words(self) -> str:
        def fmt(x: float) -> str:
            return "not reached" if math.isinf(x) or math.isnan(x) else f"{x:,.0f}"

        ci = round((1 - self.alpha) * 100)
        return (
            f"{self.share:.0%} of runs finish within {fmt(self.grant)} tokens "
            f"({ci}% CI {fmt(self.lower)} to {fmt(self.upper)})"
        )


@dataclass(frozen=True)
class Survival:
    """Kaplan-Meier fit of tokens-to-finish over a set of runs."""

    observations: pd.DataFrame  # run_id, tokens, finished
    curve: pd.DataFrame  # tokens, survival, lower, upper (survival = share still unfinished)
    alpha: float

    @property
    def runs(self) -> int:
        return len(self.observations)

    @property
    def censored(self) -> int:
        return int((~self.observations["finished"]).sum())

    def coverage(self, share: float = 0.9) -> Coverage:
        """The grant by which ``share`` of runs have finished, with the CI band of that grant."""
        if not 0 < share < 1:
            raise ValueError(f"share must be between 0 and 1, got {share}")
        q = 1 - share
        curve = self.curve.set_index("tokens")
        point = float(qth_survival_times(q, curve["survival"]))
        # The upper survival bound crosses later (a larger grant), the lower one earlier.
        bounds = curve[["lower", "upper"]]
        lower = float(qth_survival_times(q, bounds["lower"]))
        upper = float(qth_survival_times(q, bounds["upper"]))
        return Coverage(share, point, min(lower, upper), max(lower, upper), self.alpha)

    def covered_at(self, grant: float) -> float:
        """Estimated share of runs that finish within ``grant`` tokens (1 − S(grant))."""
        s = self.curve[self.curve["tokens"] <= grant]["survival"]
        return float(1 - (s.iloc[-1] if len(s) else 1.0))

    def to_frame(self) -> pd.DataFrame:
        return self.curve.copy()

    def _repr_html_(self) -> str:
        return (
            f"<div><b>Tokens-to-finish survival</b>: {self.runs} runs, {self.censored} censored. "
            f"{html.escape(self.coverage(0.9).words)}.{self.observations.to_html(index=False)}</div>"
        )


def tokens_to_finish(frame: pd.DataFrame) -> pd.DataFrame:
    """``run_id, tokens, finished`` from an annotated run frame (``recorded_spent``, ``recorded_finished``,
    ``recorded_cut``): runs that neither finished nor were cut (errors, pathologies) are left out."""
    keep = frame["recorded_finished"].astype(bool) | frame["recorded_cut"].astype(bool)
    f = frame[keep & frame["recorded_spent"].notna()]
    return pd.DataFrame(
        {
            "run_id": f["run_id"].to_numpy(),
            "tokens": f["recorded_spent"].astype(float).to_numpy(),
            "finished": f["recorded_finished"].astype(bool).to_numpy(),
        }
    )


def survival(observations: pd.DataFrame, alpha: float = 0.05) -> Survival:
    """Kaplan-Meier fit of ``observations`` (``run_id, tokens, finished``)."""
    for col in ("run_id", "tokens", "finished"):
        if col not in observations.columns:
            raise ValueError(f"survival observations lack column {col!r}")
    if observations.empty:
        raise ValueError("no runs to fit: survival needs at least one finished or censored run")
    if (observations["tokens"] < 0).any():
        bad = observations[observations["tokens"] < 0]["run_id"].tolist()
        raise ValueError(f"negative tokens-to-finish for {bad}")
    kmf = KaplanMeierFitter(alpha=alpha)
    kmf.fit(observations["tokens"], event_observed=observations["finished"], label="survival")
    ci = kmf.confidence_interval_
    curve = pd.DataFrame(
        {
            "tokens": kmf.survival_function_.index.to_numpy(dtype=float),
            "survival": kmf.survival_function_["survival"].to_numpy(),
            "lower": ci.iloc[:, 0].to_numpy(),
            "upper": ci.iloc[:, 1].to_numpy(),
        }
    )
    return Survival(observations.reset_index(drop=True), curve, alpha)
