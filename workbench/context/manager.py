"""ADR-107's ContextWindowManager: bound the transcript before each provider send by dropping whole turns
(docs/context.md: ``from_policy``, ``before_send`` and its ``FitResult`` for a live loop; ``begin_run``,
``observe`` and ``fit`` for a replay). One manager per run; ``messages`` is never edited.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from workbench.context.budget import Budget, context_budget
from workbench.context.index import TranscriptIndex
from workbench.context.transcript import Orphans, split
from workbench.context.transcript import created_orphans as _reference_orphans
from workbench.estimate.calibration import Calibration
from workbench.estimate.constants import CALIBRATION_SEED
from workbench.estimate.content import MessageLike
from workbench.estimate.estimator import Estimator, MessageCosts
from workbench.estimate.tokenizers import counter_for_model
from workbench.trace.schema import Event, EventKind

SendSite = Literal["tool", "plain", "synthesis"]
SEND_SITES: tuple[SendSite, ...] = ("tool", "plain", "synthesis")
Pricing = Literal["multiplicative", "anchored"]
Action = Literal["send", "pruned", "deferred", "truncated"]

CONTEXT_TRUNCATED = "CONTEXT_TRUNCATED"


class ContextTruncated(Exception):
    """Even the pruned floor (head + newest turn) exceeds the budget: no provider call is made."""

    retryable = False

    def __init__(self, fit: FitResult) -> None:
        self.fit = fit
        super().__init__(
            f"{CONTEXT_TRUNCATED}: the floor (head + newest turn) is {fit.tokens_after:,} tokens "
            f"against a budget of {fit.budget:,}"
        )


@dataclass(frozen=True)
class FitResult:
    """What to send (or not) and the numbers behind the decision.

    ``tokens_*`` are priced (calibrated) estimates; ``raw_*`` the uncalibrated estimator output.
    """

    action: Action
    messages: Sequence[MessageLike]
    site: SendSite
    budget: int
    tokens_before: int
    tokens_after: int
    raw_before: float
    raw_after: float
    turns_dropped: int = 0
    messages_dropped: int = 0
    factor: float = 1.0
    orphans: Orphans | None = None
    reason: str | None = None

    @property
    def truncated(self) -> bool:
        return self.action == "truncated"

    @property
    def pruned(self) -> bool:
        return self.action == "pruned"

    def raise_if_truncated(self) -> FitResult:
        if self.truncated:
            raise ContextTruncated(self)
        return self

    def event(self, turn: int | None) -> Event | None:
        """The trace event for this decision before the send of call ``turn``: ``prune``, ``context-truncated`` or
        ``prune-deferred``; where the terminus sits: docs/context.md, "Where the terminus sits"."""
        data: dict[str, Any] = {
            "site": self.site,
            "budget": self.budget,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "turns_dropped": self.turns_dropped,
            "messages_dropped": self.messages_dropped,
            "factor": round(self.factor, 6),
        }
        if self.action == "pruned":
            return Event(turn=turn, kind=EventKind.PRUNE, reason=self.reason, data=data)
        if self.action == "truncated":
            data["blocked_turn"] = turn
            last = None if turn is None or turn <= 0 else turn - 1
            return Event(turn=last, kind=EventKind.CONTEXT_TRUNCATED, reason=self.reason, data=data)
        if self.action == "deferred":
            return Event(turn=turn, kind=EventKind.PRUNE_DEFERRED, reason=self.reason, data=data)
        return None


@dataclass
class ContextWindowManager:
    """Per-run state: the calibration, the message-cost cache and the last reported prompt (the anchor)."""

    context_length: int | None
    reserve: int | None = None
    safety: int | None = None
    output_cap: int | None = None
    estimator: Estimator = field(default_factory=Estimator)
    calibration_seed: float = CALIBRATION_SEED
    pricing: Pricing = "multiplicative"
    calibration: Calibration = field(init=False)
    costs: MessageCosts = field(init=False)
    index: TranscriptIndex = field(init=False)
    anchor: tuple[float, float] | None = field(default=None, init=False)
    last_sent_raw: float | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.pricing not in ("multiplicative", "anchored"):
            raise ValueError(f"pricing must be 'multiplicative' or 'anchored', got {self.pricing!r}")
        self.calibration = Calibration(self.calibration_seed)
        self.costs = MessageCosts(self.estimator)
        self.index = TranscriptIndex(self.costs)

    @classmethod
    def from_policy(
        cls,
        policy: Any,
        *,
        model: str | None = None,
        output_cap: int | None = None,
        estimator: Estimator | None = None,
    ) -> ContextWindowManager | None:
        """The manager a policy asks for (duck-typed: context_length, reserve, safety, calibration,
        estimator), or ``None`` when ``policy.context_length`` is None — ADR-107's absent manager, a no-op.

        ``estimator`` names: ``adr`` and ``anchored`` use ADR-107's estimator (multiplicative or anchored
        pricing); ``exact`` an offline tokenizer for ``model``; ``fitted`` needs the fitted ``estimator``
        passed in (see :mod:`workbench.estimate.fit`)."""
        length = getattr(policy, "context_length", None)
        if length is None:
            return None
        name = getattr(policy, "estimator", None) or "adr"
        if estimator is None:
            if name in ("adr", "anchored"):
                estimator = Estimator()
            elif name == "exact":
                counter = counter_for_model(model)
                if counter is None:
                    raise ValueError(f"estimator 'exact': no offline tokenizer for model {model!r}")
                estimator = Estimator(counter=counter, name="exact")
            elif name == "fitted":
                raise ValueError("estimator 'fitted' needs the fitted Estimator (workbench.estimate.fit)")
            else:
                raise ValueError(f"unknown estimator {name!r}; choose from adr, fitted, anchored, exact")
        return cls(
            length,
            reserve=getattr(policy, "reserve", None),
            safety=getattr(policy, "safety", None),
            output_cap=output_cap,
            estimator=estimator,
            calibration_seed=getattr(policy, "calibration", None) or CALIBRATION_SEED,
            pricing="anchored" if name == "anchored" else "multiplicative",
        )

    # -- per-run state ---------------------------------------------------------------------------------

    def begin_run(self) -> None:
        """A run's first send: forget the previous run's calibration and anchor."""
        self.calibration.reset()
        self.anchor = None
        self.last_sent_raw = None

    def observe(
        self,
        reported_prompt: int | None,
        sent_estimate: float | None = None,
        *,
        completion: int | None = None,
        response: Sequence[MessageLike] | None = None,
    ) -> None:
        """A provider call reported ``reported_prompt`` tokens for a request estimated at ``sent_estimate``
        (default: the raw estimate of the last request this manager fitted).

        With ``completion`` and ``response`` (the reply's messages as appended to the transcript), the anchor
        moves past the reply: reported prompt + completion stands for the sent request + the reply, so hidden
        output the transcript does not show (thinking) is counted as the provider will count it.
        """
        raw = self.last_sent_raw if sent_estimate is None else sent_estimate
        if reported_prompt is None or raw is None:
            return
        self.calibration.observe(reported_prompt, raw)
        if completion is not None and response is not None:
            self.anchor = (float(reported_prompt + completion), float(raw + self.costs.total(response)))
        else:
            self.anchor = (float(reported_prompt), float(raw))

    def budget(self, max_tokens: int | None = None) -> Budget:
        return context_budget(
            self.context_length,
            reserve=self.reserve,
            safety=self.safety,
            max_tokens=max_tokens,
            output_cap=self.output_cap,
        )

    # -- pricing -----------------------------------------------------------------------------------------

    def price(self, raw: float) -> float:
        """The budget-comparable estimate of a request whose raw estimate is ``raw``."""
        if self.pricing == "anchored" and self.anchor is not None:
            reported, base = self.anchor
            seed = self.calibration.seed
            return reported + (raw - base) * seed if raw >= base else reported - (base - raw) / seed
        return self.calibration.apply(raw)

    def raw_estimate(
        self, messages: Sequence[MessageLike], *, site: SendSite = "tool", tools: Sequence[dict] | None = None
    ) -> float:
        """Prefix + messages (+ schema block at the tool site), uncalibrated; incremental over the cache."""
        schema = self.estimator.schemas(tools) if site == "tool" else 0.0
        return self.estimator.prefix_tokens + schema + self.costs.total(messages)

    # -- the decision ------------------------------------------------------------------------------------

    def before_send(
        self,
        messages: Sequence[MessageLike],
        *,
        site: SendSite = "tool",
        tools: Sequence[dict] | None = None,
        last_usage: int | None = None,
        last_completion: int | None = None,
        last_response: Sequence[MessageLike] | None = None,
        max_tokens: int | None = None,
    ) -> FitResult:
        """The live loop's entry point: reset or calibrate from ``last_usage``, then :meth:`fit`.

        ``last_completion`` / ``last_response``: the previous call's completion tokens and the reply messages
        it appended (optional; they sharpen the anchored pricing, see :meth:`observe`)."""
        if last_usage is None:
            self.begin_run()
        else:
            self.observe(last_usage, completion=last_completion, response=last_response)
        return self.fit(messages, site=site, tools=tools, max_tokens=max_tokens)

    def fit(
        self,
        messages: Sequence[MessageLike],
        *,
        site: SendSite = "tool",
        tools: Sequence[dict] | None = None,
        max_tokens: int | None = None,
    ) -> FitResult:
        """Drop the fewest oldest whole turns that make the transcript fit; never the head or the newest turn."""
        if site not in SEND_SITES:
            raise ValueError(f"send site must be one of {SEND_SITES}, got {site!r}")
        budget = self.budget(max_tokens).tokens
        fixed = self.estimator.prefix_tokens + (self.estimator.schemas(tools) if site == "tool" else 0.0)
        ix = self.index
        ix.sync(messages)
        total = fixed + ix.total
        factor = self.calibration.factor
        before = self.price(total)
        common = {"site": site, "budget": budget, "raw_before": total, "factor": factor}
        if before <= budget:
            self.last_sent_raw = total
            return FitResult("send", messages, tokens_before=_up(before), tokens_after=_up(before),
                             raw_after=total, **common)  # fmt: skip
        if ix.closed:
            head, starts = ix.head, ix.starts
        else:  # no user or assistant message after the system run yet: the reference partition
            part = split(messages)
            head, starts = part.head, list(part.starts)
        n = len(messages)
        head_raw = fixed + ix.cost_between(0, head)
        newest = starts[-1] if starts else n
        floor_raw = head_raw + ix.cost_between(newest, n)
        if self.price(floor_raw) > budget:
            return FitResult(
                "truncated",
                [],
                tokens_before=_up(before),
                tokens_after=_up(self.price(floor_raw)),
                raw_after=floor_raw,
                turns_dropped=max(0, len(starts) - 1),
                messages_dropped=newest - head,
                reason=CONTEXT_TRUNCATED,
                **common,
            )
        # the fewest oldest turns: kept raw falls as more are dropped, so bisect on the turn boundaries
        dropped = bisect_left(
            range(len(starts)),
            True,
            key=lambda k: self.price(head_raw + ix.cost_between(starts[k], n)) <= budget,
        )
        cut = starts[dropped]
        kept_raw = head_raw + ix.cost_between(cut, n)
        created = ix.created_orphans(cut) if ix.closed else _reference_orphans(messages, head, cut)
        if created:
            self.last_sent_raw = total
            return FitResult("deferred", messages, tokens_before=_up(before), tokens_after=_up(before),
                             raw_after=total, orphans=created,
                             reason="pruning would orphan a tool call or result; deferring to the provider",
                             **common)  # fmt: skip
        self.last_sent_raw = kept_raw
        return FitResult(
            "pruned",
            [*messages[:head], *messages[cut:]],
            tokens_before=_up(before),
            tokens_after=_up(self.price(kept_raw)),
            raw_after=kept_raw,
            turns_dropped=dropped,
            messages_dropped=cut - head,
            reason=f"dropped the {dropped} oldest turn(s) to fit {budget:,} tokens",
            **common,
        )


def _up(x: float) -> int:
    return math.ceil(x - 1e-9)
