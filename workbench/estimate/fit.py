"""Fitting the estimator to reported usage: divisors per tokenizer family and the unseen prefix per source.

The model is linear in the request's characters::

    P ≈ prefix[group] + prose / d_prose + dense / d_dense + messages × m + tool_calls × c

The divisors are fitted by non-negative least squares (``scipy.optimize.nnls``: every term counts something
the provider tokenizes, so no coefficient may be negative), refined with a robust loss
(``scipy.optimize.least_squares``, soft L1), over the calls of many runs. Where a source hides part of what the
model saw (Claude Code keeps no thinking text, yet the provider counts it), the fitted prose divisor absorbs it:
read it as visible characters per counted token. ``group`` is
``(source, role)``, plus what the run records of the prompt's head: what a source does not record (Claude
Code's system prompt and tool schemas, about 26k tokens at the first call) differs by source, by main agent vs
subagent, and by version (OpenHands v0.35 records its system prompt and tools in the history, v0.25 neither),
while divisors are a property of the tokenizer family.

Call signatures::

    fit_family(feature_sets) -> Fit                   # one family's runs
    first_call_residuals(feature_sets, estimator) -> dict[run_id, float]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares, nnls

from workbench.estimate.constants import DENSE_CHARS_PER_TOKEN, PROSE_CHARS_PER_TOKEN
from workbench.estimate.estimator import Estimator
from workbench.estimate.requests import RequestFeatures

# Workbench choice: relative residuals beyond ~10% of a call delta are treated as outliers (soft L1 scale).
ROBUST_RELATIVE_SCALE = 0.1
# Workbench choice: deltas this small are mostly overhead and rounding; they carry no divisor information.
MIN_DELTA_TOKENS = 50.0


def group_of(f: RequestFeatures) -> str:
    """``source/role``, with ``+system`` / ``+tools`` when the run records its system prompt / tool schemas
    (runs that record them hide less, so they cannot share an unseen prefix with runs that do not)."""
    run = f.run
    head = next((r for t in run.turns if (r := run.request(t))), [])
    system = "+system" if head and head[0].role == "system" else ""
    return f"{run.source}/{run.role}{system}{'+tools' if run.tool_schemas else ''}"


def adr_tokens(counts: np.ndarray, est: Estimator) -> np.ndarray:
    """Vectorised :meth:`Estimator.tokens` over rows in COUNT_COLUMNS order (no prefix)."""
    prose = counts[..., 0]
    dense = counts[..., 1] + counts[..., 2] + counts[..., 3]
    return (
        prose / est.prose_divisor
        + dense / est.dense_divisor
        + counts[..., 4] * est.per_message
        + counts[..., 5] * est.per_tool_call
    )


@dataclass(frozen=True)
class Fit:
    """A fitted family: divisors, overheads, and a prefix per (source, role) group."""

    family: str
    prose_divisor: float
    dense_divisor: float
    per_message: float
    per_tool_call: float
    prefix: dict[str, float] = field(default_factory=dict)
    turns: int = 0
    runs: int = 0
    notes: tuple[str, ...] = ()
    class_chars_per_token: dict[str, float | None] = field(default_factory=dict)
    """The same fit with tool-call arguments and tool results apart (None: not identifiable)."""

    def estimator(self, group: str | None = None, prefix: float | None = None) -> Estimator:
        p = prefix if prefix is not None else self.prefix.get(group or "", 0.0)
        return Estimator(
            self.prose_divisor, self.dense_divisor, self.per_message, self.per_tool_call, p, name="fitted"
        )


def fit_family(family: str, sets: Sequence[RequestFeatures], base: Estimator | None = None) -> Fit:
    """Fit the two divisors on consecutive calls, then the prefix per group on first calls.

    Divisors: NNLS of ``P_t - P_{t-1}`` on the characters appended between two calls whose request only
    grew (the prefix cancels, and each delta is a few messages, so prose and dense are told apart); the
    per-message and per-tool-call overheads stay at ``base``'s values (with them free the fit trades them
    against the divisors). Prefix: the median first-call residual per (source, role) under the fitted
    divisors. A class with no data keeps ADR-107's divisor.
    """
    base = base or Estimator()
    deltas, targets = [], []
    for f in sets:
        ok = f.extends[1:] & f.comparable[1:] & f.comparable[:-1]
        if not ok.any():
            continue
        d = (f.counts[1:] - f.counts[:-1])[ok].astype(float)
        deltas.append(d)
        targets.append(
            (f.prompt[1:] - f.prompt[:-1])[ok] - d[:, 4] * base.per_message - d[:, 5] * base.per_tool_call
        )
    notes: list[str] = []
    coef = np.zeros(2)
    per_class: dict[str, float | None] = {}
    n = 0
    if deltas:
        d, b = np.vstack(deltas), np.concatenate(targets)
        coef, n = _robust_fit(np.column_stack([d[:, 0], d[:, 1] + d[:, 2] + d[:, 3]]), b)
        by_class, _ = _robust_fit(np.column_stack([d[:, 0], d[:, 1], d[:, 2] + d[:, 3]]), b)
        per_class = {
            c: (1.0 / x if x > 1e-6 else None)
            for c, x in zip(("prose", "tool_args", "tool_result"), by_class, strict=True)
        }
    else:
        notes.append("no consecutive calls with reported usage")
    divs = []
    for k, (name, adr) in enumerate((("prose", PROSE_CHARS_PER_TOKEN), ("dense", DENSE_CHARS_PER_TOKEN))):
        if coef[k] > 1e-6:
            divs.append(1.0 / coef[k])
        else:
            divs.append(adr)
            notes.append(f"{name} divisor not identifiable from these runs: ADR-107's {adr} kept")
    est = base.with_(prose_divisor=divs[0], dense_divisor=divs[1], prefix_tokens=0.0, name="fitted")
    residuals: dict[str, list[float]] = {}
    for f in sets:
        r = first_call_residual(f, est)
        if r is not None:
            residuals.setdefault(group_of(f), []).append(r)
    return Fit(
        family,
        divs[0],
        divs[1],
        base.per_message,
        base.per_tool_call,
        {g: float(np.median(v)) for g, v in sorted(residuals.items())},
        turns=n,
        runs=len(deltas),
        notes=tuple(notes),
        class_chars_per_token=per_class,
    )


def _robust_fit(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, int]:
    """Tokens per character for each column: NNLS on relative errors, refined with a soft-L1 loss."""
    keep = b > MIN_DELTA_TOKENS
    if not keep.any():
        return np.zeros(a.shape[1]), 0
    # relative errors: every call delta weighs the same, so one huge delta cannot set the divisor
    w = 1.0 / b[keep]
    aw, bw = a[keep] * w[:, None], b[keep] * w
    start, _ = nnls(aw, bw)
    # robust refinement: calls whose recorded content was not what was sent (an agent that truncates
    # observations before sending them) are outliers, not evidence
    fit = least_squares(
        lambda x: aw @ x - bw, start, bounds=(0.0, np.inf), loss="soft_l1", f_scale=ROBUST_RELATIVE_SCALE
    )
    return fit.x, int(keep.sum())


def first_call_residual(f: RequestFeatures, est: Estimator) -> float | None:
    """Reported prompt minus the transcript-only estimate at the run's first comparable call."""
    ok = np.flatnonzero(f.comparable)
    if len(ok) == 0:
        return None
    i = ok[0]
    return float(f.prompt[i] - adr_tokens(f.counts[i], est))
