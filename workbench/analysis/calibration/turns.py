"""The turn backstop and the turn cap against the calls positive runs needed to finish (docs/calibrate.md,
"Turn backstop", "Turn cap")."""

from __future__ import annotations

import math

import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow, within
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import keep, not_enough, settle
from workbench.analysis.survival import survival
from workbench.govern.policy import Policy

BACKSTOP = ConstantRef("workbench.govern.turncap", "MAX_TURN_BACKSTOP")
TURN_CAP_COVER = 0.95  # workbench choice: a run's own cap should let 19 in 20 positive runs finish


def calls_frame(evidence: Evidence) -> pd.DataFrame:
    """One row per positive or censored leaf: its calls, whether it finished, its recorded cap."""
    rows = [
        {
            "run_id": leaf.run_id,
            "source": leaf.run.source,
            "group": leaf.group,
            "calls": leaf.calls,
            "finished": leaf.positive,
            "recorded_cap": leaf.run.policy.max_turns if leaf.run.policy is not None else None,
        }
        for leaf in evidence.leaves
        if leaf.positive or leaf.censored
    ]
    return pd.DataFrame(rows, columns=["run_id", "source", "group", "calls", "finished", "recorded_cap"])


def backstop_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    frame = calls_frame(evidence)
    pos = frame[frame["finished"].astype(bool)]
    in_use = policy.turn_backstop
    stopped = pos[pos["calls"] > in_use] if in_use is not None else pos.iloc[0:0]
    longest = int(pos["calls"].max()) if len(pos) else None
    at = f"at {in_use}: stops {len(stopped)}" if in_use is not None else "no backstop in these rules: stops 0"
    effect = (
        f"{at} of {len(pos)} positive runs ({evidence.positive_words()}); the longest "
        f"ran {longest if longest is not None else '—'} calls"
    )
    common = dict(
        name="turn backstop",
        ref=BACKSTOP,
        seed=BACKSTOP.value,
        in_use=in_use,
        unit="calls",
        effect=effect,
        touched=tuple(stopped["run_id"]),
        rule=(
            "the smallest backstop stopping no positive run is the longest positive run; the value in use is kept "
            "when at or above it (a runaway bound cannot be placed higher by runs that all stopped on their own)"
        ),
        runs=len(pos),
        calls=int(pos["calls"].sum()),
        chart="turns",
        evidence=frame,
    )
    if len(pos) < MIN_RUNS or longest is None:
        return not_enough(f"{len(pos)} positive runs; {MIN_RUNS} needed", **common)
    pick = max(in_use or longest, longest)
    notes = []
    if in_use is None:
        notes.append("the policy runs no backstop; the longest positive run is the smallest safe one")
    row = ConstantRow(
        status=RECOMMENDED, recommended=pick, band=(longest, None), notes=tuple(notes), **common
    )
    if in_use is not None and in_use >= longest:
        return keep(row, f"{in_use} stops no positive run (the longest ran {longest} calls)")
    return row


def turn_cap_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    frame = calls_frame(evidence)
    pos = frame[frame["finished"].astype(bool)]
    in_use = policy.effective_max_turns
    caps = frame.dropna(subset=["recorded_cap"])
    recorded = ", ".join(
        f"{s} {int(c)}" for (s, c), _ in caps.groupby(["source", "recorded_cap"]) if not math.isnan(c)
    )
    at_cap = pos[pos["calls"] >= in_use]
    near = caps[caps["finished"] & (caps["calls"] >= 0.9 * caps["recorded_cap"])]
    effect = (
        f"at {in_use}: stops {len(at_cap)} of {len(pos)} positive runs; "
        f"{len(near)} positive runs came within 10% of their own recorded cap"
        + (f" (recorded caps: {recorded})" if recorded else "")
    )
    common = dict(
        name="turn cap",
        ref=None,
        home_text="Policy.max_turns (clamped by workbench.govern.turncap.clamp_max_turns)",
        provenance_text="a run's own limit, set by its caller; the seed's default is the backstop",
        seed=BACKSTOP.value,
        in_use=in_use,
        unit="calls",
        effect=effect,
        touched=tuple(at_cap["run_id"]),
        rule=(
            f"Kaplan-Meier over calls-to-finish (censored: runs not seen to finish): the smallest cap covering "
            f"{TURN_CAP_COVER:.0%} of positive runs; band: its 95% confidence interval"
        ),
        runs=len(frame),
        calls=int(frame["calls"].sum()),
        chart="survival",
    )
    if len(pos) < MIN_RUNS:
        return not_enough(f"{len(pos)} positive runs; {MIN_RUNS} needed", evidence=frame, **common)
    fit = survival(frame.rename(columns={"calls": "tokens"})[["run_id", "tokens", "finished"]])
    cov = fit.coverage(TURN_CAP_COVER)
    curve = fit.curve.rename(columns={"tokens": "calls"})
    if math.isinf(cov.grant) or math.isnan(cov.grant):
        return not_enough(
            f"the survival curve never reaches {TURN_CAP_COVER:.0%} coverage", evidence=curve, **common
        )
    hi = None if math.isinf(cov.upper) else math.ceil(cov.upper)
    notes = [f"{fit.censored} of {fit.runs} runs censored (not seen to finish)"]
    if hi is None:
        notes.append("the upper confidence bound is never reached: the band is open above")
    row = ConstantRow(
        status=RECOMMENDED,
        recommended=math.ceil(cov.grant),
        band=(math.floor(cov.lower), hi),
        notes=tuple(notes),
        evidence=curve,
        **common,
    )
    if within(in_use, row.band):
        return keep(row, f"{in_use} is inside the band: the runs do not tell it from {row.recommended}")
    return settle(row)
