"""Bills over a grid: context length x grant x observation masking, per run, with spend and spend saved in tokens
and dollars against the recording (docs/counterfactual-bills.md).

Each cell replays the run with the governors on the counterfactual meter (so a grant stops a pruned run later),
then bills the calls the replay made. ``saved_*`` = recorded - counterfactual (negative: the policy cost more).

Call signature::

    frame = bill_grid(runs, context_lengths=[None, 32_768], grants=[None], masks=[None, 10])
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from itertools import product
from typing import Any

import pandas as pd

from workbench.context.cache_routes import route_rules
from workbench.govern.policy import Policy
from workbench.replay.bill import RunPricer, counterfactual_bill, recorded_pass, replay_with_bill
from workbench.replay.distinct import Fingerprints, distinct
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
    dedup: bool = True,
    prints: Fingerprints | None = None,
    **policy: Any,
) -> pd.DataFrame:
    """One row per run x context length x grant x mask. ``governed=False`` bills every recorded call (no
    governor replay: faster, and the grant axis is ignored). Runs with the same content
    (``workbench.replay.distinct``) are billed once and their rows copied, each with its own ``run_id``
    (``dedup=False``: every run billed)."""
    runs = list(runs)
    copies = distinct(runs, prints) if dedup and len(runs) > 1 else None
    if copies is None or not copies.merged:
        return _frame(_rows(runs, context_lengths, grants, masks, rules, governed, policy))
    per_unique = _rows(copies.uniques, context_lengths, grants, masks, rules, governed, policy)
    cells = len(per_unique) // len(copies.uniques)
    ids = [run.run_id for run in runs for _ in range(cells)]
    rows = [{**per_unique[k], "run_id": rid} for k, rid in zip(copies.rows(cells).tolist(), ids, strict=True)]
    return _frame(rows)


def _rows(
    runs: Sequence[Run],
    context_lengths: Sequence[int | None],
    grants: Sequence[int | None],
    masks: Sequence[int | None],
    rules: str,
    governed: bool,
    policy: dict[str, Any],
) -> list[dict[str, Any]]:
    """``bill_grid``'s rows, every run billed: ``len(context_lengths x grants x masks)`` per run, in order."""
    rows: list[dict[str, Any]] = []
    for run in runs:
        cache_rules = route_rules(run)
        prices = RunPricer(run, cache_rules)
        once = recorded_pass(run, cache_rules)  # the recording's side of every cell's bill, read once
        recorded = None
        for length, grant, mask in product(context_lengths, grants if governed else (None,), masks):
            p = Policy.named(rules, grant=grant or NO_GRANT, context_length=length, **policy)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if governed:
                    res, bill = replay_with_bill(
                        run, p, mask_observations=mask, rules=cache_rules, recorded=once
                    )
                    calls = min(res.turns_replayed, res.turns)
                    stop, diverges = res.stop_reason, res.diverges_at
                else:
                    bill = counterfactual_bill(
                        run, p, mask_observations=mask, prices=prices, rules=cache_rules, recorded=once
                    )
                    calls, stop, diverges = None, None, bill.first_change
            cf = bill.counterfactual(calls)
            recorded = recorded or bill.recorded()
            rows.append(
                {
                    "run_id": run.run_id,
                    "model": run.model,
                    "label": run.outcome.label,
                    "cache_family": bill.family,
                    "context_length": length,
                    "grant": grant,
                    "mask": mask,
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
                }
            )
    return rows


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows)
    for col in ("context_length", "grant", "mask", "diverges_at", "truncated_at"):
        if col in frame:
            frame[col] = frame[col].astype("Int64")  # whole numbers with gaps, not floats
    return frame


def grid_totals(frame: pd.DataFrame) -> pd.DataFrame:
    """Totals per grid cell over the runs: spend, spend saved (tokens and USD) and the share saved."""
    keys = ["context_length", "grant", "mask"]
    f = frame.copy()
    for k in keys:
        f[k] = [("none" if pd.isna(x) else int(x)) for x in f[k]]
    cols = ["cf_prompt_tokens", "cf_cache_write_tokens", "cf_spent", "cf_usd", "recorded_spent", "recorded_usd",
            "saved_spent", "saved_usd"]  # fmt: skip
    out = f.groupby(keys, sort=False)[cols].sum(min_count=1).reset_index()
    out["saved_usd_share"] = out["saved_usd"] / out["recorded_usd"]
    out["saved_spent_share"] = out["saved_spent"] / out["recorded_spent"]
    return out
