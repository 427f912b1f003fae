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


def _attr(name: str, dtype: str, doc: str) -> Column[ReplayResult]:
    return Column(name, dtype, lambda r: getattr(r, name), doc)


def _meter(r: ReplayResult, field: str, none: Any) -> Any:
    return none if r.meter is None else getattr(r.meter, field)


RESULT_COLUMNS: tuple[Column[ReplayResult], ...] = (
    _attr("run_id", "object", "the run (a session's segment: `#sN` suffix)"),
    _attr("segment", "Int64", "the segment's index in its session; <NA> for a whole run"),
    _attr("rules", "object", "the policy's rule set"),
    _attr("grant", "int64", "the policy's grant (plus one column per grid parameter, and `policy_index`)"),
    _attr("policy_label", "object", "the policy's label"),
    _attr(
        "stop_reason",
        "object",
        "done, budget, turn-cap, empty, no-progress, tool-timeouts, stuck, deadline, error, context-truncated, a "
        "recorded reason for a run that finished on its own, or end-of-recording (censored)",
    ),
    _attr("stop_turn", "int64", "0-based index of the last call the policy would have made (-1: none)"),
    _attr(
        "verdict",
        "object",
        "budget_stop, turn_cap, empty_response, unverified_success, provider_failure, context_truncated; None "
        "when censored",
    ),
    Column(
        "meter",
        "object",
        lambda r: _meter(r, "name", ""),
        'the bound that ended the run (cost, turns, deadline, no-progress, tool-timeouts; "" when none)',
    ),
    Column("meter_reached", "int64", lambda r: _meter(r, "reached", 0), "its reading (cost: spent at land)"),
    Column("meter_allowed", "int64", lambda r: _meter(r, "allowed", 0), "its bound (cost: the grant)"),
    _attr("spent", "int64", "the cost meter at the stop"),
    _attr("raw", "int64", "raw tokens (prompt + completion) at the stop"),
    _attr(
        "landing_started_at",
        "Int64",
        "turn whose end ordered a landing (deadline landings: the turn it preceded)",
    ),
    _attr("landing_kind", "object", "`budget` or `deadline`"),
    _attr("wrapup_at", "Int64", "turn after which the wrap-up warning was injected"),
    _attr("concluded_at", "Int64", "turn after which the conclude directive was injected"),
    _attr("diverges_at", "Int64", "first recorded turn whose prompt the policy would have changed"),
    _attr(
        "censored", "bool", "the recording was cut by a limit before this policy stopped it: a lower bound"
    ),
    _attr("cut_turns", "int64", "recorded turns after the stop"),
    _attr("cut_tokens", "int64", "their raw tokens"),
    _attr("cut_tool_calls", "int64", "their tool calls"),
    _attr("cut_mutations", "int64", "those of them that changed the workspace"),
    _attr(
        "good_outcome_after_cut",
        "bool",
        "the recording's good outcome (label resolved, or done) came after the cut",
    ),
    _attr("recorded_stop", "object", "the recording's own stop reason"),
    _attr("turns", "int64", "recorded turns"),
    _attr("turns_replayed", "int64", "calls the policy made"),
    _attr("timed", "bool", "deadline rules applied (the run has timestamps and the policy a deadline)"),
    _attr("n_events", "int64", "decisions in the timeline (`replay(...).to_frame()` has them)"),
    _attr(
        "stop_basis",
        "object",
        "for a no-progress stop: whether it read `recorded` facts or an `inferred` workspace fact",
    ),
    _attr(
        "unjudged_at",
        "Int64",
        "first turn (at or before the stop) where the no-progress guard could not judge; <NA>: it judged every turn",
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
