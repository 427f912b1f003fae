"""The prompt-cache model fitted per provider route, out of sample, beside two naive baselines
(docs/cache-model.md, "Fit per provider route"): ``fit_routes(runs)`` gives a ``RouteFit``."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.cache_fit import fit_run, stable_prefixes
from workbench.analysis.frontier import missing
from workbench.context.cache_model import OPENAI_MIN_TOKENS, OPENAI_STEP_TOKENS, CacheRules
from workbench.context.cache_requests import endpoint_of
from workbench.context.cache_routes import (
    MIN_FIT_RUNS,
    Interval,
    RouteParams,
    call_deciles,
    family_of,
    jeffreys,
    route_of,
)
from workbench.trace.schema import Run

FOLDS = 5
BOOTSTRAP = 200
SEED = 23
MAX_BLOCK = 4096  # the search range of a block: OpenAI documents 128, Gemini's reads step by about 2,000
# a call that read under 90% of the prediction missed (a lost or evicted entry, another replica)
MISS_SHARE = 0.90
TOLERANCES = (0.02, 0.10)
DECILES = np.linspace(0.05, 0.95, 10)
_NO_EXPIRY = 1e12  # seconds: the fit's raw pass lets nothing expire; the TTL is fitted on the gaps after


def _within(pred: np.ndarray, rec: np.ndarray, tol: float) -> np.ndarray:
    return np.abs(pred - rec) <= tol * rec


# -- the features of every call (what any parameter choice is predicted from) ---------------------------------


def call_features(runs: Sequence[Run]) -> pd.DataFrame:
    """One row per call with recorded usage: the recorded split, the previous call's, the idle gap, and the
    cached prefix the model finds with and without the reply readable (before any block or TTL), and the
    explicit model's prediction on Anthropic routes."""
    stable = stable_prefixes(runs)
    raw = {
        reply: CacheRules("openai", min_tokens=0, step=1, ttl_s=_NO_EXPIRY, reply_cached=reply)
        for reply in (True, False)
    }
    frames = []
    for run in runs:
        route = route_of(run)
        family = family_of(run)
        explicit = fit_run(run, stable=stable.get(run.run_id)) if family == "anthropic" else None
        found = {reply: fit_run(run, rules) for reply, rules in raw.items()}
        base = found[True]
        if not base:
            continue
        at = {t.index: t.started_at for t in run.turns}
        served = {t.index: endpoint_of(t) for t in run.turns}
        gaps, prev = [], {}  # the idle time of the call's endpoint's cache: since its last call there
        for r in base:
            t, e = at.get(r.turn), served.get(r.turn)
            last = prev.get(e)
            gaps.append(np.nan if t is None or last is None else (t - last).total_seconds())
            if t is not None:
                prev[e] = t
        rows = pd.DataFrame(
            {
                "run_id": run.run_id,
                "route": route,
                "family": family,
                "call": [r.turn for r in base],
                "endpoint": [served.get(r.turn) or "" for r in base],
                "first": [r.first for r in base],
                "prompt": [r.prompt for r in base],
                "reported": [r.recorded_cached is not None for r in base],
                "recorded_cached": [r.recorded_cached or 0 for r in base],
                "recorded_write": [r.recorded_write or 0 for r in base],
                "found_reply": [r.predicted_cached for r in base],
                "found_prompt": [r.predicted_cached for r in found[False]],
                "explicit": [r.predicted_cached for r in explicit] if explicit else 0,
                "gap": gaps,
            }
        )
        rows["prev_prompt"] = rows["prompt"].shift(1).fillna(0).astype(int)
        rows["prev_rw"] = (rows["recorded_cached"] + rows["recorded_write"]).shift(1).fillna(0).astype(int)
        frames.append(rows)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


# -- fitting one route -------------------------------------------------------------------------------------


def _best_block(found: np.ndarray, rec: np.ndarray, candidates: np.ndarray) -> tuple[int, int]:
    """The block (from ``candidates``) that puts most calls within 2%, and that count; ties go to the smaller
    absolute error in total, then to the larger block (the coarsest the reads allow)."""
    best, best_key = int(candidates[0]), (-1, 0.0)
    for chunk in np.array_split(candidates, max(1, len(candidates) // 256)):
        pred = (found[None, :] // chunk[:, None]) * chunk[:, None]
        hits = _within(pred, rec[None, :], TOLERANCES[0]).sum(axis=1)
        err = np.abs(pred - rec[None, :]).sum(axis=1)
        for b, h, e in zip(chunk, hits, err, strict=True):
            key = (int(h), -float(e))
            if key >= best_key:
                best, best_key = int(b), key
    return best, best_key[0]


Coarse = tuple[tuple[str, int, int], ...]
COARSE_MULTIPLES = (2, 3, 4)
COARSE_FROM = range(0, 9)  # in blocks
MIN_ENDPOINT_CALLS = 30  # an endpoint's coarse step is fitted on at least this many calls that read


def _coarsen(n: np.ndarray, endpoints: np.ndarray | None, coarse: Coarse) -> np.ndarray:
    """Whole blocks ``n`` per call, stepped by each call's endpoint's ``(multiple, from_blocks)``."""
    if not coarse or endpoints is None:
        return n
    out = n.copy()
    for e, m, start in coarse:
        on = (endpoints == e) & (n >= start)
        out[on] = n[on] // m * m
    return out


def _stepped(
    found: np.ndarray, block: int, min_tokens: int, endpoints: np.ndarray | None = None, coarse: Coarse = ()
) -> np.ndarray:
    return _adapted(found, np.full(len(found), float(block)), min_tokens, endpoints, coarse)


def run_blocks(rec: np.ndarray, run_ids: np.ndarray, block: float) -> np.ndarray:
    """Per call, the run's block in reported tokens as its *earlier* reads show it (causal: a call never sees
    its own read): the last positive read over its whole number of nominal blocks. The provider counts blocks
    in its own tokens; the reported tokens per block differ by run (2,000-2,130 on Gemini 3 Pro), with the
    content's tokenization."""
    out = np.empty(len(rec), dtype=float)
    b, prev = float(block), None
    for k, (r, rid) in enumerate(zip(rec, run_ids, strict=True)):
        if rid != prev:
            b, prev = float(block), rid
        out[k] = b
        if r > 0:
            b = r / max(1, round(r / b))
    return out


def _adapted(
    found: np.ndarray,
    blocks: np.ndarray,
    min_tokens: int,
    endpoints: np.ndarray | None = None,
    coarse: Coarse = (),
) -> np.ndarray:
    n = _coarsen(np.floor(found / blocks).astype(np.int64), endpoints, coarse)
    pred = np.round(n * blocks).astype(np.int64)
    return np.where(pred < max(min_tokens, 1), 0, pred)


def _fit_coarse(
    found: np.ndarray, rec: np.ndarray, blocks: np.ndarray, min_tokens: int, endpoints: np.ndarray
) -> Coarse:
    """Per endpoint with enough reads, the ``(multiple, from_blocks)`` that puts most of its calls within 2%,
    kept only where it beats stepping by one block (Gemini via OpenRouter: ``Google AI Studio`` reads 1, 2, 3,
    then only even block counts; ``Google`` (Vertex AI) every count)."""
    out = []
    n = np.floor(found / blocks).astype(np.int64)
    for e in sorted(set(endpoints.tolist()) - {""}):
        on = endpoints == e
        if int(((rec > 0) & on).sum()) < MIN_ENDPOINT_CALLS:
            continue
        ne, be, re_ = n[on], blocks[on], rec[on]

        def hits(m: int, start: int, ne: np.ndarray = ne, be: np.ndarray = be, re_: np.ndarray = re_) -> int:
            k = ne if m == 1 else np.where(ne >= start, ne // m * m, ne)
            pred = np.round(k * be).astype(np.int64)
            pred = np.where(pred < max(min_tokens, 1), 0, pred)
            return int(_within(pred, re_, TOLERANCES[0]).sum())

        best, best_hits = (1, 0), hits(1, 0)
        for m in COARSE_MULTIPLES:
            for start in COARSE_FROM:
                h = hits(m, start)
                if h > best_hits:
                    best, best_hits = (m, start), h
        if best[0] > 1:
            out.append((e, best[0], best[1]))
    return tuple(out)


def _fit_ttl(pred: np.ndarray, rec: np.ndarray, gap: np.ndarray) -> float | None:
    """The TTL that explains most calls (a gap above it reads 0), or ``None`` when no expiry does better than
    none: a read after a longer gap than any TTL candidate is evidence against it."""
    timed = ~np.isnan(gap) & (pred > 0)
    if not timed.any():
        return None
    base = int(_within(pred, rec, TOLERANCES[0]).sum())
    best, best_hits = None, base
    for t in np.unique(gap[timed]):
        p = np.where(timed & (gap > t), 0, pred)
        h = int(_within(p, rec, TOLERANCES[0]).sum())
        if h > best_hits:
            best, best_hits = float(t), h
    return best


@dataclass(frozen=True)
class _Point:
    accounting: str
    block: int
    min_tokens: int
    reply_cached: bool
    ttl_s: float | None
    miss: float
    miss_ratios: tuple[float, ...]
    ttl_lower_s: float | None
    adapt: bool = False
    miss_tokens: float = 0.0
    coarse: Coarse = ()
    over_tokens: float = 0.0
    over_ratios: tuple[float, ...] = ()


def _point(f: pd.DataFrame, candidates: Sequence[int] | None = None) -> _Point | None:
    """The point fit of one route's calls (each run's first call left out); ``None`` with no call to fit.
    ``candidates``: the blocks to choose among (default: every size up to ``MAX_BLOCK``)."""
    f = f[~f["first"]]
    if f.empty:
        return None
    rec = f["recorded_cached"].to_numpy(np.int64)
    gap = f["gap"].to_numpy(float)
    if (f["recorded_write"] > 0).any():
        pred = f["explicit"].to_numpy(np.int64)
        accounting, block, min_tokens, reply, ttl, adapt = "explicit", 1, 0, True, None, False
    elif (rec > 0).any():
        accounting, choice = "automatic", None
        cands = (
            np.arange(1, MAX_BLOCK + 1, dtype=np.int64)
            if candidates is None
            else np.array(sorted(set(candidates)), dtype=np.int64)
        )
        for reply, col in ((True, "found_reply"), (False, "found_prompt")):
            found = f[col].to_numpy(np.int64)
            b, hits = _best_block(found, rec, cands)
            if choice is None or hits > choice[0]:
                choice = (hits, reply, b, found)
        _, reply, block, found = choice
        # the smallest read bounds the minimum from above only: never past the family's documented one (one
        # Codex run whose prompts all exceed 9,216 tokens says nothing about OpenAI's 1,024)
        documented = DOCUMENTED_MIN.get(str(f["family"].iloc[0])) if "family" in f else None
        min_tokens = int(rec[rec > 0].min()) // block * block
        min_tokens = min_tokens if documented is None else min(min_tokens, documented)
        pred = _stepped(found, block, min_tokens)
        per_run = run_blocks(rec, f["run_id"].to_numpy(), block)
        adapted = _adapted(found, per_run, min_tokens)
        adapt = bool(_within(adapted, rec, TOLERANCES[0]).sum() > _within(pred, rec, TOLERANCES[0]).sum())
        endpoints = f["endpoint"].to_numpy(str)
        blocks = per_run if adapt else np.full(len(rec), float(block))
        coarse = _fit_coarse(found, rec, blocks, min_tokens, endpoints)
        pred = _adapted(found, blocks, min_tokens, endpoints, coarse)
        # a TTL is fitted on enough runs only (on two it fits one run's noise: 13 s on OpenAI)
        ttl = _fit_ttl(pred, rec, gap) if f["run_id"].nunique() >= MIN_FIT_RUNS else None
        if ttl is not None:
            pred = np.where(~np.isnan(gap) & (gap > ttl), 0, pred)
    else:
        return _Point("none", 1, 0, True, None, 0.0, (), None)
    if accounting == "explicit":
        coarse = ()
    live = pred > 0
    missed = live & (rec < MISS_SHARE * pred)
    ratios = rec[missed] / pred[missed]
    deciles = _weighted_deciles(ratios, pred[missed].astype(float))
    read_gaps = gap[(rec > 0) & ~np.isnan(gap)]
    lower = float(read_gaps.max()) if len(read_gaps) else None
    miss = float(missed.sum() / live.sum()) if live.any() else 0.0
    over = live & (rec * MISS_SHARE > pred)
    over_deciles = _weighted_deciles(rec[over] / pred[over], pred[over].astype(float))
    return _Point(
        accounting,
        block,
        min_tokens,
        reply,
        ttl,
        miss,
        deciles,
        lower,
        adapt,
        _token_share(pred, rec),
        coarse,
        _over_share(pred, rec),
        over_deciles,
    )


def _token_share(pred: np.ndarray, rec: np.ndarray, over: bool = False) -> float:
    """The share of the predicted read tokens that sit on missed calls (misses fall more often on small early
    reads, so a bill's draws weigh them by tokens: a call's chance of missing, per predicted token); ``over``: on
    calls that read over 1/0.9 of the prediction instead (the model's under-reads: a block more than it found, a
    reply read through), which a bill's draws give back."""
    live = pred > 0
    hit = live & ((rec * MISS_SHARE > pred) if over else (rec < MISS_SHARE * pred))
    total = float(pred[live].sum())
    return float(pred[hit].sum()) / total if total else 0.0


def _over_share(pred: np.ndarray, rec: np.ndarray) -> float:
    return _token_share(pred, rec, over=True)


def _weighted_deciles(ratios: np.ndarray, weights: np.ndarray) -> tuple[float, ...]:
    """Deciles (5%, 15% ... 95%) of what missed calls read over what was predicted, weighted by the prediction."""
    if not len(ratios):
        return ()
    order = np.argsort(ratios)
    r, w = ratios[order], weights[order]
    cum = (np.cumsum(w) - 0.5 * w) / w.sum()
    return tuple(round(float(x), 4) for x in np.interp(DECILES, cum, r))


def _interval(values: list[float], point: float | None) -> Interval:
    vals = [v for v in values if v is not None and not np.isnan(v)]
    if not vals or point is None:
        return Interval(point)
    lo, hi = np.quantile(vals, [0.025, 0.975])
    return Interval(point, float(lo), float(hi))


def _ttl_interval(values: list[float | None], point: float | None) -> Interval:
    """The TTL's 95% bootstrap interval; a resample where no expiry explains more calls has an unbounded TTL, so
    the high end is ``None`` (unbounded) when more than 2.5% of the resamples fit none."""
    if point is None or not values:
        return Interval(point)
    arr = np.array([np.inf if v is None else v for v in values], dtype=float)
    lo = float(np.quantile(arr, 0.025, method="lower"))
    hi = float(np.quantile(arr, 0.975, method="higher"))
    return Interval(point, None if np.isinf(lo) else lo, None if np.isinf(hi) else hi)


def fit_route(
    f: pd.DataFrame,
    route: str,
    reps: int = BOOTSTRAP,
    seed: int = SEED,
    candidates: Sequence[int] | None = None,
) -> RouteParams | None:
    """The route's parameters with 95% bootstrap intervals over its runs (the block re-searched within 10% of
    the point fit; the reply choice and TTL held at the point fit's)."""
    p = _point(f, candidates)
    if p is None:
        return None
    body = f[~f["first"]]
    runs = body["run_id"].unique()
    rng = np.random.default_rng(seed)
    by_run = {rid: g for rid, g in body.groupby("run_id", sort=False)}
    blocks, misses, mins, tokens, overs = [], [], [], [], []
    ttls: list[float | None] = []
    col = "found_reply" if p.reply_cached else "found_prompt"
    lo, hi = max(1, int(p.block * 0.9)), int(p.block * 1.1) + 1
    search = np.arange(lo, hi, dtype=np.int64) if candidates is None else np.array(sorted(set(candidates)))
    # too few runs to resample: the calls' binomial interval, wide on few calls
    few = len(runs) < MIN_FIT_RUNS
    for _ in range(0 if few else reps):
        s = pd.concat([by_run[r] for r in rng.choice(runs, size=len(runs), replace=True)])
        rec = s["recorded_cached"].to_numpy(np.int64)
        if p.accounting == "automatic":
            b, _ = _best_block(s[col].to_numpy(np.int64), rec, search)
            m = int(rec[rec > 0].min()) // b * b if (rec > 0).any() else 0
            pred = predict(s, replace(p, block=b, min_tokens=m, ttl_s=None))  # the TTL is re-fitted below
            gap = s["gap"].to_numpy(float)
            if p.ttl_s is not None:  # the TTL re-fitted on the resample (None: no expiry explains more)
                t = _fit_ttl(pred, rec, gap)
                ttls.append(t)
                if t is not None:
                    pred = np.where(~np.isnan(gap) & (gap > t), 0, pred)
            blocks.append(b)
            mins.append(m)
        elif p.accounting == "explicit":
            pred = s["explicit"].to_numpy(np.int64)
        else:
            continue
        live = pred > 0
        misses.append(float((live & (rec < MISS_SHARE * pred)).sum() / live.sum()) if live.any() else 0.0)
        tokens.append(_token_share(pred, rec))
        overs.append(_over_share(pred, rec))
    pred = predict(body, p)
    live = int((pred > 0).sum())
    share = _calls_interval if few else (lambda values, point, _n: _interval(values, point))
    return RouteParams(
        route=route,
        accounting=p.accounting,
        block=_interval(blocks, float(p.block)),
        min_tokens=_interval(mins, float(p.min_tokens)),
        reply_cached=p.reply_cached,
        run_block=p.adapt,
        coarse=p.coarse,
        ttl_s=_ttl_interval(ttls, p.ttl_s),
        ttl_lower_s=p.ttl_lower_s,
        miss=share(misses, p.miss, live),
        miss_tokens=share(tokens, p.miss_tokens, live),
        miss_ratios=p.miss_ratios,
        over_tokens=share(overs, p.over_tokens, live),
        over_ratios=p.over_ratios,
        run_miss=call_deciles(p.miss_tokens, live) if few else _run_shares(body, pred, _token_share),
        run_over=call_deciles(p.over_tokens, live) if few else _run_shares(body, pred, _over_share),
        runs=len(runs),
        calls=len(body),
    )


def _calls_interval(_values: list[float], point: float, calls: int) -> Interval:
    """A share's 95% Jeffreys interval over ``calls`` calls, for a route with too few runs to bootstrap (the calls
    of one run are not independent, so this is the narrowest honest interval; 0 to 1 with no call)."""
    lo, hi = jeffreys(point, calls, (0.025, 0.975))
    return Interval(point, lo, hi)


def _run_shares(body: pd.DataFrame, pred: np.ndarray, share: Any) -> tuple[float, ...]:
    """Deciles (5% ... 95%) over runs of each run's own ``share`` (:func:`_token_share`, :func:`_over_share`),
    weighted by the run's predicted read tokens (a share per token): runs differ far more than calls drawn
    independently at one share allow (a held-out run's bill spreads by them)."""
    rec = body["recorded_cached"].to_numpy(np.int64)
    runs = [ix for ix in body.groupby("run_id", sort=False).indices.values() if (pred[ix] > 0).any()]
    shares = np.array([share(pred[ix], rec[ix]) for ix in runs])
    return _weighted_deciles(shares, np.array([float(pred[ix].sum()) for ix in runs]))


# -- predictions, out of sample ---------------------------------------------------------------------------


def predict(f: pd.DataFrame, p: _Point | None) -> np.ndarray:
    """The model's cached tokens for the calls ``f`` under point fit ``p`` (``None``: the documented rules'
    prediction, ``explicit`` on Anthropic, the documented block otherwise — ``documented`` column)."""
    if p is None:
        return f["documented"].to_numpy(np.int64)
    if p.accounting == "none":
        return np.zeros(len(f), dtype=np.int64)
    if p.accounting == "explicit":
        return f["explicit"].to_numpy(np.int64)
    found = f["found_reply" if p.reply_cached else "found_prompt"].to_numpy(np.int64)
    eps = f["endpoint"].to_numpy(str)
    if p.adapt:
        blocks = run_blocks(f["recorded_cached"].to_numpy(np.int64), f["run_id"].to_numpy(), p.block)
        pred = _adapted(found, blocks, p.min_tokens, eps, p.coarse)
    else:
        pred = _stepped(found, p.block, p.min_tokens, eps, p.coarse)
    if p.ttl_s is not None:
        gap = f["gap"].to_numpy(float)
        pred = np.where(~np.isnan(gap) & (gap > p.ttl_s), 0, pred)
    return pred


def folds_of(run_ids: Sequence[str], k: int = FOLDS) -> dict[str, int]:
    """A run's fold: runs in the order of a hash of their id, dealt round-robin (stable across machines)."""
    order = sorted(run_ids, key=lambda r: hashlib.blake2b(r.encode(), digest_size=8).digest())
    return {r: i % k for i, r in enumerate(order)}


_UNKNOWN_ROW: dict[str, Any] = {
    k: None
    for k in (
        "within_2pct", "within_10pct", "floor_within_2pct", "floor_within_10pct", "rw_within_2pct",
        "rw_within_10pct", "baseline", "baseline_within_2pct", "baseline_within_10pct", "outside_read_nothing",
        "outside_read_less", "outside_read_more", "recorded_cached", "predicted_cached", "beats_baseline",
    )
}  # fmt: skip

# In-run misses: a run whose calls so far missed more often than not is predicted to miss (read nothing) next.
# The prior: PRIOR_CALLS calls at PRIOR_MISS, so a run's first few misses do not flip it alone.
PRIOR_MISS = 0.1
PRIOR_CALLS = 4.0


def in_run_misses(read: np.ndarray, f: pd.DataFrame) -> np.ndarray:
    """The point prediction of each call of ``f`` from the model's read ``read``: the model's read, or 0 where the
    run's *earlier* calls (causal: never the call's own read) missed more often than not, a miss being a
    reported read under 90% of the model's (a cache the calls keep missing: a proxy's pool of upstream caches,
    where most calls land on one that never saw the run). Under half, the model's read stands."""
    rec = f["recorded_cached"].to_numpy(np.int64)
    reported = f["reported"].to_numpy(bool)
    out = read.copy()
    misses, seen, prev = PRIOR_MISS * PRIOR_CALLS, PRIOR_CALLS, None
    for k, rid in enumerate(f["run_id"].to_numpy()):
        if rid != prev:
            misses, seen, prev = PRIOR_MISS * PRIOR_CALLS, PRIOR_CALLS, rid
        if misses / seen > 0.5:
            out[k] = 0
        if reported[k] and read[k] > 0:
            misses += float(rec[k] < MISS_SHARE * read[k])
            seen += 1
    return out


@dataclass(frozen=True)
class RouteFit:
    """Per call predictions (out of sample) and baselines, per route parameters fitted on all its runs."""

    calls: pd.DataFrame
    params: dict[str, RouteParams]

    def summary(self) -> pd.DataFrame:
        """Per route: calls (after each run's first), the model's and both baselines' share within 2% / 10%,
        the better baseline, and why the calls outside 2% are. The shares are over the calls whose read was
        reported (``reported``); a route that reported none has no share (``None``: unknown, never 0 or 1)."""
        out = []
        for route, all_calls in self.calls[~self.calls["first"]].groupby("route", sort=True):
            g = all_calls[all_calls["reported"]]
            row: dict[str, Any] = {
                "route": route,
                "calls": len(all_calls),
                "runs": all_calls["run_id"].nunique(),
                "reported": len(g),
            }
            if g.empty:
                out.append(row | _UNKNOWN_ROW)
                continue
            rec = g["recorded_cached"].to_numpy(np.int64)
            for name, col in (
                ("", "predicted_cached"),
                ("floor_", "baseline_prev_floor"),
                ("rw_", "baseline_prev_rw"),
            ):
                pred = g[col].to_numpy(np.int64)
                for tol in TOLERANCES:
                    row[f"{name}within_{round(tol * 100)}pct"] = float(_within(pred, rec, tol).mean())
            better = "floor_" if row["floor_within_2pct"] >= row["rw_within_2pct"] else "rw_"
            row["baseline"] = (
                "previous prompt floored to blocks" if better == "floor_" else "previous read + write"
            )
            row["baseline_within_2pct"] = row[f"{better}within_2pct"]
            row["baseline_within_10pct"] = row[f"{better}within_10pct"]
            pred = g["predicted_cached"].to_numpy(np.int64)
            out2 = ~_within(pred, rec, TOLERANCES[0])
            row["outside_read_nothing"] = int((out2 & (rec == 0) & (pred > 0)).sum())
            row["outside_read_less"] = int((out2 & (rec > 0) & (rec < pred)).sum())
            row["outside_read_more"] = int((out2 & (rec > pred)).sum())
            row["recorded_cached"] = int(rec.sum())
            row["predicted_cached"] = int(pred.sum())
            row["beats_baseline"] = row["within_2pct"] >= row["baseline_within_2pct"]
            out.append(row)
        return pd.DataFrame(out)

    def objects(self) -> list[dict[str, Any]]:
        """``workbench bills --fit --json``: one object per route."""
        objs = []
        for rec in self.summary().to_dict("records"):
            row = {k: None if missing(v) else v for k, v in rec.items()}
            p = self.params.get(row["route"])
            objs.append(
                {
                    "route": row["route"],
                    "calls": int(row["calls"]),
                    "runs": int(row["runs"]),
                    "reported": int(row["reported"]),
                    "cache_reads": "reported" if row["reported"] else "not reported (unknown)",
                    "within_2pct": row["within_2pct"],
                    "within_10pct": row["within_10pct"],
                    "baseline": row["baseline"],
                    "baseline_within_2pct": row["baseline_within_2pct"],
                    "baseline_within_10pct": row["baseline_within_10pct"],
                    "baselines": {
                        "previous_prompt_floored": [row["floor_within_2pct"], row["floor_within_10pct"]],
                        "previous_read_plus_write": [row["rw_within_2pct"], row["rw_within_10pct"]],
                    },
                    "outside_2pct": None
                    if row["outside_read_nothing"] is None
                    else {
                        "read_nothing": int(row["outside_read_nothing"]),
                        "read_less": int(row["outside_read_less"]),
                        "read_more": int(row["outside_read_more"]),
                    },
                    "recorded_cached": row["recorded_cached"],
                    "predicted_cached": row["predicted_cached"],
                    "parameters": None if p is None else p.to_dict(),
                }
            )
        return objs

    def call_rows(self) -> pd.DataFrame:
        """``--calls FILE.csv``: one row per call."""
        cols = ["run_id", "call", "route", "recorded_cached", "predicted_cached", "first", "fold",
                "baseline_prev_floor", "baseline_prev_rw", "endpoint", "model_read"]  # fmt: skip
        out = self.calls[cols].copy()
        # a read the response did not report is unknown: an empty cell, never a 0
        out["recorded_cached"] = out["recorded_cached"].astype("Int64").where(self.calls["reported"])
        return out


def fit_routes(runs: Sequence[Run], *, folds: int = FOLDS, reps: int = BOOTSTRAP) -> RouteFit:
    """The per-route fit over ``runs``: K-fold by run for the predictions, all runs for the parameters."""
    f = call_features(runs)
    if f.empty:
        return RouteFit(f, {})
    f["documented"] = _documented(runs, f)
    fold = folds_of(list(f["run_id"].unique()), folds)
    f["fold"] = f["run_id"].map(fold)
    pred = np.zeros(len(f), dtype=np.int64)
    model_read = np.zeros(len(f), dtype=np.int64)
    floor = np.zeros(len(f), dtype=np.int64)
    few = {str(r): _few_candidates(f, str(r)) for r in f["route"].unique()}
    for route, g in f.groupby("route", sort=False):
        for k in sorted(g["fold"].unique()):
            test = g[g["fold"] == k]
            train = g[(g["fold"] != k) & g["reported"]]  # an unreported read is unknown: never fitted as 0
            p = _point(train) if train["run_id"].nunique() >= MIN_FIT_RUNS else _point(train, few[str(route)])
            idx = test.index.to_numpy()
            read = predict(test, p)
            model_read[idx] = read
            pred[idx] = in_run_misses(read, test)
            block = p.block if p is not None and p.accounting == "automatic" else 1
            mins = p.min_tokens if p is not None and p.accounting == "automatic" else 0
            floor[idx] = _stepped(test["prev_prompt"].to_numpy(np.int64), block, mins)
    f["predicted_cached"] = pred
    f["model_read"] = model_read
    f["baseline_prev_floor"] = floor
    f["baseline_prev_rw"] = f["prev_rw"]
    params = {}
    for route, g in f[f["reported"]].groupby("route", sort=True):
        n = g["run_id"].nunique()
        fitted = fit_route(
            g, str(route), reps=reps, candidates=None if n >= MIN_FIT_RUNS else few[str(route)]
        )
        if fitted is not None:
            params[str(route)] = fitted
    return RouteFit(f, params)


# the documented block of each family (OpenAI's 128-token increments; Gemini's ~2,048 from the first reading) and
# minimum cacheable prompt (OpenAI: 1,024 tokens)
DOCUMENTED_BLOCK = {"openai": OPENAI_STEP_TOKENS, "gemini": 2048}
DOCUMENTED_MIN = {"openai": OPENAI_MIN_TOKENS}


def _few_candidates(f: pd.DataFrame, route: str) -> list[int]:
    """The blocks a route with too few runs to search freely chooses among: its family's documented block, and
    the block fitted on the same family's best-recorded other route, once or doubled (a free search on one or two
    runs fits noise: a block of 818 from one OpenAI run, 256 from the proxy's 19 calls)."""
    fam = f.loc[f["route"] == route, "family"].iloc[0]
    out = [DOCUMENTED_BLOCK.get(fam, 1)]
    others = f[(f["route"] != route) & (f["family"] == fam)]
    if not others.empty:
        best = others.groupby("route")["run_id"].nunique().sort_values(ascending=False)
        if best.iloc[0] >= MIN_FIT_RUNS:
            p = _point(others[others["route"] == best.index[0]])
            if p is not None and p.accounting == "automatic":
                out += [p.block, 2 * p.block]
    return out


def _documented(runs: Sequence[Run], f: pd.DataFrame) -> np.ndarray:
    """The documented rules' prediction per call (the family picked by model name, as before the fit)."""
    stable = stable_prefixes(runs)
    pred: dict[tuple[str, int], int] = {}
    for run in runs:
        for r in fit_run(run, stable=stable.get(run.run_id)):
            pred[(run.run_id, r.turn)] = r.predicted_cached
    return np.array(
        [pred.get((rid, c), 0) for rid, c in zip(f["run_id"], f["call"], strict=True)], dtype=np.int64
    )
