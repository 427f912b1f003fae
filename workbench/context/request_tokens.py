"""Anchored token counts: each message of a recorded run gets a token count such that every recorded request
adds up to its reported prompt tokens (docs/cache-model.md, "Requests as blocks", and its ``shortfall``).

    counts = anchor(run)        # AnchoredTokens
    counts.of(i)                # tokens of pool message i (estimated x the run's rate if no request carried it)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.estimate.estimator import Estimator, MessageCosts
from workbench.trace.schema import Message, Run


@dataclass(frozen=True)
class AnchoredTokens:
    """Per pool message, the tokens the provider counted for it; the prefix; per turn, the request's ids."""

    prefix: int
    tokens: dict[int, int]
    ids: tuple[tuple[int, ...] | None, ...]
    rate: float
    """Reported tokens per estimated token over the messages counted (how unseen text is priced)."""
    shortfall: dict[int, int] = field(default_factory=dict)
    estimator: Estimator = field(default_factory=Estimator)

    def of(self, index: int, message: Message | None = None) -> int:
        if index in self.tokens:
            return self.tokens[index]
        if message is None:
            return 0
        return round(self.estimate(message))

    def estimate(self, message: Message) -> float:
        """The provider's tokens for a message no request carried: its estimate at the run's rate."""
        return self.estimator.message(message) * self.rate


def request_ids(run: Run) -> list[tuple[int, ...] | None]:
    return [None if t.sent is None else tuple(i for a, b in t.sent for i in range(a, b)) for t in run.turns]


def _share(total: int, weights: list[float]) -> list[int]:
    """``total`` split in proportion to ``weights`` in whole tokens (largest remainder), summing exactly."""
    if not weights:
        return []
    w = [max(x, 0.0) for x in weights]
    s = sum(w)
    if s <= 0:
        w, s = [1.0] * len(w), float(len(w))
    raw = [total * x / s for x in w]
    out = [int(r) for r in raw]
    rest = total - sum(out)
    for k in sorted(range(len(raw)), key=lambda k: raw[k] - out[k], reverse=True)[:rest]:
        out[k] += 1
    return out


def anchor(run: Run, estimator: Estimator | None = None) -> AnchoredTokens:
    est = estimator or Estimator()
    costs = MessageCosts(est)
    ids = request_ids(run)
    tokens: dict[int, int] = {}
    shortfall: dict[int, int] = {}
    prefix: int | None = None
    counted_reported = 0.0
    counted_estimate = 0.0
    for t, req in zip(run.turns, ids, strict=True):
        reported = t.usage.prompt
        if req is None or reported is None:
            continue
        new = [i for i in dict.fromkeys(req) if i not in tokens]
        weights = [costs.cost(run.messages[i]) for i in new]
        if prefix is None:
            prefix = max(0, reported - round(sum(weights)))
        known = sum(tokens[i] for i in req if i in tokens)
        residual = reported - prefix - known
        if residual < 0:
            shortfall[t.index] = -residual
            residual = 0
        for i, n in zip(new, _share(residual, weights), strict=True):
            tokens[i] = n
        if new:
            counted_reported += residual
            counted_estimate += sum(weights)
    rate = counted_reported / counted_estimate if counted_estimate > 0 else 1.0
    return AnchoredTokens(
        prefix=prefix or 0, tokens=tokens, ids=tuple(ids), rate=rate, shortfall=shortfall, estimator=est
    )
