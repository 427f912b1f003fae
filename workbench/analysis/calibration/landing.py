"""Landing turns and the landing token share: Kaplan-Meier of what positive runs crossing the grant needed to
finish (docs/calibrate.md, "Landing turns and landing token share")."""

from __future__ import annotations

import math

import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow, within
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import elsewhere, keep, not_enough
from workbench.analysis.survival import survival
from workbench.govern.policy import Policy

TURNS = ConstantRef("workbench.govern.landing", "LANDING_TURNS")
SHARE = ConstantRef("workbench.govern.landing", "LANDING_TOKEN_SHARE")
LANDING_COVER = 0.5  # workbench choice: the landing lets half the positive runs the grant catches finish
GRID = tuple(range(60_000, 400_001, 20_000))  # workbench choice: grants drawn in the chart
LONGER_THAN = 2
"""Workbench choice: a landing more than this many times the value in use is a second grant, not a landing."""
GRANT_ROW = "leaf grant"


def crossings(evidence: Evidence, grants: tuple[int, ...]) -> pd.DataFrame:
    """Per grant and crossing leaf (positive or censored): the crossing call, calls and share after it."""
    rows = []
    for grant in grants:
        for leaf in evidence.leaves:
            if not (leaf.positive or leaf.censored):
                continue
            c = leaf.crossing(grant)
            if c is None:
                continue
            rows.append(
                {
                    "grant": grant,
                    "run_id": leaf.run_id,
                    "group": leaf.group,
                    "crossing_call": c,
                    "calls_after": leaf.calls - 1 - c,
                    "tokens_after": leaf.spent[-1] - leaf.spent[c],
                    "share_after": (leaf.spent[-1] - leaf.spent[c]) / grant,
                    "finished": leaf.positive,
                }
            )
    cols = [
        "grant",
        "run_id",
        "group",
        "crossing_call",
        "calls_after",
        "tokens_after",
        "share_after",
        "finished",
    ]
    return pd.DataFrame(rows, columns=cols)


def _row(evidence: Evidence, policy: Policy, which: str) -> ConstantRow:
    grant = policy.grant
    grid = tuple(sorted({*GRID, grant}))
    table = crossings(evidence, grid)
    table["at_policy_grant"] = table["grant"] == grant
    at = table[table["at_policy_grant"].astype(bool)]
    pos = at[at["finished"].astype(bool)]
    if which == "turns":
        ref, in_use, column, unit = TURNS, policy.landing_turns, "calls_after", "calls"
        inside = pos[pos["calls_after"] <= in_use]
        name = "landing turns"
    else:
        ref, in_use, column, unit = SHARE, policy.landing_token_share, "share_after", "share of the grant"
        inside = pos[pos["share_after"] <= (in_use if in_use is not None else 0.0)]
        name = "landing token share"
    outside = pos.drop(inside.index)
    crossed = (
        f"at grant {grant:,}: {len(at)} runs cross ({len(pos)} positive, {len(at) - len(pos)} censored); "
    )
    if in_use is None:
        effect = (
            crossed
            + "the rules give the landing no token half; positive runs needed a median "
            + (f"{pos[column].median():.3g} {unit} after the crossing" if len(pos) else "—")
        )
    else:
        effect = crossed + (
            f"{len(inside)} positive runs finish within {in_use:g} {unit} after the crossing, {len(outside)} "
            "needed more" + (f" (median {outside[column].median():.3g})" if len(outside) else "")
        )
    leaf_calls = {leaf.run_id: leaf.calls for leaf in evidence.leaves}  # once, not per run
    common = dict(
        name=name,
        ref=ref,
        seed=ref.value,
        in_use=in_use,
        unit=unit,
        effect=effect,
        touched=tuple(outside["run_id"]),
        rule=(
            f"Kaplan-Meier over {column.replace('_', ' ')} the crossing (censored: runs not seen to finish) at the "
            f"policy's grant: the smallest value letting {LANDING_COVER:.0%} of crossing positive runs finish; "
            "band: its 95% confidence interval"
        ),
        runs=len(at),
        calls=int(sum(leaf_calls[r] for r in at["run_id"])),
        chart="landing",
        evidence=table,
    )
    notes = [f"positive runs: {evidence.positive_words()}"]
    if not policy.cost_lands:
        notes.append(f"rules {policy.rules!r} land no run on its bill: evaluated as if they did")
    if evidence.uses_finished:
        notes.append("unlabelled runs read 'finished' in place of 'resolved'")
    if len(pos) < MIN_RUNS:
        why = f"{len(pos)} positive runs cross the grant of {grant:,}; {MIN_RUNS} needed"
        return not_enough(why, notes=tuple(notes), **common)
    fit = survival(at.rename(columns={column: "tokens"})[["run_id", "tokens", "finished"]])
    cov = fit.coverage(LANDING_COVER)
    if math.isinf(cov.grant) or math.isnan(cov.grant):
        why = f"the survival curve never reaches {LANDING_COVER:.0%}"
        return not_enough(why, notes=tuple(notes), **common)
    hi = None if math.isinf(cov.upper) else cov.upper
    if which == "turns":
        pick: float | int = max(1, math.ceil(cov.grant))  # a landing is at least one turn
        band = (max(1, math.floor(cov.lower)), None if hi is None else math.ceil(hi))
    else:
        pick = round(cov.grant, 3)
        band = (round(cov.lower, 3), None if hi is None else round(hi, 3))
    if fit.censored:
        notes.append(f"{fit.censored} of {fit.runs} crossing runs censored (not seen to finish)")
    row = ConstantRow(status=RECOMMENDED, recommended=pick, band=band, notes=tuple(notes), **common)
    if in_use is not None and pick > LONGER_THAN * in_use:
        return elsewhere(
            row,
            GRANT_ROW,
            f"half the positive runs the grant of {grant:,} catches still had {pick:g} {unit} to go, more than "
            f"{LONGER_THAN} times the {in_use:g} in use: a landing that long is a second grant (the seed sizes a "
            "landing to make the work consistent, check it and answer); those runs argue for a larger grant, not "
            "a longer landing",
        )
    if in_use is not None and within(in_use, band):
        return keep(row, f"{in_use:g} is inside the band: the runs do not tell it from {pick:g}")
    return row


def landing_rows(evidence: Evidence, policy: Policy) -> list[ConstantRow]:
    return [_row(evidence, policy, "turns"), _row(evidence, policy, "share")]
