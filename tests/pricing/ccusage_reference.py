"""ccusage's Claude Code pricing, restated from its source so the workbench's dollars can be held to it.

Provenance: ryoppippi/ccusage at commit 5816e640 (2026-06-13), ``rust/crates/ccusage/src/cost.rs``
(``calculate_cost_from_tokens``, ``tiered_cost``, ``CACHE_CREATE_1H_INPUT_MULTIPLIER = 2.0``),
``rust/crates/ccusage/src/pricing.rs`` (its built-in table, which overrides LiteLLM's for these Claude models, and
LiteLLM's ``model_prices_and_context_window.json`` entry for ``claude-sonnet-4-5-20250929``) and
``rust/crates/ccusage/src/adapter/claude/daily.rs`` (``push_deduped_daily_entry``: one entry per
``message.id:requestId``, the one with the most tokens; a sidechain replay of a parent message is dropped).

Per entry: ``input * in + output * out + 5-minute writes * write + 1-hour writes * 2 * in + reads * read``, each
term priced at the above-200k rate for the tokens of that type past 200,000 where the model has one (ccusage
tiers each token type of one entry on its own count, not on the whole prompt).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ONE_HOUR_INPUT_MULTIPLIER = 2.0  # cost.rs CACHE_CREATE_1H_INPUT_MULTIPLIER
TIER_THRESHOLD = 200_000  # cost.rs tiered_cost THRESHOLD


@dataclass(frozen=True)
class Rates:
    """USD per token, as ccusage's ``Pricing``."""

    input: float
    output: float
    cache_write: float  # five-minute write
    cache_read: float
    above_200k: tuple[float, float, float, float] | None = None  # input, output, write, read

    @property
    def cache_write_1h(self) -> float:
        return self.input * ONE_HOUR_INPUT_MULTIPLIER


RATES = {
    # pricing.rs put_builtin_pricing
    "claude-opus-4-6": Rates(5e-6, 25e-6, 6.25e-6, 0.5e-6),
    "claude-haiku-4-5": Rates(1e-6, 5e-6, 1.25e-6, 0.1e-6),
    # LiteLLM model_prices_and_context_window.json (ccusage's embedded table), claude-sonnet-4-5-20250929
    "claude-sonnet-4-5": Rates(3e-6, 15e-6, 3.75e-6, 0.3e-6, (6e-6, 22.5e-6, 7.5e-6, 0.6e-6)),
}


def rates_for(model: str) -> Rates:
    """ccusage resolves a dated name to its undated entry (its alias and date-suffix matching)."""
    for name, rates in RATES.items():
        if model == name or model.startswith(name + "-"):
            return rates
    raise KeyError(model)


def tiered(tokens: int, base: float, above: float | None) -> float:
    """cost.rs ``tiered_cost``."""
    if tokens == 0:
        return 0.0
    if above is not None and tokens > TIER_THRESHOLD:
        return TIER_THRESHOLD * base + (tokens - TIER_THRESHOLD) * above
    return tokens * base


def entry_cost(rates: Rates, usage: dict[str, Any]) -> float:
    """cost.rs ``calculate_cost_from_tokens`` for one entry's ``message.usage``."""
    split = usage.get("cache_creation")
    if split is not None:
        write_5m = split.get("ephemeral_5m_input_tokens", 0)
        write_1h = split.get("ephemeral_1h_input_tokens", 0)
    else:
        write_5m, write_1h = usage.get("cache_creation_input_tokens", 0), 0
    a_in, a_out, a_write, a_read = rates.above_200k or (None, None, None, None)
    return (
        tiered(usage.get("input_tokens", 0), rates.input, a_in)
        + tiered(usage.get("output_tokens", 0), rates.output, a_out)
        + tiered(write_5m, rates.cache_write, a_write)
        + tiered(write_1h, rates.cache_write_1h, a_in * ONE_HOUR_INPUT_MULTIPLIER if a_in else None)
        + tiered(usage.get("cache_read_input_tokens", 0), rates.cache_read, a_read)
    )


def _tokens(usage: dict[str, Any]) -> int:
    keys = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    return sum(usage.get(k, 0) for k in keys)


def per_file(root: Path) -> dict[Path, float]:
    """ccusage's USD for every ``*.jsonl`` under ``root``, per file (after its cross-file dedupe)."""
    kept: dict[tuple[Any, Any], tuple[Path, str, dict[str, Any], bool]] = {}
    first_of: dict[Any, tuple[Any, Any]] = {}
    for path in sorted(root.rglob("*.jsonl")):
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                try:
                    o = json.loads(line)
                except ValueError:
                    continue  # ccusage skips malformed lines
                msg = o.get("message") if isinstance(o, dict) else None
                if o.get("type") != "assistant" or not isinstance(msg, dict) or not msg.get("usage"):
                    continue
                entry = (path, msg.get("model"), msg["usage"], o.get("isSidechain") is True)
                key = (msg.get("id"), o.get("requestId"))
                old = kept.get(key)
                if old is None and msg.get("id") in first_of:
                    other = first_of[msg.get("id")]
                    if entry[3] or kept[other][3]:  # a sidechain replay of the same message
                        key, old = other, kept[other]
                if old is None:
                    kept[key] = entry
                    first_of.setdefault(msg.get("id"), key)
                elif old[3] != entry[3]:
                    if old[3]:
                        kept[key] = entry  # keep the parent's entry
                elif _tokens(entry[2]) > _tokens(old[2]):
                    kept[key] = entry
    out: dict[Path, float] = defaultdict(float)
    for path, model, usage, _ in kept.values():
        out[path] += entry_cost(rates_for(model), usage)
    return dict(out)
