"""Where a policy's saving changes sign along its whole axis (mask size, window), solved rather than read off a
sweep: :func:`solve` bills a coarse grid up to the axis's end (where the policy changes nothing) and bisects every
sign change it finds, on the point bill and, apart, on the bill with no cache; with none, it says so, with the grid
it billed (docs/counterfactual-bills.md, "Break-even along the whole axis").

Call signature::

    found = solve(runs, "mask")             # BreakEven: crossings, or none, over the grid billed
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from workbench.replay.bill import observations
from workbench.trace.schema import Run

Axis = Literal["mask", "context_length"]
WINDOW_STEP = 1024  # tokens: the resolution a window's break-even is bisected to
MIN_WINDOW = 8192  # the smallest window billed (a smaller one leaves no room past the agent's own prefix)


@dataclass(frozen=True)
class BreakEven:
    """The sign changes of one saving along one axis. ``grid``: every setting billed, with its saving (USD,
    recorded minus counterfactual); ``crossings``: where the saving changes sign (the last setting before the
    change and the first after, bisected to adjacent settings); ``end``: the axis's last setting (a mask keeping
    every tool result of the longest run; the first window on the grid that prunes nothing, at most four times the
    longest recorded prompt)."""

    axis: Axis
    how: str
    grid: tuple[tuple[int, float], ...]
    crossings: tuple[tuple[int, int], ...]
    end: int

    def words(self) -> str:
        """One line: the crossings, or that there is none over the whole axis, with the saving's range."""
        name = "mask size" if self.axis == "mask" else "context length"
        lo, hi = self.grid[0][0], self.end
        if self.crossings:
            at = "; ".join(f"between {a:,} and {b:,}" for a, b in self.crossings)
            return f"Break-even {name} ({self.how}): the saving changes sign {at}"
        live = [(x, s) for x, s in self.grid if s != 0]
        end = (
            f"a mask of {hi:,} keeps every tool result of the longest run"
            if self.axis == "mask"
            else f"a window of {hi:,} is where the sweep ends: nothing is pruned there, or it is four times the "
            "longest recorded prompt"
        )
        if not live:
            return f"Break-even {name} ({self.how}): none; no setting from {lo:,} to {hi:,} changes the bill ({end})"
        worst = min(live, key=lambda p: p[1])
        best = max(live, key=lambda p: p[1])
        sign = "saves" if worst[1] > 0 else "costs more"
        return (
            f"Break-even {name} ({self.how}): none from {lo:,} to {hi:,} ({end}): it {sign} at every setting "
            f"that changes the bill ({len(live)} of {len(self.grid)} billed), saving ${best[1]:,.2f} at best "
            f"({best[0]:,}) and ${worst[1]:,.2f} at worst ({worst[0]:,})"
        )


def axis_end(runs: Sequence[Run], axis: Axis) -> int:
    """The setting from which the policy changes nothing: the most tool results any run has (a mask keeping
    that many masks none), or the longest recorded prompt (a window that long prunes nothing)."""
    if axis == "mask":
        return max((max(observations(r.messages), default=-1) + 1 for r in runs), default=0)
    return max((t.usage.prompt or 0 for r in runs for t in r.turns), default=0)


def coarse_grid(axis: Axis, end: int) -> list[int]:
    """The settings billed first: masks 0, 1, 2, 3, 5, 8, 13 … (about x1.6) up to the end; windows from
    ``MIN_WINDOW`` doubling by half-steps (x1.41) up to the end, on whole ``WINDOW_STEP``s."""
    out: set[int] = set()
    if axis == "mask":
        x = 0.0
        while x < end:
            out.add(int(x))
            x = max(x + 1, x * 1.6)
    else:
        x = float(MIN_WINDOW)
        while x < end:
            out.add(int(x) // WINDOW_STEP * WINDOW_STEP)
            x *= math.sqrt(2)
    out.add(end)
    return sorted(out)


def _saving(runs: Sequence[Run], axis: Axis, x: int, options: dict[str, Any]) -> tuple[float, float]:
    """The corpus's saving in USD at setting ``x``: the model's point bill, and the bill with no cache."""
    from workbench.replay.bill_sweep import bill_grid, grid_totals

    cell: dict[str, Any] = {"masks": (x,)} if axis == "mask" else {"context_lengths": (x,)}
    row = grid_totals(bill_grid(runs, **cell, **options)).iloc[0]
    saved = float(row["saved_usd"]) if row["saved_usd"] == row["saved_usd"] else 0.0
    unc = row.get("saved_uncached_share")
    rec = float(row["recorded_usd"]) if row["recorded_usd"] == row["recorded_usd"] else 0.0
    return saved, (float(unc) * rec if unc is not None and unc == unc else 0.0)


def _component(both: Callable[[int], tuple[float, float]], k: int, x: int) -> float:
    """The ``k``-th of the two savings at setting ``x``: a named function, so each bisection reads one."""
    return both(x)[k]


def _bisect(f: Callable[[int], float], a: int, b: int, fa: float, step: int) -> tuple[int, int]:
    """Narrow a sign change of ``f`` between settings ``a`` < ``b`` to settings ``step`` apart."""
    while b - a > step:
        m = (a + b) // 2 // step * step
        if m <= a or m >= b:
            break
        fm = f(m)
        if (fm < 0) == (fa < 0) and fm != 0:
            a, fa = m, fm
        else:
            b = m
    return a, b


def solve(
    runs: Sequence[Run],
    axis: Axis,
    *,
    governed: bool = False,
    rules: str = "current",
    grid: Sequence[int] | None = None,
    **policy: Any,
) -> tuple[BreakEven, BreakEven]:
    """The break-even of ``axis`` over ``runs``, as billed (the model's point bill) and billed with no cache.
    ``grid``: the settings billed first (default :func:`coarse_grid` to :func:`axis_end`)."""
    runs = list(runs)
    end = axis_end(runs, axis)
    xs = sorted(set(grid)) if grid is not None else coarse_grid(axis, end)
    options: dict[str, Any] = {"governed": governed, "rules": rules, **policy}
    memo: dict[int, tuple[float, float]] = {}

    def both(x: int) -> tuple[float, float]:
        if x not in memo:
            memo[x] = _saving(runs, axis, x, options)
        return memo[x]

    if axis == "context_length" and grid is None:
        # a window as long as the longest prompt may still prune (the manager keeps room for the reply): widen
        # until the bill no longer changes, up to four times the longest prompt
        while both(xs[-1]) != (0.0, 0.0) and xs[-1] < 4 * end:
            xs.append(int(xs[-1] * math.sqrt(2)) // WINDOW_STEP * WINDOW_STEP)
        end = xs[-1]

    step = 1 if axis == "mask" else WINDOW_STEP
    out = []
    for k, how in ((0, "as billed"), (1, "billed with no cache")):
        values = [(x, both(x)[k]) for x in xs]
        crossings = []
        for (a, fa), (b, fb) in itertools.pairwise(values):
            if fa != 0 and fb != 0 and (fa < 0) != (fb < 0):
                crossings.append(_bisect(functools.partial(_component, both, k), a, b, fa, step))
        out.append(BreakEven(axis, how, tuple(values), tuple(crossings), end))
    return out[0], out[1]
