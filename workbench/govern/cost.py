"""The cost meter ``spent`` (docs/governors.md §5.1): what a leaf has cost, in the units its grant is written in.

Usage ``None`` adds 0 and is counted in ``Totals.missing_usage``; prompt tokens without cache reads are billed at
full weight (the seed: "a provider that reports nothing is billed exactly as before"), counted in ``missing_cached``.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.govern.raw import raw_spent

DEFAULT_LEAF_TOKENS = 220_000  # seed 001 linear.go DefaultLeafTokens
CACHED_TOKEN_WEIGHT_PERCENT = 10  # seed 001 linear.go cachedTokenWeightPercent


def spent(
    prompt: int, cached: int, completion: int, weight_percent: int = CACHED_TOKEN_WEIGHT_PERCENT
) -> int:
    """The seed's ``spent()`` on cumulative totals (integer arithmetic, as Go's ``int``)."""
    c = min(max(cached, 0), prompt)
    return (prompt - c) + c * weight_percent // 100 + completion


def exhausted(spent_tokens: int, grant: int) -> bool:
    """``spent() >= maxTokens``: the one bound on work (seed 001 linear.go ``exhausted``)."""
    return spent_tokens >= grant


@dataclass(frozen=True, slots=True)
class Totals:
    """A leaf's cumulative usage: the node total the meters read, plus ``sent`` (Σ of each call's own prompt)."""

    prompt: int = 0
    cached: int = 0
    completion: int = 0
    calls: int = 0
    sent: int = 0
    missing_usage: int = 0
    missing_cached: int = 0

    def add(self, prompt: int | None, cached: int | None, completion: int | None) -> Totals:
        """These totals after one more model call (``None`` fields count as 0, and are counted)."""
        known = prompt is not None or completion is not None
        p = prompt or 0
        return Totals(
            prompt=self.prompt + p,
            cached=self.cached + (cached or 0),
            completion=self.completion + (completion or 0),
            calls=self.calls + 1,
            sent=self.sent + p,
            missing_usage=self.missing_usage + (0 if known else 1),
            missing_cached=self.missing_cached + (1 if known and cached is None else 0),
        )

    def add_tool(self, prompt: int, cached: int, completion: int, calls: int = 1) -> Totals:
        """These totals after tool-side model spend: it is the node's (every meter reads it) but it was not sent
        by this leaf, so ``sent`` and the per-turn rows are untouched (docs/governors.md §4.1 N: "fold tool-side usage
        into the turn"; §5.1: the node's usage includes tool-side spend)."""
        return Totals(
            prompt=self.prompt + prompt,
            cached=self.cached + cached,
            completion=self.completion + completion,
            calls=self.calls + calls,
            sent=self.sent,
            missing_usage=self.missing_usage,
            missing_cached=self.missing_cached,
        )

    def spent(self, weight_percent: int = CACHED_TOKEN_WEIGHT_PERCENT) -> int:
        return spent(self.prompt, self.cached, self.completion, weight_percent)

    @property
    def raw(self) -> int:
        return raw_spent(self.prompt, self.completion)


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One row of the meter's ledger: a model call of the leaf (``kind`` "turn", its own ``sent`` prompt) or tool-side
    spend (``kind`` "tool": billed to the node, never sent; ``turn`` None when it came before any turn)."""

    kind: str
    turn: int | None
    prompt: int = 0
    cached: int = 0
    completion: int = 0
    calls: int = 1

    @property
    def sent(self) -> int:
        return self.prompt if self.kind == "turn" else 0


def ledger_total(rows: tuple[LedgerRow, ...] | list[LedgerRow]) -> Totals:
    """The node row the ledger sums to (every row's tokens and calls; ``sent`` from the turn rows only)."""
    prompt = sum(r.prompt for r in rows)
    return Totals(
        prompt=prompt,
        cached=sum(r.cached for r in rows),
        completion=sum(r.completion for r in rows),
        calls=sum(r.calls for r in rows),
        sent=sum(r.sent for r in rows),
    )
