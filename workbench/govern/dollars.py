"""The dollar meter's reading of each call: the cost the source recorded, or ``workbench.pricing``'s price.

``LimitRules.price_source`` names the agent's own meter (docs/governors.md, "Other agents' own limits"). A call the
chosen way cannot price is priced the other way (``basis`` says so); one priced neither way is ``None``, and a
dollar limit cannot be replayed past it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from workbench.trace.schema import Run, Turn


@dataclass(frozen=True, slots=True)
class CallDollars:
    usd: tuple[float | None, ...]
    basis: str
    """``recorded``, ``genai-prices``, ``recorded + genai-prices`` (either order: the first is the rule set's own)
    or ``unknown`` (some call priced neither way)."""
    unpriced: int = 0
    fallback: int = 0

    @property
    def known(self) -> bool:
        return self.unpriced == 0

    def note(self, source: str) -> str | None:
        """What the replay says about its dollar meter (``None`` when every call was priced the rule set's way)."""
        if self.unpriced:
            first = next(i for i, u in enumerate(self.usd) if u is None)
            return (
                f"cannot be replayed in dollars from call {first} on: {self.unpriced} call(s) priced neither by "
                "their recorded cost nor by genai-prices; no dollar limit was applied past it"
            )
        if self.fallback:
            other = "genai-prices" if source == "recorded" else "their recorded cost"
            return f"{self.fallback} call(s) had no {source} price and were priced by {other}"
        return None


def call_dollars(run: Run, source: str, price: Callable[..., Any] | None = None) -> CallDollars:
    """Per call, its USD as ``source`` (``recorded`` or ``genai-prices``) reads it, with the other as fall-back."""
    if source not in ("recorded", "genai-prices"):
        raise ValueError(f"price source must be 'recorded' or 'genai-prices', got {source!r}")
    if price is None:
        from workbench.pricing import price_usage

        price = price_usage
    pricer: Callable[..., Any] = price
    out: list[float | None] = []
    unpriced = fallback = 0
    for t in run.turns:

        def recorded(t: Turn = t) -> float | None:
            return None if t.usage.cost is None else float(t.usage.cost)

        def priced(t: Turn = t) -> float | None:
            p = pricer(t.model or run.model, t.usage, t.started_at or run.started_at)
            return None if p is None else float(p.usd)

        first, second = (recorded, priced) if source == "recorded" else (priced, recorded)
        usd = first()
        if usd is None:
            usd = second()
            if usd is None:
                unpriced += 1
            else:
                fallback += 1
        out.append(usd)
    if unpriced:
        basis = "unknown"
    elif fallback:
        basis = f"{source} + {'genai-prices' if source == 'recorded' else 'recorded'}"
    else:
        basis = source
    return CallDollars(tuple(out), basis, unpriced, fallback)
