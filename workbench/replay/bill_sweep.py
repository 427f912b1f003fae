"""Bills over a grid: context length x grant x observation masking, per run, with spend and spend saved in tokens
and dollars against the recording (docs/counterfactual-bills.md).

Each cell replays the run with the governors on the counterfactual meter (so a grant stops a pruned run later),
then bills the calls the replay made. ``saved_*`` = recorded - counterfactual (negative: the policy cost more).

Call signature::

    frame = bill_grid(runs, context_lengths=[None, 32_768], grants=[None], masks=[None, 10])
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Sequence
from itertools import product
from typing import Any

import numpy as np
import pandas as pd

from workbench.context.cache_routes import route_params, route_rules
from workbench.govern.policy import Policy
from workbench.replay.bill import RunBills, counterfactual_bill, replay_with_bill
from workbench.replay.bill_interval import (
    QUANTILES,
    BillSpread,
    Draws,
    break_even_interval,
    crossing,
    read_price_break_even,
    spread,
)
from workbench.trace.fingerprint import fingerprint
from workbench.trace.schema import Run

# a grant no run reaches: "no grant" in a grid (the governors still run; only the cost meter never binds)
NO_GRANT = 10**15


def bill_grid(
    runs: Iterable[Run],
    *,
    context_lengths: Sequence[int | None] = (None,),
    grants: Sequence[int | None] = (None,),
    masks: Sequence[int | None] = (None,),
    rules: str = "current",
    governed: bool = True,
    block_masks: Sequence[int] = (),
    on_run: Callable[[Run, RunBills], None] | None = None,
    **policy: Any,
) -> pd.DataFrame:
    """One row per run x context length x grant x mask. ``governed=False`` bills every recorded call (no
    governor replay: faster, and the grant axis is ignored). ``block_masks``: cache-aware masks beside the sliding
    ones (the mask moves every M turns by M observations; ``mask_block`` = M on their rows). ``on_run(run, bills)``:
    called once a run is billed, with what its bills read (the report keeps its context replays).

    Each row carries its interval (``cf_usd_draws``: the USD of every draw of the fitted cache model,
    workbench.replay.bill_interval, one read-only float64 array a row, the same array for the rows of a run whose
    bills change no call and bill as many calls; ``None`` where a call is unpriced) and the
    pieces of its break-even (``*_cached_in``, ``*_rest``, ``*_uncached``; ``cf_cached_in_draws`` and
    ``cf_rest_draws`` per draw, arrays too)."""
    runs = list(runs)
    specs = [(m, None) for m in masks] + [(m, m) for m in block_masks]
    return _frame(_rows(runs, context_lengths, grants, specs, rules, governed, policy, on_run))


def _rows(
    runs: Sequence[Run],
    context_lengths: Sequence[int | None],
    grants: Sequence[int | None],
    masks: Sequence[tuple[int | None, int | None]],
    rules: str,
    governed: bool,
    policy: dict[str, Any],
    on_run: Callable[[Run, RunBills], None] | None = None,
) -> list[dict[str, Any]]:
    """``bill_grid``'s rows: ``len(context_lengths x grants x masks)`` per run, in order."""
    rows: list[dict[str, Any]] = []
    draws = Draws.make()
    axes = list(product(context_lengths, grants if governed else (None,)))
    policies = {(n, g): Policy.named(rules, grant=g or NO_GRANT, context_length=n, **policy) for n, g in axes}
    for run in runs:
        content = fingerprint(run)  # seeds the run's draws: copies draw alike
        cache_rules = route_rules(run)
        params = route_params(run)
        once = RunBills(run, cache_rules)  # what every cell's bill shares, read once
        recorded = None
        # a bill that changes no call: its spread and draws, one read-only array each for all its rows
        unchanged: dict[tuple[int, int | None], tuple[BillSpread, Any, Any, Any]] = {}
        for (length, grant), (mask, block) in product(axes, masks):
            p = policies[(length, grant)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if governed:
                    res, bill = replay_with_bill(
                        run, p, mask_observations=mask, rules=cache_rules, recorded=once, mask_block=block
                    )
                    calls = min(res.turns_replayed, res.turns)
                    stop, diverges = res.stop_reason, res.diverges_at
                else:
                    bill = counterfactual_bill(
                        run, p, mask_observations=mask, rules=cache_rules, recorded=once, mask_block=block
                    )
                    calls, stop, diverges = None, None, bill.first_change
            cf = bill.counterfactual(calls)
            recorded = recorded or bill.recorded()
            # a bill that changes no call is the recording's first calls: its spread is theirs, whatever the seed
            key = (len(bill.rows), calls)
            got = unchanged.get(key) if bill.first_change is None else None
            if got is None:
                sp = spread(bill, run, once.prices, params, draws, calls, content)
                got = (sp, _draws(sp.usd), _draws(sp.cf_cached_in_draws), _draws(sp.cf_rest_draws))
                if bill.first_change is None:
                    unchanged[key] = got
            sp = got[0]
            rows.append(
                {
                    "run_id": run.run_id,
                    "model": run.model,
                    "label": run.outcome.label,
                    "cache_family": bill.family,
                    "context_length": length,
                    "grant": grant,
                    "mask": mask,
                    "mask_block": block,
                    "calls": len(bill.rows) if calls is None else calls,
                    "stop_reason": stop,
                    "diverges_at": diverges,
                    "truncated_at": bill.truncated_at,
                    **{f"cf_{k}": v for k, v in cf.items()},
                    **{f"recorded_{k}": v for k, v in recorded.items()},
                    "saved_spent": recorded["spent"] - cf["spent"],
                    "saved_prompt_tokens": recorded["prompt_tokens"] - cf["prompt_tokens"],
                    "saved_usd": None
                    if cf["usd"] is None or recorded["usd"] is None
                    else recorded["usd"] - cf["usd"],
                    "cf_usd_draws": got[1],
                    "cf_cached_in_draws": got[2],
                    "cf_rest_draws": got[3],
                    "cf_cached_in": sp.cf_cached_in,
                    "cf_rest": sp.cf_rest,
                    "rec_cached_in": sp.rec_cached_in,
                    "rec_rest": sp.rec_rest,
                    "cf_uncached": sp.cf_uncached,
                    "rec_uncached": sp.rec_uncached,
                }
            )
        if on_run is not None:
            on_run(run, once)
    return rows


def _draws(values: np.ndarray | None) -> np.ndarray | None:
    """A row's draws as one read-only float64 array: 1.7 KB for 200 draws, where a tuple of floats took 6.5 KB
    (three such columns, eight rows a leaf: 1.9 GB over 100 copies of the shared traces as tuples)."""
    if values is None:
        return None
    out = np.array(values, dtype=np.float64)
    out.flags.writeable = False
    return out


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for col in ("context_length", "grant", "mask", "mask_block", "diverges_at", "truncated_at"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")  # whole numbers with gaps, not floats
    return frame


def grid_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Totals per grid cell over the runs: spend, spend saved (tokens and USD) and the share saved, with the
    bill's 90% interval from the fitted cache model (``cf_usd_low``/``high``, ``saved_usd_share_low``/``high``),
    the cache-read price (a share of the input price) at which the saving changes sign, and the saving with no
    cache at all (``saved_uncached_share``)."""
    keys = ["context_length", "grant", "mask"] + (["mask_block"] if "mask_block" in frame else [])
    f = frame.copy()
    for k in keys:
        f[k] = [("none" if pd.isna(x) else int(x)) for x in f[k]]
    cols = ["cf_prompt_tokens", "cf_cache_write_tokens", "cf_spent", "cf_usd", "recorded_spent", "recorded_usd",
            "saved_spent", "saved_usd"]  # fmt: skip
    out = f.groupby(keys, sort=False)[cols].sum(min_count=1).reset_index()
    out["saved_usd_share"] = out["saved_usd"] / out["recorded_usd"]
    out["saved_spent_share"] = out["saved_spent"] / out["recorded_spent"]
    if "cf_usd_draws" in f:
        _intervals(f, keys, out)
    return out


def _intervals(f: pd.DataFrame, keys: list[str], out: pd.DataFrame) -> None:
    groups = {k: g for k, g in f.groupby(keys, sort=False)}
    cols: dict[str, list[Any]] = {}
    for _, row in out.iterrows():
        for name, value in _interval(groups[tuple(row[k] for k in keys)], row["recorded_usd"]).items():
            cols.setdefault(name, []).append(value)
    for name, values in cols.items():
        out[name] = values


def _interval(g: pd.DataFrame, rec: float) -> dict[str, Any]:
    """One cell's interval columns from its runs' rows ``g`` (``rec``: the cell's recorded USD)."""
    draws = g["cf_usd_draws"].tolist()
    lo = med = hi = None
    if not (any(d is None for d in draws) or pd.isna(rec)):
        lo, med, hi = (
            float(q)
            for q in np.quantile(
                np.sum(np.array(draws, dtype=float), axis=0), (QUANTILES[0], 0.5, QUANTILES[1])
            )
        )
    rec_ci, rec_rest = float(g["rec_cached_in"].sum()), float(g["rec_rest"].sum())
    cf_ci = float(g["cf_cached_in"].sum())
    slope = rec_ci - cf_ci  # d(saving)/d(read price): the side the policy saves on
    even = read_price_break_even(cf_ci, float(g["cf_rest"].sum()), rec_ci, rec_rest)
    ci_d, rest_d = g.get("cf_cached_in_draws"), g.get("cf_rest_draws")
    lo_e = med_e = hi_e = None
    if not (even is None or ci_d is None or rest_d is None or any(d is None for d in ci_d)):
        # each draw's bill is linear in the read price too: its own break-even
        lo_e, med_e, hi_e = break_even_interval(
            np.sum(np.array(ci_d.tolist(), dtype=float), axis=0),
            np.sum(np.array(rest_d.tolist(), dtype=float), axis=0),
            rec_ci,
            rec_rest,
        )
    ru = float(g["rec_uncached"].sum())

    def share(x: float | None) -> float | None:
        return None if x is None else float((rec - x) / rec)

    return {
        "cf_usd_low": lo,
        "cf_usd_median": med,
        "cf_usd_high": hi,
        "saved_usd_share_low": share(hi),
        "saved_usd_share_high": share(lo),
        "saved_usd_share_median": share(med),
        # the break-even quoted is the draws' median (beside the bill's median), with their 90% interval; the
        # point bill's (no miss) is kept apart
        "read_price_break_even_point": even,
        "read_price_break_even": med_e if med_e is not None else even,
        "read_price_break_even_low": lo_e,
        "read_price_break_even_high": hi_e,
        "read_price_saving_rises": None if abs(slope) < 1e-12 else bool(slope > 0),
        "saved_uncached_share": (ru - float(g["cf_uncached"].sum())) / ru if ru else None,
    }


def break_even(totals: pd.DataFrame) -> dict[str, float | None]:
    """Where the saving changes sign along the swept masks (sliding, no window) and context lengths (no
    mask): the interpolated mask size and window, ``None`` when the sign holds over the sweep (the median of
    the draws where the totals carry them, else the model's point bill). ``uncached_*``: the same with no cache
    (every prompt token at the input price)."""
    t = totals
    plain = t[(t["context_length"] == "none")]
    if "mask_block" in t:
        plain = plain[plain["mask_block"] == "none"]
    masks = plain[plain["mask"] != "none"].sort_values("mask")
    wins = t[(t["mask"] == "none") & (t["context_length"] != "none")]
    if "mask_block" in t:
        wins = wins[wins["mask_block"] == "none"]
    wins = wins.sort_values("context_length")
    out: dict[str, float | None] = {}
    for name, g, col in (("mask", masks, "mask"), ("context_length", wins, "context_length")):
        xs = [float(x) for x in g[col]]
        col_y = "saved_usd_share_median" if "saved_usd_share_median" in g else "saved_usd"
        out[name] = crossing(xs, [float(v) for v in g[col_y].fillna(0)]) if len(xs) > 1 else None
        if "saved_uncached_share" in g:
            out[f"uncached_{name}"] = (
                crossing(xs, [float(v) for v in g["saved_uncached_share"].fillna(0)]) if len(xs) > 1 else None
            )
    return out
