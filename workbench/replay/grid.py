"""Grids: a dict of parameter -> values (their cartesian product over a base rule set) or a list of Policies."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.govern.policy import Policy

Grid = Mapping[str, Sequence[Any]] | Sequence[Policy]


def expand(grid: Grid, base: Policy | str = "current") -> tuple[list[Policy], list[str]]:
    """The policies of a grid, and the grid's parameter names (the sweep's extra columns)."""
    if isinstance(grid, Mapping):
        root = Policy.named(base) if isinstance(base, str) else base
        keys = list(grid)
        if not keys:
            return [root], []
        policies = []
        for values in itertools.product(*(list(grid[k]) for k in keys)):
            over = dict(zip(keys, values, strict=True))
            rules = over.pop("rules", None)
            p = Policy.named(rules, **{**root.overrides(), **over}) if rules else root.replace(**over)
            policies.append(p)
        return policies, keys
    policies = list(grid)
    for p in policies:
        if not isinstance(p, Policy):
            raise TypeError(f"a grid list must hold Policy objects, got {type(p).__name__}")
    return policies, []


def parse_range(text: str) -> list[int]:
    """``START:STOP:STEP`` (STOP inclusive) as a list of ints; a plain number is a one-value range."""
    parts = text.split(":")
    try:
        nums = [int(p.replace("_", "").replace(",", "")) for p in parts]
    except ValueError:
        raise ValueError(f"not a range START:STOP:STEP of integers: {text!r}") from None
    if len(nums) == 1:
        return nums
    if len(nums) != 3 or nums[2] <= 0 or nums[1] < nums[0]:
        raise ValueError(f"not a range START:STOP:STEP with STEP > 0 and STOP >= START: {text!r}")
    start, stop, step = nums
    return list(range(start, stop + 1, step))
