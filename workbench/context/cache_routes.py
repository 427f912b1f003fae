"""The provider route of a run (:func:`route_of`, the one place the fit and the bill group by) and the prompt-cache
rules fitted per route, read from ``cache_routes.json`` (docs/cache-model.md, "Fit per provider route"). A route
with no fitted row is billed by its family's documented rules (``rules_for``); one that never read the cache as
``none``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field, fields
from functools import cache
from importlib import resources
from typing import Any

import numpy as np

from workbench.context.cache_model import CacheRules, rules_for
from workbench.trace.schema import Run

TABLE = "cache_routes.json"
MIN_FIT_RUNS = 5
"""Fewer runs than this are too few to resample (or to search a block on): a route fitted on them takes its
family's documented block and minimum, and its miss shares from the binomial posterior over its calls."""


def route_of(run: Run) -> str:
    """The provider route the fit and the bill group ``run`` by: the route most of its calls went through, as
    recorded or inferred by its importer (:func:`workbench.trace.route.run_route`, never a model-name prefix),
    by its key (``anthropic``, ``google via openrouter``, ``unknown via openrouter``); ``unknown`` when not
    known. The one place to switch the grouping."""
    from workbench.trace.route import run_route

    route = run_route(run)
    return "unknown" if route is None else route.key


def family_of(run: Run) -> str:
    """The cache family of ``run``'s route (``none`` when unknown)."""
    return rules_for(run).family


@dataclass(frozen=True)
class Interval:
    """A point estimate and its 95% interval (bootstrap over runs); ``None`` where nothing bounds it."""

    value: float | None
    low: float | None = None
    high: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"value": self.value, "low": self.low, "high": self.high}

    @classmethod
    def of(cls, d: Any) -> Interval:
        if isinstance(d, dict):
            return cls(d.get("value"), d.get("low"), d.get("high"))
        return cls(None if d is None else float(d))


@dataclass(frozen=True)
class RouteParams:
    """The cache rules of one route as fitted to its recordings; each field is one item of docs/cache-model.md,
    "Fit per provider route" (accounting, block, minimum, reply, TTL, miss)."""

    route: str
    accounting: str
    block: Interval = field(default_factory=lambda: Interval(1.0))
    min_tokens: Interval = field(default_factory=lambda: Interval(0.0))
    reply_cached: bool = True
    run_block: bool = False
    """The block in reported tokens is learned per run from its own earlier reads (the provider counts blocks in
    its own tokens, which the reported ones follow only roughly)."""
    coarse: tuple[tuple[str, int, int], ...] = ()
    """Per serving endpoint ``(endpoint, multiple, from_blocks)``: reads of ``from_blocks`` blocks or more come in
    whole multiples of ``multiple`` blocks there (:attr:`CacheRules.coarse`)."""
    ttl_s: Interval = field(default_factory=lambda: Interval(None))
    ttl_lower_s: float | None = None
    miss: Interval = field(default_factory=lambda: Interval(0.0))
    miss_tokens: Interval = field(default_factory=lambda: Interval(0.0))
    """The share of the predicted read tokens on missed calls (what the bill's draws use, per token)."""
    miss_ratios: tuple[float, ...] = ()
    over_tokens: Interval = field(default_factory=lambda: Interval(0.0))
    """The share of the predicted read tokens on calls that read over 1/0.9 of the prediction (the model's
    under-reads); ``over_ratios``: what they read over the prediction (deciles). The draws give them back."""
    over_ratios: tuple[float, ...] = ()
    run_miss: tuple[float, ...] = ()
    """Deciles over the fitted runs of each run's own ``miss_tokens`` (empty: too few to tell): a bill's draws give
    each run its own miss share from them, as held-out runs differ; ``run_over`` likewise for ``over_tokens``."""
    run_over: tuple[float, ...] = ()
    runs: int = 0
    calls: int = 0

    @property
    def resampled(self) -> bool:
        """Fitted on enough runs to bootstrap: its corpus-wide intervals are apart from its runs' own spread."""
        return self.runs >= MIN_FIT_RUNS

    def to_dict(self) -> dict[str, Any]:
        """The table's row (``route`` is its key; ``calls`` is written ``fitted_calls``)."""
        out = {}
        for f in fields(self)[1:]:
            v = getattr(self, f.name)
            if isinstance(v, Interval):
                v = v.to_dict()
            elif isinstance(v, tuple):
                v = [list(c) if isinstance(c, tuple) else c for c in v]
            out["fitted_calls" if f.name == "calls" else f.name] = v
        return out

    @classmethod
    def from_dict(cls, route: str, d: dict[str, Any]) -> RouteParams:
        """A table row back (:meth:`to_dict`); a field the row lacks keeps its default."""
        base, kw = cls(route, str(d["accounting"])), {}
        for f in fields(cls)[2:]:
            key = "fitted_calls" if f.name == "calls" else f.name
            if key in d:
                now, v = getattr(base, f.name), d[key]
                if isinstance(now, Interval):
                    v = Interval.of(v)
                elif isinstance(now, tuple):
                    v = tuple(tuple(c) if isinstance(c, list) else c for c in v)
                kw[f.name] = v
        return dataclasses.replace(base, **kw)

    def rules(self, run: Run, block: float | None = None) -> CacheRules:
        """The cache rules a bill of ``run`` uses on this route (``block``: another block size, for a draw)."""
        base = rules_for(run)
        if self.accounting == "none":
            return CacheRules.none()
        if self.accounting == "explicit" or base.family == "anthropic":
            return base  # Anthropic's documented rules fit its recordings to 99% (docs/cache-model.md)
        nominal = block if block is not None else (self.block.value or 1)
        step = max(1, round(run_block(run, nominal) if self.run_block else nominal))
        # no expiry seen: entries live at least as long as the longest gap a read survived
        ttl = self.ttl_s.value or self.ttl_lower_s or base.ttl_s
        return CacheRules(
            "gemini" if base.family == "gemini" else "openai",
            min_tokens=int(self.min_tokens.value or 0),
            step=step,
            ttl_s=float(ttl),
            reply_cached=self.reply_cached,
            coarse=self.coarse,
        )


def run_block(run: Run, block: float) -> float:
    """The run's block in reported tokens: the median, over its recorded reads, of a read over its whole number
    of nominal blocks (the nominal block where the run read nothing)."""
    per = [c / round(c / block) for t in run.turns if (c := t.usage.cached) and round(c / block) >= 1]
    if not per:
        return block
    per.sort()
    return per[len(per) // 2]


@cache
def fitted_table() -> dict[str, RouteParams]:
    """The packaged per-route fit (``cache_routes.json``)."""
    text = resources.files("workbench.context").joinpath(TABLE).read_text(encoding="utf-8")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    # a route whose responses never reported a read has no parameters (unknown): its family's rules bill it
    return {r["route"]: RouteParams.from_dict(r["route"], r["parameters"]) for r in rows if r["parameters"]}


def route_params(run: Run, table: dict[str, RouteParams] | None = None) -> RouteParams | None:
    """The fitted parameters of ``run``'s route; for a route with no fitted row, :func:`documented_params`."""
    table = fitted_table() if table is None else table
    return table.get(route_of(run)) or documented_params(run)


def documented_params(run: Run) -> RouteParams | None:
    """A cached route with no fitted row (``None`` for a route that caches nothing): its family's documented
    rules, and a run's miss share from the Jeffreys prior (anywhere in 0-1, most likely near either end), a miss
    reading nothing: nothing recorded bounds it, so its bills are wide, never precise."""
    rules = rules_for(run)
    if rules.family == "none":
        return None
    return RouteParams(
        route=route_of(run),
        accounting="explicit" if rules.explicit else "automatic",
        block=Interval(float(rules.step)),
        min_tokens=Interval(float(rules.min_tokens)),
        miss_tokens=Interval(0.0, 0.0, 1.0),
        miss_ratios=(0.0,),
        run_miss=call_deciles(0.0, 0),
    )


def call_deciles(share: float, calls: int) -> tuple[float, ...]:
    """Deciles (5% ... 95%) of the Jeffreys posterior of a share seen on ``calls`` calls: what a route with too few
    runs to resample says of a run's own share (with no call, anywhere in 0-1)."""
    return tuple(round(x, 4) for x in jeffreys(share, calls, np.linspace(0.05, 0.95, 10)))


def jeffreys(share: float, calls: int, quantiles: Any) -> list[float]:
    """Quantiles of Beta(k + 1/2, n - k + 1/2), k = ``share`` x ``calls``: the Jeffreys posterior of a share."""
    from scipy.stats import beta

    k = share * calls
    return [float(x) for x in beta.ppf(quantiles, k + 0.5, calls - k + 0.5)]


def route_rules(run: Run, table: dict[str, RouteParams] | None = None) -> CacheRules:
    """The cache rules the bill uses for ``run``: its route's fitted rules, else its family's documented ones."""
    p = (fitted_table() if table is None else table).get(route_of(run))
    return p.rules(run) if p is not None else rules_for(run)
