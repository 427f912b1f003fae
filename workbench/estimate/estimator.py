"""The ADR-107 estimator: content-class-aware chars/N plus overheads, and an unseen-prefix term (docs/estimator.md).

``Estimator`` is a frozen rule (numbers only); ``MessageCosts`` is the per-run incremental cache a live loop or a
replay keeps, so that estimating turn n costs only the messages added since turn n-1. With ``counter`` set (an
exact :class:`~workbench.estimate.tokenizers.TokenCounter`), text is tokenized instead of divided (``exact``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from workbench.estimate.constants import (
    DENSE_CHARS_PER_TOKEN,
    PER_MESSAGE_OVERHEAD,
    PER_TOOL_CALL_OVERHEAD,
    PROSE_CHARS_PER_TOKEN,
)
from workbench.estimate.content import Counts, MessageLike, schema_text, segments
from workbench.estimate.tokenizers import TokenCounter


@dataclass(frozen=True)
class Estimator:
    """Tokens from characters: ``prose/prose_divisor + dense/dense_divisor + overheads + prefix``.

    ``prefix_tokens`` is what the provider counts that the transcript does not show (a system prompt and tool
    schemas a source does not record; Claude Code's is about 26k tokens). ADR-107 as written has 0.
    """

    prose_divisor: float = PROSE_CHARS_PER_TOKEN
    dense_divisor: float = DENSE_CHARS_PER_TOKEN
    per_message: float = PER_MESSAGE_OVERHEAD
    per_tool_call: float = PER_TOOL_CALL_OVERHEAD
    prefix_tokens: float = 0.0
    counter: TokenCounter | None = field(default=None, compare=False)
    name: str = "adr"

    def __post_init__(self) -> None:
        if self.prose_divisor <= 0 or self.dense_divisor <= 0:
            raise ValueError(
                f"divisors must be positive (prose={self.prose_divisor}, dense={self.dense_divisor})"
            )

    def with_(self, **changes: Any) -> Estimator:
        return replace(self, **changes)

    def tokens(self, c: Counts) -> float:
        """Tokens for character counts (no prefix). Only valid without an exact counter."""
        return (
            c.prose / self.prose_divisor
            + c.dense / self.dense_divisor
            + c.messages * self.per_message
            + c.tool_calls * self.per_tool_call
        )

    def message(self, m: MessageLike) -> float:
        if self.counter is None:  # the hot path: same arithmetic as tokens(count_message(m)), no Counts built
            text = len(m.content or "")
            calls = m.tool_calls or ()
            args = sum(len(c.name) + len(c.arguments or "") for c in calls) if calls else 0
            prose, dense = (0, text + args) if m.role == "tool" else (text, args)
            return (
                prose / self.prose_divisor
                + dense / self.dense_divisor
                + self.per_message
                + len(calls) * self.per_tool_call
            )
        calls = len(m.tool_calls or ())
        text = sum(self.counter.count(t) for _, t in segments(m))
        return text + self.per_message + calls * self.per_tool_call

    def schemas(self, schemas: Sequence[dict[str, Any]] | None) -> float:
        text = schema_text(schemas)
        if not text:
            return 0.0
        if self.counter is None:
            return len(text) / self.dense_divisor
        return float(self.counter.count(text))

    def request(
        self, messages: Sequence[MessageLike], schemas: Sequence[dict[str, Any]] | None = None
    ) -> float:
        """The whole request: prefix + every message + the schema block (pass ``None`` for no-tools sends)."""
        return self.prefix_tokens + sum(self.message(m) for m in messages) + self.schemas(schemas)


class MessageCosts:
    """Per-run cache of message estimates, keyed by object identity (a rewritten message is a new object).

    ``of(messages)`` returns each message's estimate, computing only messages not seen before, so a growing
    transcript costs the new messages per send. Messages are held so an id is never reused while cached.
    """

    def __init__(self, estimator: Estimator) -> None:
        self.estimator = estimator
        self._cache: dict[int, tuple[Any, float]] = {}
        self.computed = 0

    def cost(self, m: MessageLike) -> float:
        hit = self._cache.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        value = self.estimator.message(m)
        self._cache[id(m)] = (m, value)
        self.computed += 1
        return value

    def of(self, messages: Sequence[MessageLike]) -> list[float]:
        return [self.cost(m) for m in messages]

    def total(self, messages: Sequence[MessageLike]) -> float:
        return sum(self.of(messages))

    def forget_except(self, keep: Sequence[MessageLike]) -> None:
        """Drop cached entries for messages no longer in the transcript (bounded memory for long runs)."""
        ids = {id(m) for m in keep}
        self._cache = {k: v for k, v in self._cache.items() if k in ids}
