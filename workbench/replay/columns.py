"""The sweep's columns as one spec (``workbench.trace.columns.Column``): names, dtypes, how a value is read from a
:class:`~workbench.replay.result.ReplayResult`, what it means.

``RESULT_COLUMNS`` are one result's row (``ReplayResult.row()``, the governor path) and the fast path's block
keys; ``SWEEP_COLUMNS`` adds what the sweep itself sets. The sweep's arrays, its nullable integers (``-1`` in a
block, ``<NA>`` in the frame) and the table in docs/frames.md all come from here.
"""

from __future__ import annotations

from typing import Any

from workbench.trace.columns import Column, names, of_dtype

# The items are ReplayResults (workbench.replay.result imports this module, so it is not named here).
ReplayResult = Any


def _own(name: str, dtype: str, doc: str) -> Column[ReplayResult]:
    """A column that is the result's attribute of the same name."""
    return Column(name, dtype, name, doc)


def _meter(field: str, none: Any) -> Any:
    return lambda r: none if r.meter is None else getattr(r.meter, field)


_STOPS = (
    "done, budget, turn-cap, empty, no-progress, tool-timeouts, stuck, deadline, error, context-truncated"
)
_VERDICTS = "budget_stop, turn_cap, empty_response, unverified_success, provider_failure, context_truncated"

RESULT_COLUMNS: tuple[Column[ReplayResult], ...] = (
    _own("run_id", "object", "the run (a session's segment: `#sN` suffix)"),
    _own("segment", "Int64", "the segment's index in its session; <NA> for a whole run"),
    _own("rules", "object", "the policy's rule set"),
    _own("grant", "int64", "the policy's grant (plus one column per grid parameter, and `policy_index`)"),
    _own("policy_label", "object", "the policy's label"),
    _own(
        "stop_reason",
        "object",
        f"{_STOPS}, a recorded reason for a run that finished on its own, or end-of-recording (censored)",
    ),
    _own("stop_turn", "int64", "0-based index of the last call the policy would have made (-1: none)"),
    _own("verdict", "object", f"{_VERDICTS}; None when censored"),
    Column("meter", "object", _meter("name", ""), 'the bound that ended the run ("" when none)'),
    Column("meter_reached", "int64", _meter("reached", 0), "its reading (cost: spent at land)"),
    Column("meter_allowed", "int64", _meter("allowed", 0), "its bound (cost: the grant)"),
    _own("spent", "int64", "the cost meter at the stop"),
    _own("raw", "int64", "raw tokens (prompt + completion) at the stop"),
    _own("landing_started_at", "Int64", "turn whose end ordered a landing (deadline: the turn it preceded)"),
    _own("landing_kind", "object", "`budget` or `deadline`"),
    _own("wrapup_at", "Int64", "turn after which the wrap-up warning was injected"),
    _own("concluded_at", "Int64", "turn after which the conclude directive was injected"),
    _own("diverges_at", "Int64", "first recorded turn whose prompt the policy would have changed"),
    _own("censored", "bool", "the recording was cut by a limit before this policy stopped it: a lower bound"),
    _own("cut_turns", "int64", "recorded turns after the stop"),
    _own("cut_tokens", "int64", "their raw tokens"),
    _own("cut_tool_calls", "int64", "their tool calls"),
    _own("cut_mutations", "int64", "those of them that changed the workspace"),
    _own(
        "good_outcome_after_cut",
        "bool",
        "the recording's good outcome (resolved, or done) came after the cut",
    ),
    _own("recorded_stop", "object", "the recording's own stop reason"),
    _own("turns", "int64", "recorded turns"),
    _own("turns_replayed", "int64", "calls the policy made"),
    _own("timed", "bool", "deadline rules applied (the run has timestamps and the policy a deadline)"),
    _own("n_events", "int64", "decisions in the timeline (`replay(...).to_frame()` has them)"),
    _own("stop_basis", "object", "a no-progress stop read `recorded` facts or an `inferred` workspace fact"),
    _own(
        "unjudged_at", "Int64", "first turn the no-progress guard could not judge; <NA>: it judged every one"
    ),
)
"""One result's columns, in the sweep's order."""

SWEEP_COLUMNS: tuple[Column[ReplayResult], ...] = (
    *RESULT_COLUMNS,
    Column("path", "object", None, '"fast" or "governor": which path answered the row'),
    Column("policy_index", "int64", None, "the policy's position in the grid"),
)
"""``sweep()``'s columns, in order (grid parameters that are not among them follow)."""

RESULT_FIELDS = names(RESULT_COLUMNS)
COLUMNS = names(SWEEP_COLUMNS)
NULLABLE = of_dtype(SWEEP_COLUMNS, "Int64")
"""Integers that may be unknown: ``-1`` in a block's arrays, ``<NA>`` in the frame."""
INTEGERS = of_dtype(SWEEP_COLUMNS, "int64", "Int64")
BOOLEANS = of_dtype(SWEEP_COLUMNS, "bool")
