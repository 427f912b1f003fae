"""The per-turn facts a replay feeds the governor, read once from a Run.

Usage ``None`` stays ``None``; results align with their calls by call id, else by position (a call without a result
counts as withheld content); ``mutated`` ``None`` is never "no change" (docs/governors.md §1.3). A run is ``timed``
only when every turn has both ``started_at`` and ``ended_at``; untimed runs get no deadline rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.govern.governor import Reply
from workbench.govern.noprogress import MUTATION_TOOLS, CallFact, ResultFact
from workbench.trace.schema import Event, EventKind, Run, Turn, Usage

Spend = tuple[int, int, int, int]
"""Tool-side model spend: (prompt, cached, completion, calls)."""

# The event kinds the live loop records for tool-side spend and for the leaf's own landing check (self-close).
TOOL_SPEND = EventKind.TOOL_SPEND
SELF_CLOSE = EventKind.SELF_CLOSE
STANDING_FINDING = EventKind.STANDING_FINDING


@dataclass(frozen=True, slots=True)
class TurnFacts:
    reply: Reply
    results: tuple[ResultFact, ...]
    mutated: bool | None
    started_s: float | None
    ended_s: float | None
    tool_spend: tuple[Spend, ...] = ()
    """Usage its tools' own model calls reported (``ToolResult.usage``, ``tool-spend`` events of the turn)."""
    closing: tuple[tuple[str, str], ...] = ()
    """(kind, note) of each finding the leaf's landing check put back to it after this turn's final answer."""
    mutated_inferred: bool = False
    """``mutated`` was inferred from the calls (``Turn.mutated_rule``), not recorded."""

    @property
    def inferred_mutation(self) -> bool:
        if self.mutated is not None:
            return self.mutated
        return any(c.name in MUTATION_TOOLS for c in self.reply.calls)

    @property
    def raw_tokens(self) -> int:
        return (self.reply.prompt or 0) + (self.reply.completion or 0)


@dataclass(frozen=True, slots=True)
class RunFacts:
    run_id: str
    turns: tuple[TurnFacts, ...]
    timed: bool
    missing_usage: int
    unrecorded_mutation: int
    """Tool turns whose workspace fact is unknown."""
    opening_spend: tuple[Spend, ...] = ()
    """Tool-side spend recorded before any turn (``tool-spend`` events without a turn)."""
    inferred_mutation_turns: int = 0
    """Tool turns whose workspace fact was inferred from the calls."""


def usage_spend(usage: Usage) -> Spend:
    return (usage.prompt or 0, usage.cached or 0, usage.completion or 0, 1)


def event_spend(event: Event) -> Spend:
    d = event.data

    def count(key: str, default: int = 0) -> int:
        value = d.get(key, default)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default

    return (count("prompt"), count("cached"), count("completion"), count("calls", 1))


def call_facts(turn: Turn) -> tuple[CallFact, ...]:
    """A turn's tool calls as the guards see them."""
    return tuple(CallFact(c.name, c.arguments, c.id) for c in turn.tool_calls)


def result_facts(turn: Turn) -> tuple[ResultFact, ...]:
    """A turn's results, one per call, aligned by call id (else by position)."""
    calls, results = turn.tool_calls, turn.tool_results
    if (
        len(calls) == 1
        and len(results) == 1
        and calls[0].id is not None
        and results[0].call_id == calls[0].id
    ):
        r = results[0]  # the common case, answered as the general one below would
        return (ResultFact(r.sha256 or r.digest(), r.is_error, r.timed_out, r.content),)
    by_id = {r.call_id: r for r in turn.tool_results if r.call_id is not None}
    out: list[ResultFact] = []
    for i, call in enumerate(turn.tool_calls):
        found = by_id.get(call.id) if call.id is not None else None
        if found is None and i < len(turn.tool_results) and not by_id:
            found = turn.tool_results[i]
        if found is None:
            out.append(ResultFact(None))
        else:
            # The recorded hash identifies the content (ToolResult.of and the importers set it from the content).
            out.append(
                ResultFact(found.sha256 or found.digest(), found.is_error, found.timed_out, found.content)
            )
    return tuple(out)


def usage_unknown(run: Run) -> str | None:
    """Why a cost replay of ``run`` cannot be done — no call recorded its usage — or ``None`` when some did.

    The reason is the importer's own lossy note about usage where it wrote one (e.g. SWE-agent keeps only run
    totals), so the message says what the source lacks rather than guessing 0."""
    if not run.turns or any(t.usage.known for t in run.turns):
        return None
    why = next((n for n in run.lossy if "usage" in n), None)
    return why or "no call in this run recorded its token usage"


def run_facts(run: Run) -> RunFacts:
    spend_events: dict[int | None, list[Spend]] = {}
    closing: dict[int, list[tuple[str, str]]] = {}
    for e in run.events:
        if e.kind == TOOL_SPEND:
            spend_events.setdefault(e.turn, []).append(event_spend(e))
        elif e.kind in (SELF_CLOSE, STANDING_FINDING) and e.turn is not None and "finding" in e.data:
            closing.setdefault(e.turn, []).append(
                (str(e.data.get("finding", "")), str(e.data.get("note", "")))
            )
    t0 = run.turns[0].started_at if run.turns else None
    timed = bool(run.turns) and all(t.started_at is not None and t.ended_at is not None for t in run.turns)
    turns: list[TurnFacts] = []
    for t in run.turns:
        u = t.usage
        reply = Reply(
            prompt=u.prompt,
            cached=u.cached,
            completion=u.completion,
            finish_reason=t.finish_reason,
            text=t.text,
            calls=call_facts(t),
            format_error=t.format_error is not None,
        )
        started = ended = None
        if timed and t0 is not None and t.started_at is not None and t.ended_at is not None:
            started = (t.started_at - t0).total_seconds()
            ended = (t.ended_at - t0).total_seconds()
        spend = tuple(usage_spend(r.usage) for r in t.tool_results if r.usage is not None)
        spend += tuple(spend_events.get(t.index, ()))
        turns.append(
            TurnFacts(
                reply,
                result_facts(t),
                t.mutated,
                started,
                ended,
                spend,
                tuple(closing.get(t.index, ())),
                t.mutated_rule is not None and t.mutated is not None,
            )
        )
    return RunFacts(
        run_id=run.run_id,
        turns=tuple(turns),
        timed=timed,
        missing_usage=sum(1 for t in run.turns if not t.usage.known),
        unrecorded_mutation=sum(1 for t in run.turns if t.mutated is None and t.tool_calls),
        opening_spend=tuple(spend_events.get(None, ())),
        inferred_mutation_turns=sum(
            1 for t in run.turns if t.tool_calls and t.mutated is not None and t.mutated_rule is not None
        ),
    )
