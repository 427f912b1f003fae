"""Fitting the estimator to reported usage (docs/estimator.md, "Fitting, honestly": the linear model, divisors per
tokenizer family by NNLS then a soft-L1 robust loss, the unseen prefix per ``group``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import least_squares, nnls

from workbench.estimate.constants import (
    DENSE_CHARS_PER_TOKEN,
    MAX_RELATIVE_SE,
    MIN_FIT_DELTAS,
    PLAUSIBLE_CHARS_PER_TOKEN,
    PROSE_CHARS_PER_TOKEN,
)
from workbench.estimate.estimator import Estimator
from workbench.estimate.requests import COUNT_COLUMNS, RequestFeatures

# Workbench choice: relative residuals beyond ~10% of a call delta are treated as outliers (soft L1 scale).
ROBUST_RELATIVE_SCALE = 0.1
# Workbench choice: deltas this small are mostly overhead and rounding; they carry no divisor information.
MIN_DELTA_TOKENS = 50.0


def group_of(f: RequestFeatures) -> str:
    """The set's prefix group (``RequestFeatures.group``)."""
    return f.group


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


@dataclass(frozen=True)
class FitRows:
    """What ``fit_family`` reads of its sets, read once for the fits of many subsets of them (the study's folds):
    the call-to-call deltas and targets of every set, set after set, with the set each row is from, and each set's
    first comparable call and prefix group."""

    deltas: np.ndarray  # (rows, 6) float
    targets: np.ndarray  # (rows,)
    owner: np.ndarray  # (rows,) the set's place
    first_counts: np.ndarray  # (sets, 6) the first comparable call's counts (zeros where none)
    first_prompt: np.ndarray  # (sets,) its reported prompt (NaN where none)
    has_first: np.ndarray  # (sets,) bool
    groups: tuple[str, ...]

    @classmethod
    def of(cls, sets: Sequence[RequestFeatures], base: Estimator) -> FitRows:
        deltas, targets, owner = [], [], []
        first_counts = np.zeros((len(sets), len(COUNT_COLUMNS)), dtype=float)
        first_prompt = np.full(len(sets), np.nan)
        has_first = np.zeros(len(sets), dtype=bool)
        for k, f in enumerate(sets):
            comparable = f.comparable
            ok = f.extends[1:] & comparable[1:] & comparable[:-1]
            if ok.any():
                d = (f.counts[1:] - f.counts[:-1])[ok].astype(float)
                deltas.append(d)
                targets.append(
                    (f.prompt[1:] - f.prompt[:-1])[ok]
                    - d[:, 4] * base.per_message
                    - d[:, 5] * base.per_tool_call
                )
                owner.append(np.full(len(d), k))
            i = first_comparable(f)
            if i is not None:
                first_counts[k], first_prompt[k], has_first[k] = f.counts[i], f.prompt[i], True
        join = np.concatenate
        return cls(
            np.vstack(deltas) if deltas else np.zeros((0, len(COUNT_COLUMNS))),
            join(targets) if targets else np.zeros(0),
            join(owner) if owner else np.zeros(0, dtype=np.int64),
            first_counts,
            first_prompt,
            has_first,
            tuple(f.group for f in sets),
        )

    def take(self, keep: np.ndarray) -> FitRows:
        """The rows of the sets ``keep`` (a mask over the sets) holds, in order."""
        rows = keep[self.owner]
        place = np.cumsum(keep) - 1  # a kept set's place among the kept
        return FitRows(
            self.deltas[rows],
            self.targets[rows],
            place[self.owner[rows]],
            self.first_counts[keep],
            self.first_prompt[keep],
            self.has_first[keep],
            tuple(g for g, k in zip(self.groups, keep.tolist(), strict=True) if k),
        )


def fit_family(
    family: str,
    sets: Sequence[RequestFeatures],
    base: Estimator | None = None,
    *,
    classes: bool = True,
    rows: FitRows | None = None,
) -> Fit:
    """Fit the two divisors on consecutive calls, then the prefix per group on first calls (docs/estimator.md,
    "Fitting, honestly"). The per-message and per-tool-call overheads stay at ``base``'s values (with them free the
    fit trades them against the divisors). ``classes=False``: without the second fit, tool arguments and results
    apart (``class_chars_per_token`` left empty; the estimator is the same). ``rows``: ``FitRows.of(sets, base)``,
    read already."""
    base = base or Estimator()
    rows = rows if rows is not None else FitRows.of(sets, base)
    if len(rows.groups) != len(sets):
        raise ValueError(f"rows of {len(rows.groups)} sets given for {len(sets)} sets")
    notes: list[str] = []
    coef: list[float | None] = [None, None]
    per_class: dict[str, float | None] = {}
    n = 0
    usable = int((rows.targets > MIN_DELTA_TOKENS).sum())
    if not len(rows.targets):
        notes.append("no consecutive calls with reported usage: ADR-107's divisors kept")
    elif usable < MIN_FIT_DELTAS:
        notes.append(
            f"too little data to fit divisors ({usable} call-to-call deltas, {MIN_FIT_DELTAS} needed): "
            "ADR-107's kept"
        )
    else:
        d, b = rows.deltas, rows.targets
        x, se, n = _robust_fit(np.column_stack([d[:, 0], d[:, 1] + d[:, 2] + d[:, 3]]), b)
        coef = [_identified(v, e) for v, e in zip(x, se, strict=True)]
        if classes:
            by_class, se_class, _ = _robust_fit(np.column_stack([d[:, 0], d[:, 1], d[:, 2] + d[:, 3]]), b)
            per_class = {
                c: (1.0 / v if (v := _identified(x_, e_)) else None)
                for c, x_, e_ in zip(("prose", "tool_args", "tool_result"), by_class, se_class, strict=True)
            }
            unidentified = [c for c, v in per_class.items() if v is None]
            if unidentified:
                notes.append(
                    f"chars per token not identifiable from these runs for: {', '.join(unidentified)}"
                )
    divs = []
    for k, (name, adr) in enumerate((("prose", PROSE_CHARS_PER_TOKEN), ("dense", DENSE_CHARS_PER_TOKEN))):
        value = coef[k]
        if value is not None:
            divs.append(1.0 / value)
        else:
            divs.append(adr)
            if len(rows.targets) and usable >= MIN_FIT_DELTAS:
                notes.append(f"{name} divisor not identifiable from these runs: ADR-107's {adr} kept")
    est = base.with_(prose_divisor=divs[0], dense_divisor=divs[1], prefix_tokens=0.0, name="fitted")
    residuals: dict[str, list[float]] = {}
    firsts = rows.first_prompt - adr_tokens(rows.first_counts, est)  # first_call_residual, every set at once
    for g, r, known in zip(rows.groups, firsts.tolist(), rows.has_first.tolist(), strict=True):
        if known:
            residuals.setdefault(g, []).append(r)
    prefix = {}
    for g, v in sorted(residuals.items()):
        prefix[g] = unseen_prefix(float(np.median(v)))
        if prefix[g] == 0.0 and np.median(v) < 0:
            notes.append(
                f"{g}: first calls over-counted by {-np.median(v):,.0f} tokens (median): no unseen prefix (0)"
            )
    return Fit(
        family,
        divs[0],
        divs[1],
        base.per_message,
        base.per_tool_call,
        prefix,
        turns=n,
        runs=len(np.unique(rows.owner)),
        notes=tuple(notes),
        class_chars_per_token=per_class,
    )


def unseen_prefix(residual: float) -> float:
    """The unseen prefix a first-call residual stands for: tokens the provider counted that the transcript does
    not show. It cannot be negative; a negative residual means the estimate over-counted (the divisors' error),
    and a negative prefix would drive estimates of small requests below zero."""
    return max(0.0, residual)


def _identified(tokens_per_char: float, se: float) -> float | None:
    """The coefficient, or None when the data do not pin it down: zero, a standard error above
    ``MAX_RELATIVE_SE`` of it, or characters per token outside any real tokenizer's range."""
    if not np.isfinite(tokens_per_char) or tokens_per_char <= 1e-6:
        return None
    if not np.isfinite(se) or se > MAX_RELATIVE_SE * tokens_per_char:
        return None
    low, high = PLAUSIBLE_CHARS_PER_TOKEN
    return tokens_per_char if low <= 1.0 / tokens_per_char <= high else None


def _robust_fit(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Tokens per character for each column and their standard errors: NNLS on relative errors, refined with a
    soft-L1 loss; the errors from the linearised fit (``inf`` where a column is not determined)."""
    keep = b > MIN_DELTA_TOKENS
    if not keep.any():
        return np.zeros(a.shape[1]), np.full(a.shape[1], np.inf), 0
    # relative errors: every call delta weighs the same, so one huge delta cannot set the divisor
    w = 1.0 / b[keep]
    aw, bw = a[keep] * w[:, None], b[keep] * w
    start, _ = nnls(aw, bw)
    # robust refinement: calls whose recorded content was not what was sent (an agent that truncates
    # observations before sending them) are outliers, not evidence
    fit = least_squares(
        lambda x: aw @ x - bw, start, bounds=(0.0, np.inf), loss="soft_l1", f_scale=ROBUST_RELATIVE_SCALE
    )
    return fit.x, _standard_errors(aw, aw @ fit.x - bw), int(keep.sum())


def _standard_errors(a: np.ndarray, residuals: np.ndarray) -> np.ndarray:
    """Standard errors of a linear least-squares fit; ``inf`` for a column the calls never exercise (or, if
    the rest are collinear, for every column)."""
    total, k = a.shape
    se = np.full(k, np.inf)
    used = np.flatnonzero(np.abs(a).sum(axis=0) > 0)
    if total <= len(used) or not len(used):
        return se
    sub = a[:, used]
    gram = sub.T @ sub
    if np.linalg.matrix_rank(gram) < len(used):
        return se
    s2 = float(residuals @ residuals) / (total - len(used))
    se[used] = np.sqrt(np.clip(np.diag(s2 * np.linalg.inv(gram)), 0.0, None))
    return se


def first_comparable(f: RequestFeatures) -> int | None:
    """The place of the run's first comparable call (``None``: none)."""
    ok = np.flatnonzero(f.comparable)
    return int(ok[0]) if len(ok) else None


def first_call_residual(f: RequestFeatures, est: Estimator) -> float | None:
    """Reported prompt minus the transcript-only estimate at the run's first comparable call (``FitRows`` reads
    the same for many sets at once)."""
    i = first_comparable(f)
    return None if i is None else float(f.prompt[i] - adr_tokens(f.counts[i], est))
