"""The calibration seed factor: how often ADR-107's estimate, times the seed, under-counts a run's first send
(docs/calibrate.md, "Calibration seed")."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import keep, not_enough, settle
from workbench.govern.policy import Policy

SEED = ConstantRef("workbench.estimate.constants", "CALIBRATION_SEED")
UNDERCOUNT_SHARE = 0.01  # the bound: at most 1% of first sends under-counted
SEED_DIGITS = 2
"""The seed is set to two decimals (1.10): a recommendation that rounds to the value in use is no change."""


def first_sends(evidence: Evidence) -> pd.DataFrame:
    """One row per run with a comparable first call: source, model, estimate, reported prompt, their ratio."""
    from workbench.estimate.study import study  # pandas + scipy: only when a calibration runs

    runs = [leaf.run for leaf in evidence.leaves]
    turns = study(runs, strategies=("adr",), tables=False).turns  # the calls alone
    cols = ["run_id", "source", "model", "estimate", "prompt", "ratio"]
    if turns.empty:
        return pd.DataFrame(columns=cols)
    first = turns[~turns["after_first"]].drop_duplicates("run_id")
    first = first[first["estimate"] > 0]
    return first.assign(ratio=first["prompt"] / first["estimate"])[cols].reset_index(drop=True)


def needed_seed(ratios: np.ndarray, share: float = UNDERCOUNT_SHARE) -> float:
    """The smallest seed s with at most ⌊share·n⌋ ratios above s."""
    r = np.sort(np.asarray(ratios, dtype=float))[::-1]
    k = math.floor(share * len(r))
    return float(r[min(k, len(r) - 1)])


def seed_table(sends: pd.DataFrame, seed: float) -> pd.DataFrame:
    rows = []
    for (source, model), g in sends.groupby(["source", "model"], sort=True):
        ratios = g["ratio"].to_numpy()
        rows.append(
            {
                "source": source,
                "model": model,
                "first_sends": len(g),
                "under_at_seed": int((ratios > seed).sum()),
                "under_share_at_seed": float((ratios > seed).mean()),
                "ratio_median": float(np.median(ratios)),
                "ratio_max": float(ratios.max()),
                "needed_seed": needed_seed(ratios),
                "resolves_1pct": len(g) >= 100,
            }
        )
    return pd.DataFrame(rows)


def seed_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    in_use = policy.calibration if policy.calibration is not None else SEED.value
    sends = first_sends(evidence)
    table = seed_table(sends, in_use) if len(sends) else pd.DataFrame()
    under = int(table["under_at_seed"].sum()) if len(table) else 0
    effect = f"at {in_use}: {under} of {len(sends)} first sends under-counted" + (
        " ("
        + "; ".join(f"{r.source} {r.model}: {r.under_at_seed} of {r.first_sends}" for r in table.itertuples())
        + ")"
        if len(table)
        else ""
    )
    ratio = sends.set_index("run_id")["ratio"] if len(sends) else pd.Series(dtype=float)
    common = dict(
        name="calibration seed factor",
        ref=SEED,
        seed=SEED.value,
        in_use=in_use,
        unit="× the estimate",
        effect=effect,
        touched=tuple(ratio[ratio > in_use].index),
        rule=(
            f"per source and model, the smallest seed keeping first-send under-counts at or below "
            f"{UNDERCOUNT_SHARE:.0%}; the largest of those over groups with at least {MIN_RUNS} first sends"
        ),
        chart="seed",
        evidence=sends.merge(table[["source", "model", "needed_seed"]], on=["source", "model"])
        if len(table)
        else sends,
    )
    usable = table[table["first_sends"] >= MIN_RUNS] if len(table) else table
    notes = [
        "estimates are ADR-107's (strategy adr) with the unseen prefix fitted leave-one-run-out per source and "
        "role (workbench.estimate.study)"
    ]
    small = table[table["first_sends"] < MIN_RUNS] if len(table) else table
    for r in small.itertuples():
        notes.append(
            f"{r.source} {r.model}: {r.first_sends} first sends, fewer than {MIN_RUNS}: listed, not used"
        )
    if usable.empty:
        why = f"no source and model has {MIN_RUNS} first sends with a recorded request and reported usage"
        return not_enough(why, runs=len(sends), calls=len(sends), notes=tuple(notes), **common)
    pick = float(usable["needed_seed"].max())
    for r in usable.itertuples():
        if not r.resolves_1pct:
            notes.append(
                f"{r.source} {r.model}: {r.first_sends} first sends, fewer than 100: 1% is under one send, so its "
                "seed covers every observed first send"
            )
    if pick <= 1.0:
        notes.append(
            "ADR-107 seeds the factor above 1.0: a value at or below 1.0 is the data's, not a setting"
        )
    n = int(usable["first_sends"].sum())
    row = settle(
        ConstantRow(
            status=RECOMMENDED,
            recommended=round(pick, 4),
            band=(round(float(usable["needed_seed"].min()), 4), round(pick, 4)) if len(usable) > 1 else None,
            runs=n,
            calls=n,
            notes=tuple(notes),
            **common,
        )
    )
    if row.status == RECOMMENDED and round(pick, SEED_DIGITS) == round(in_use, SEED_DIGITS):
        return keep(row, f"the rule gives {pick:.4g}, which is {in_use:g} at the constant's precision")
    return row
