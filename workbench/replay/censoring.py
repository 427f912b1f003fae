"""How a recording ended, read for censoring and for "was the good outcome cut?" (docs/architecture.md, "Replay
semantics" 4).

An unrecorded stop reason counts as finished on its own only when the last turn made no tool calls or called a
finish tool; ``good_outcome`` is ``Outcome.label == "resolved"`` or a recorded ``done``.
"""

from __future__ import annotations

from workbench.govern.openhands import FINISH_TOOLS
from workbench.govern.verdict import StopReason
from workbench.trace.schema import Run

GOOD_LABELS = frozenset({"resolved"})  # docs/architecture.md: an external label such as "resolved"


def finished_on_own(run: Run) -> bool:
    o = run.outcome
    if o.cut_by_limit:
        return False
    if o.stop_reason is not None:
        return True
    if not run.turns:
        return True
    last = run.turns[-1]
    return not last.tool_calls or any(c.name in FINISH_TOOLS for c in last.tool_calls)


def good_outcome(run: Run) -> bool:
    o = run.outcome
    return (o.label in GOOD_LABELS) or o.stop_reason == StopReason.DONE
