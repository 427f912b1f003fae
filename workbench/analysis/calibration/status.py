"""A row's status from what its evidence argues (``keep``, ``evidence points elsewhere: <row>``,
``recommended``; docs/calibrate.md, the statuses)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from workbench.analysis.calibration.model import ELSEWHERE, KEEP, NOT_ENOUGH, RECOMMENDED, ConstantRow
from workbench.format import cell


def not_enough(why: str, **fields: Any) -> ConstantRow:
    """A ``not enough data`` row: no recommendation, no band; ``why`` says what is missing."""
    return ConstantRow(status=NOT_ENOUGH, recommended=None, band=None, why=why, **fields)


def keep(row: ConstantRow, why: str) -> ConstantRow:
    """``row`` as ``keep``: the value in use holds (the rule's band stays, as context)."""
    return replace(row, status=KEEP, recommended=None, value=row.in_use, why=why)


def elsewhere(row: ConstantRow, points_to: str, why: str) -> ConstantRow:
    """``row`` as ``evidence points elsewhere: <points_to>``, the figure its rule computed kept in ``value``."""
    return replace(
        row, status=ELSEWHERE, recommended=None, value=row.recommended, points_to=points_to, why=why
    )


def same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return False
    try:
        return bool(abs(float(a) - float(b)) < 1e-9)
    except (TypeError, ValueError):
        return bool(a == b)


def settle(row: ConstantRow) -> ConstantRow:
    """A recommended row whose value is the value in use says ``keep``."""
    if row.status == RECOMMENDED and same(row.recommended, row.in_use):
        return keep(row, f"the rule gives the value in use, {cell(row.in_use)}")
    return row
