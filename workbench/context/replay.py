"""Context replay: run ADR-107's manager over a recorded run under a policy's context fields (docs/context.md,
"Context replay": the counterfactual transcript, uncompacted after a source's own compaction, and the unseen prefix).

Call signature (the replay engine calls it only when ``policy.context_length is not None``)::

    replay_context(run, policy, *, prefix_tokens=None, estimator=None) -> ContextReplay
"""

from __future__ import annotations

import html
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from itertools import takewhile
from typing import Any

import pandas as pd

from workbench.context.manager import ContextWindowManager, FitResult
from workbench.estimate.constants import STRATEGIES
from workbench.estimate.estimator import Estimator
from workbench.estimate.fit import fit_family, group_of
from workbench.estimate.requests import family_of, features
from workbench.estimate.tokenizers import counter_for_model
from workbench.trace.schema import Event, Message, Run, Turn

ESTIMATORS: tuple[str, ...] = STRATEGIES  # one list of strategies: workbench.estimate.constants
# The Claude Code importer marks the summary a compaction continues from (workbench/importers/claude_code.py).
REWRITE_KINDS = frozenset({"compact-summary"})
_OUTLINED = lru_cache(maxsize=4096)(Event)  # an outline's events: one (frozen) object per (turn, kind)


@dataclass(frozen=True)
class ContextRow:
    turn: int
    estimate: float | None
    calibrated_estimate: float | None
    actual_prompt: int | None
    budget: int
    action: str
    pruned_turns: int
    tokens_before: int
    tokens_after: int
    truncated: bool
    rewritten: bool
    factor: float


@dataclass(frozen=True)
class ContextReplay:
    """What ADR-107's manager would have done on one recorded run under one policy."""

    run_id: str
    estimator: str
    context_length: int | None
    budget: int
    prefix_tokens: float
    rows: tuple[ContextRow, ...]
    events: list[Event] = field(default_factory=list)
    first_prune_at: int | None = None
    truncated_at: int | None = None
    notes: tuple[str, ...] = ()

    def outline(self) -> ContextReplay:
        """This replay without its per-turn rows, its events cut to kind and turn (one object per pair, so a share's
        pickle holds each once): what a governor's replay and the heat map read of it, small enough to send between
        processes (with each event's words, a share's outlines held 2.4 MB a copy of the shared traces; now 0.3)."""
        return replace(self, rows=(), events=[_OUTLINED(turn=e.turn, kind=e.kind) for e in self.events])

    @property
    def first_fire_at(self) -> int | None:
        """First turn where the transcript did not fit (pruned, deferred or truncated)."""
        return next((r.turn for r in self.rows if r.action != "send"), None)

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([asdict(r) for r in self.rows])

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "estimator": self.estimator,
            "context_length": self.context_length,
            "budget": self.budget,
            "prefix_tokens": self.prefix_tokens,
            "first_prune_at": self.first_prune_at,
            "truncated_at": self.truncated_at,
            "events": [e.model_dump(mode="json") for e in self.events],
            "notes": list(self.notes),
        }

    def _repr_html_(self) -> str:
        head = (
            f"<b>Context replay</b> {html.escape(self.run_id)} — estimator {html.escape(self.estimator)}, budget "
            f"{self.budget:,} tokens; first prune at {self.first_prune_at}; truncated at {self.truncated_at}"
        )
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return f"<p>{head}</p><ul>{notes}</ul>{self.to_frame().to_html(index=False, float_format='{:.0f}'.format)}"

    def __repr__(self) -> str:
        return (
            f"ContextReplay(run_id={self.run_id!r}, estimator={self.estimator!r}, budget={self.budget}, "
            f"first_prune_at={self.first_prune_at}, truncated_at={self.truncated_at})"
        )


def _field(policy: Any, name: str, default: Any = None) -> Any:
    return getattr(policy, name, default)


def estimator_for(run: Run, name: str) -> tuple[Estimator, str | None]:
    """The estimator a policy's ``estimator`` name stands for on this run, and a note when it matters."""
    if name in ("adr", "anchored"):
        return Estimator(), None
    if name == "fitted":
        fit = fit_family(family_of(run.model), [features(run)])
        return fit.estimator(group_of(features(run))).with_(prefix_tokens=0.0), (
            f"fitted in-sample on this run: prose {fit.prose_divisor:.2f}, dense {fit.dense_divisor:.2f} "
            "chars/token"
        )
    if name == "exact":
        counter = counter_for_model(run.model)
        if counter is None:
            raise ValueError(
                f"estimator 'exact': no offline tokenizer for model {run.model!r} of run {run.run_id} "
                "(OpenAI encodings only); use adr, fitted or anchored"
            )
        return Estimator(counter=counter, name="exact"), f"exact: {counter.library}:{counter.encoding}"
    raise ValueError(f"unknown estimator {name!r}; choose from {', '.join(ESTIMATORS)}")


def sent_requests(run: Run) -> Iterator[tuple[Turn, list[int], list[Message], bool]]:
    """Each turn that recorded its request: the pool indices it sent, the messages it added to the previous
    request, and whether the source rewrote its transcript there (its own compaction)."""
    prev_ids: list[int] | None = None
    seen: set[int] = set()
    for turn in run.turns:
        if turn.sent is None:
            continue
        ids = [i for a, b in turn.sent for i in range(a, b)]
        rewritten = False
        if prev_ids is None:
            added = [run.messages[i] for i in ids]
        elif ids[: len(prev_ids)] == prev_ids:
            added = [run.messages[i] for i in ids[len(prev_ids) :]]
        else:
            rewritten = True
            # everything the pool gained since the last request (the reply and results the compaction hid
            # from every request, and what followed), minus the summary the source wrote in their place
            start = max(seen) + 1 if seen else 0
            added = [m for m in run.messages[start : max(ids) + 1] if m.kind not in REWRITE_KINDS]
        seen.update(ids)
        prev_ids = ids
        yield turn, ids, added, rewritten


def _leading_assistant(added: list[Message]) -> list[Message]:
    """The reply of the previous call: the assistant messages that open what a request added."""
    return list(takewhile(lambda m: m.role == "assistant", added))


def replay_context(
    run: Run,
    policy: Any,
    *,
    prefix_tokens: float | None = None,
    estimator: Estimator | None = None,
    on_fit: Callable[[int, FitResult, list[int] | None], None] | None = None,
) -> ContextReplay:
    """Replay ADR-107's manager over ``run`` under ``policy``'s context fields (duck-typed: context_length,
    reserve, safety, calibration, estimator). ``on_fit(turn, fit, ids)`` sees each turn's decision (the
    counterfactual bill reads what the manager would have sent from it), with the pool indices of what it sent
    when that is the whole request as recorded (``ids``; else ``None``)."""
    name = _field(policy, "estimator", "adr") or "adr"
    notes: list[str] = []
    if estimator is None:
        estimator, note = estimator_for(run, name)
        if note:
            notes.append(note)
    learn_prefix = prefix_tokens is None and not run.tool_schemas
    if prefix_tokens is not None:
        estimator = estimator.with_(prefix_tokens=float(prefix_tokens))
    mgr = ContextWindowManager.from_policy(
        policy, model=run.model, output_cap=run.output_cap, estimator=estimator
    )
    if mgr is None:
        raise ValueError(f"replay_context needs a policy with a context_length (run {run.run_id})")
    mgr.begin_run()
    budget = mgr.budget().tokens
    rows: list[ContextRow] = []
    events: list[Event] = []
    full: list[Message] = []
    first_prune = truncated_at = None
    rewrites = 0
    pending: tuple[int | None, float, int | None] | None = None  # last turn's (prompt, estimate, completion)
    # Until the source first rewrites its transcript, each request is the whole pool sent so far (``full``), so
    # its raw estimate is the prefix, the schema block and the sum of ``full``'s message costs, kept beside it:
    # the same sum ``raw_estimate`` takes, without looking every message up again on every turn.
    costs: list[float] = []
    schema: tuple[Estimator, float] | None = None
    for turn, ids, added, rewritten in sent_requests(run):
        if rewritten:
            rewrites += 1
        full = full + added
        if pending is not None:  # the previous call's usage, now that its reply is in the transcript
            reply = _leading_assistant(added)
            mgr.observe(
                pending[0], pending[1], completion=pending[2] if reply else None, response=reply or None
            )
        if rewrites:
            sent = [run.messages[i] for i in ids]
            raw = mgr.raw_estimate(sent, site="tool", tools=run.tool_schemas)
        else:  # ``sent`` is ``full``: the manager's own sum, over costs already looked up
            sent = full
            costs += mgr.costs.of(added)
            if schema is None or schema[0] is not mgr.estimator:
                schema = (mgr.estimator, mgr.estimator.schemas(run.tool_schemas))
            raw = mgr.estimator.prefix_tokens + schema[1] + sum(costs)
        priced = mgr.price(raw)
        fit: FitResult = mgr.fit(full, site="tool", tools=run.tool_schemas)
        if on_fit is not None:
            on_fit(turn.index, fit, ids if fit.messages is sent else None)
        reported = turn.usage.prompt
        rows.append(
            ContextRow(
                turn=turn.index,
                estimate=raw,
                calibrated_estimate=priced,
                actual_prompt=reported,
                budget=fit.budget,
                action=fit.action,
                pruned_turns=fit.turns_dropped,
                tokens_before=fit.tokens_before,
                tokens_after=fit.tokens_after,
                truncated=fit.truncated,
                rewritten=rewritten,
                factor=fit.factor,
            )
        )
        event = fit.event(turn.index)
        if event is not None:
            events.append(event)
        if fit.pruned and first_prune is None:
            first_prune = turn.index
        if fit.truncated:
            truncated_at = turn.index
            break
        if learn_prefix and reported is not None:
            learned = max(0.0, reported - raw)
            mgr.estimator = mgr.estimator.with_(prefix_tokens=learned)
            mgr.costs.estimator = mgr.estimator
            raw += learned
            learn_prefix = False
            notes.append(
                f"unseen prefix learned at turn {turn.index}: {learned:,.0f} tokens (reported - estimate)"
            )
        pending = (reported, raw, turn.usage.completion)
    if rewrites:
        notes.append(
            f"the source rewrote its transcript {rewrites} time(s) (its own compaction): the replay continues "
            "the uncompacted transcript there, without the summary"
        )
    return ContextReplay(
        run_id=run.run_id,
        estimator=name,
        context_length=_field(policy, "context_length"),
        budget=budget,
        prefix_tokens=mgr.estimator.prefix_tokens,
        rows=tuple(rows),
        events=events,
        first_prune_at=first_prune,
        truncated_at=truncated_at,
        notes=tuple(notes),
    )
