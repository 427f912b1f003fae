"""How sure a counterfactual bill is: its 90% interval over draws of the fitted cache model (the route's block
size and miss and under-read shares within their intervals; after the policy's first change, each call's miss and
what it reads; before it, what was paid), and the cache-read price at which a policy's saving changes sign, each
draw's bill being linear in it (docs/counterfactual-bills.md, "Uncertainty, break-even and cache-aware masking").
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.context.cache_routes import Interval, RouteParams, run_block
from workbench.replay.bill import Bill, BillRow, RunPricer
from workbench.trace.fingerprint import fingerprint
from workbench.trace.schema import Run

DRAWS = 200
SEED = 23
QUANTILES = (0.05, 0.95)


@dataclass(frozen=True)
class Draws:
    """Shared parameter picks: per draw, a uniform for the block and one for the miss share."""

    block: np.ndarray
    miss: np.ndarray
    over: np.ndarray | None = None
    """Per draw, a uniform for the share of under-read tokens given back (``None``: the miss's uniform)."""

    @classmethod
    def make(cls, n: int = DRAWS, seed: int = SEED) -> Draws:
        rng = np.random.default_rng(seed)
        return cls(rng.random(n), rng.random(n), rng.random(n))


def _pick(u: np.ndarray, estimate: Interval) -> np.ndarray:
    """Per draw, a value of ``estimate`` (its ``value``, ``low`` and ``high``): uniform within its interval."""
    value, low, high = estimate.value, estimate.low, estimate.high
    if value is None:
        return np.zeros_like(u)
    if low is None or high is None:
        return np.full_like(u, float(value))
    return low + u * (high - low)


@dataclass(frozen=True)
class BillSpread:
    """One bill's draws (USD, one per draw) and its linear pieces for the break-even, over the calls billed."""

    usd: np.ndarray | None
    """Per draw, the counterfactual USD (``None``: a call could not be priced)."""
    cf_cached_in: float
    """Sum over calls of cached tokens x the call's input price (USD if every read cost the input price)."""
    cf_rest: float
    """Sum over calls of fresh x input + writes x write + output x output price."""
    rec_cached_in: float
    rec_rest: float
    cf_uncached: float
    """The counterfactual priced with no cache: every prompt token at the input price, plus output."""
    rec_uncached: float
    cf_cached_in_draws: np.ndarray | None = None
    """Per draw, ``cf_cached_in`` with that draw's reads (its misses and under-reads): with ``cf_rest_draws``, the
    read-price break-even of every draw (:func:`break_even_interval`)."""
    cf_rest_draws: np.ndarray | None = None


def spread(
    bill: Bill,
    run: Run,
    prices: RunPricer,
    params: RouteParams | None,
    draws: Draws,
    calls: int | None = None,
    content: bytes | None = None,
) -> BillSpread:
    """The draws and break-even pieces of ``bill`` (its first ``calls`` calls; default all). The per-call draws
    are seeded by the run's content (``content``: its ``workbench.trace.fingerprint.fingerprint``, computed when not
    given) and the policy, never by its name: a copy of a run (``<run_id>~2``) draws as its original does
    (docs/scale.md, "Content fingerprints")."""
    n = len(draws.block)
    index = {t.index: k for k, t in enumerate(run.turns)}
    rows = [r for r in bill.rows if calls is None or r.turn < calls]
    key = fingerprint(run) if content is None else content
    if key.startswith(b"unpicklable:"):  # a run pickle cannot write (its print names the object): its name
        key = run.run_id.encode()
    seed = int.from_bytes(hashlib.blake2b(key + bill.policy.label.encode(), digest_size=8).digest())
    rng = np.random.default_rng(seed)
    priced = True
    cf_ci = cf_rest = rec_ci = rec_rest = cf_unc = rec_unc = 0.0
    nominal = (params.block.value or 1.0) if params is not None else 1.0
    scale = run_block(run, nominal) / nominal if params is not None and params.run_block else 1.0
    blocks = _pick(draws.block, params.block) * scale if params is not None else None
    miss_p = _pick(draws.miss, params.miss_tokens) if params is not None else np.zeros(n)
    over_u = draws.over if draws.over is not None else draws.miss
    over_p = _pick(over_u, params.over_tokens) if params is not None else np.zeros(n)
    if params is not None:  # this run's own shares (runs differ), scaled by the draw's corpus-wide picks
        miss_p = _own(rng, miss_p, params.run_miss, params.miss_tokens.value, params.resampled)
        over_p = _own(rng, over_p, params.run_over, params.over_tokens.value, params.resampled)
    after = bill.first_change
    drawn: list[tuple[BillRow, Rates]] = []  # the calls the model's draws change, and their rates, in order
    points: list[float | None] = []  # per priced call, its point USD (``None``: the next drawn call's draws)
    for r in rows:
        rates = prices.rates(index.get(r.turn, r.turn), r.prompt)
        rec_rates = prices.rates(index.get(r.turn, r.turn), r.recorded_prompt)
        if rates is None or rec_rates is None or r.usd is None:
            priced = False
            continue
        r_in, _, r_write, r_out = rates
        fresh = r.prompt - r.cached - r.cache_write
        cf_ci += r.cached * r_in
        cf_rest += fresh * r_in + r.cache_write * r_write + r.completion * r_out
        cf_unc += r.prompt * r_in + r.completion * r_out
        q_in, _, q_write, q_out = rec_rates
        rec_fresh = r.recorded_prompt - r.recorded_cached - r.recorded_cache_write
        rec_ci += r.recorded_cached * q_in
        rec_rest += rec_fresh * q_in + r.recorded_cache_write * q_write + r.completion * q_out
        rec_unc += r.recorded_prompt * q_in + r.completion * q_out
        drawing = not (after is None or r.turn < after or params is None or params.accounting == "none")
        points.append(None if drawing else r.usd)
        if drawing:
            drawn.append((r, rates))
    usd, ci_lost, rest_added = np.zeros(n), np.zeros(n), np.zeros(n)
    if drawn:
        assert params is not None and blocks is not None  # a call is drawn only on a fitted route
        costs, lost_in, added = _drawn(rng, drawn, params, (blocks, miss_p, over_p))
        # summed call by call, in order, as when each call was computed alone
        for c, a in zip(lost_in, added, strict=True):
            ci_lost += c
            rest_added += a
    cost = iter(costs if drawn else ())
    for point in points:
        usd += next(cost) if point is None else point
    return BillSpread(
        usd if priced else None,
        cf_ci,
        cf_rest,
        rec_ci,
        rec_rest,
        cf_unc,
        rec_unc,
        cf_ci - ci_lost,
        cf_rest + rest_added,
    )


Rates = tuple[float, float, float, float]
Draw = tuple[np.ndarray, np.ndarray, np.ndarray]


def _drawn(
    rng: np.random.Generator, drawn: list[tuple[BillRow, Rates]], params: RouteParams, picks: Draw
) -> Draw:
    """Per call the draws change (a row, with its rates) and per draw (a column): its USD, the cached tokens it
    lost at the input price, and what it paid for them instead, from the draws' ``picks`` (block, miss share,
    under-read share). The generator is drawn from call by call, in order; the arithmetic is done on all calls
    at once, each element as for one call alone."""
    blocks, miss_p, over_p = picks
    n, rows = len(blocks), [r for r, _ in drawn]
    u, share, more = np.empty((3, len(rows), n))
    ratios, over_ratios = np.array(params.miss_ratios or [0.0]), np.array(params.over_ratios or [1.0])
    for k in range(len(rows)):
        u[k], share[k], more[k] = rng.random(n), _draw(rng, ratios, n), _draw(rng, over_ratios, n)
    rated = [(r.cached, r.prompt, r.usd, *rates[:3]) for r, rates in drawn]
    cached, prompt, usd, r_in, r_read, r_write = np.array(rated, dtype=float).T[:, :, None]  # a column each
    read = cached.repeat(n, axis=1)
    auto = [k for k, r in enumerate(rows) if r.found is not None] if params.accounting == "automatic" else []
    if auto:
        found = np.array([[min(rows[k].found or 0, rows[k].prompt)] for k in auto], dtype=float)
        whole = np.floor(found / blocks)
        for j, k in enumerate(auto):
            multiple, start = rows[k].coarse
            if multiple > 1:  # the endpoint's coarse step (CacheRules.coarse)
                whole[j] = np.where(whole[j] >= start, np.floor(whole[j] / multiple) * multiple, whole[j])
        stepped = whole * blocks
        read[auto] = np.where(stepped < max(int(params.min_tokens.value or 0), 1), 0.0, stepped)
    missed = u < miss_p
    over = ~missed & (u < miss_p + over_p)  # the model's under-reads, given back (within the prompt)
    read = np.where(missed, read * share, np.where(over, np.minimum(read * more, prompt), read))
    lost = cached - read  # >0: fewer tokens read than the point bill
    # a missed read is written again (an explicit cache), or sent fresh
    resent = r_write if params.accounting == "explicit" else r_in
    return usd + lost * (resent - r_read), lost * r_in, lost * resent


def _draw(rng: np.random.Generator, values: np.ndarray, n: int) -> np.ndarray:
    """``n`` draws from ``values``; from one value, that value (a draw from one integer takes nothing from the
    generator's stream in numpy, so the draws after it are the same either way)."""
    return values[rng.integers(0, len(values), n)] if len(values) > 1 else np.full(n, values[0])


def _own(
    rng: np.random.Generator, pick: np.ndarray, deciles: tuple[float, ...], point: float | None, scale: bool
) -> np.ndarray:
    """Per draw, one run's share: a draw from the deciles of the runs' own shares (a route fitted on few runs: the
    posterior over its calls), times the draw's corpus-wide pick over its point value where the route was
    resampled (``scale``); ``pick`` itself with no deciles."""
    if not deciles:
        return pick
    own = np.interp(rng.random(len(pick)), np.linspace(0.05, 0.95, len(deciles)), deciles)
    return np.clip(own * pick / point, 0.0, 1.0) if scale and point else own


def read_price_break_even(
    cf_cached_in: float, cf_rest: float, rec_cached_in: float, rec_rest: float
) -> float | None:
    """The cache-read price, as a share of the input price, at which the saving (recorded - counterfactual) is
    zero: ``saving(rho) = (rec_rest - cf_rest) + rho x (rec_cached_in - cf_cached_in)``; ``None`` when the
    saving does not depend on it. The rest is priced as recorded (writes at their own rate)."""
    slope = rec_cached_in - cf_cached_in
    if abs(slope) < 1e-12:
        return None
    return -(rec_rest - cf_rest) / slope


def break_even_interval(
    cf_cached_in: np.ndarray, cf_rest: np.ndarray, rec_cached_in: float, rec_rest: float
) -> tuple[float | None, float | None, float | None]:
    """The read-price break-even over the draws, each draw's bill with its own reads
    (``BillSpread.cf_cached_in_draws`` / ``cf_rest_draws``, summed over runs): its 5th percentile, median and
    95th percentile; ``None`` each when no draw's saving depends on the read price. The median is the figure to
    quote beside the bill's median (the point bill's break-even assumes no miss)."""
    slope = rec_cached_in - np.asarray(cf_cached_in, dtype=float)
    live = np.abs(slope) >= 1e-12
    if not live.any():
        return None, None, None
    even = -(rec_rest - np.asarray(cf_rest, dtype=float)[live]) / slope[live]
    lo, med, hi = np.quantile(even, (QUANTILES[0], 0.5, QUANTILES[1]))
    return float(lo), float(med), float(hi)


def interval_fields(sp: BillSpread, point_usd: float | None, recorded_usd: float | None) -> dict[str, Any]:
    """One bill's interval as plain fields (``replay --json``'s ``bill.interval``): the counterfactual USD's
    median and 90% interval over the draws beside the point bill, the read-price break-even with its interval,
    and the saving billed with no cache. ``None`` where the bill could not be priced."""
    out: dict[str, Any] = {
        "draws": 0 if sp.usd is None else len(sp.usd),
        "usd": None,
        "read_price_break_even": None,
    }
    if sp.usd is not None and point_usd is not None:
        lo, med, hi = np.quantile(sp.usd, (QUANTILES[0], 0.5, QUANTILES[1]))
        out["usd"] = {"point": point_usd, "low": float(lo), "median": float(med), "high": float(hi)}
    even = read_price_break_even(sp.cf_cached_in, sp.cf_rest, sp.rec_cached_in, sp.rec_rest)
    if even is not None:
        lo_e, med_e, hi_e = (
            break_even_interval(sp.cf_cached_in_draws, sp.cf_rest_draws, sp.rec_cached_in, sp.rec_rest)
            if sp.cf_cached_in_draws is not None and sp.cf_rest_draws is not None
            else (None, None, None)
        )
        out["read_price_break_even"] = {"point": even, "low": lo_e, "median": med_e, "high": hi_e}
    out["saved_uncached_share"] = (
        (sp.rec_uncached - sp.cf_uncached) / sp.rec_uncached if sp.rec_uncached else None
    )
    if recorded_usd is not None and out["usd"] is not None:
        u = out["usd"]
        out["saved_usd_share"] = {
            "low": (recorded_usd - u["high"]) / recorded_usd,
            "median": (recorded_usd - u["median"]) / recorded_usd,
            "high": (recorded_usd - u["low"]) / recorded_usd,
        }
    return out


def bill_interval(bill: Bill, run: Run, calls: int | None = None) -> dict[str, Any]:
    """One run's bill with its interval (``replay --json``'s ``bill.interval``): the draws of the run's route's
    fitted cache model over the bill's first ``calls`` calls, seeded by the run's content as in a grid, so the
    same run answers alike alone and in ``bill_grid`` (:func:`interval_fields`)."""
    from workbench.context.cache_routes import route_params, route_rules

    prices = RunPricer(run, route_rules(run))
    sp = spread(bill, run, prices, route_params(run), Draws.make(), calls)
    return interval_fields(sp, bill.counterfactual(calls)["usd"], bill.recorded()["usd"])


def crossing(xs: list[float], ys: list[float]) -> float | None:
    """Where ``ys`` (savings along increasing ``xs``) first changes sign, by linear interpolation; ``None``
    when it keeps one sign."""
    for (x0, y0), (x1, y1) in itertools.pairwise(zip(xs, ys, strict=True)):
        if y0 == 0:
            return x0
        if (y0 < 0) != (y1 < 0):
            return x0 + (x1 - x0) * (0 - y0) / (y1 - y0)
    return None


def sign_words(low: float, high: float) -> str:
    """The verdict on a saving's 90% interval (shares of the recorded bill): robust one way, or not."""
    if low <= 0 <= high:
        return f"the sign depends on the miss rate ({low:+.1%} to {high:+.1%} saved)"
    if high < 0:
        return f"costs {-high:+.1%} to {-low:+.1%}"
    return f"saves {low:.1%} to {high:.1%}"
