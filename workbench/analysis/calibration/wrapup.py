"""The wrap-up threshold: how often the warning fires, and how many calls before the landing it comes
(docs/calibrate.md, "Wrap-up threshold")."""

from __future__ import annotations

import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, NEGATIVE, POSITIVE, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.replays import replay_grids
from workbench.analysis.calibration.status import not_enough, settle
from workbench.govern.policy import Policy

WRAPUP = ConstantRef("workbench.govern.wrapup", "WRAP_UP_AT")
CANDIDATES = tuple(round(0.4 + 0.05 * i, 2) for i in range(12))  # workbench choice: 0.40 to 0.95
WIDEN = (0.97, 0.99)
"""Workbench choice: tried in turn while the pick sits at the grid's top; 1.0 would warn at the landing itself."""


def wrapup_table(frame: pd.DataFrame) -> pd.DataFrame:
    f = frame.assign(_warned=frame["wrapup_at"].notna(), _landed=frame["landing_started_at"].notna())
    f["_lead_landing"] = (f["landing_started_at"] - f["wrapup_at"]).where(f["_warned"] & f["_landed"])
    f["_lead_end"] = (f["turns"] - 1 - f["wrapup_at"]).where(f["_warned"] & ~f["_landed"])
    rows = []
    for value, g in f.groupby("value", sort=True):
        lead = g["_lead_landing"].dropna()
        rows.append(
            {
                "value": value,
                "runs": len(g),
                "warned": int(g["_warned"].sum()),
                "positives_warned": int((g["_warned"] & g["group"].isin(POSITIVE)).sum()),
                "negatives_warned": int((g["_warned"] & g["group"].isin(NEGATIVE)).sum()),
                "landed": int(g["_landed"].sum()),
                "landed_and_warned": len(lead),
                "lead_p25": float(lead.quantile(0.25)) if len(lead) else None,
                "lead_median": float(lead.median()) if len(lead) else None,
                "finished_unlanded_after_warning": int(g["_lead_end"].notna().sum()),
                "calls_to_end_median": float(g["_lead_end"].median())
                if g["_lead_end"].notna().any()
                else None,
            }
        )
    return pd.DataFrame(rows)


def _table(evidence: Evidence, base: Policy, values: list[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the replays, the table per value) at ``values``; with the cost-only columns where the policy's warning
    reads more than the bill."""
    # The raw and reuse readings can move the warning far ahead of the bill: the same rule on the cost reading
    # alone shows how much of the lead they account for (both grids from one sweep).
    both = tuple(base.wrapup_readings) != ("cost",)
    grids = [(base, "wrapup_at", values)] + (
        [(base.replace(wrapup_readings=("cost",)), "wrapup_at", values)] if both else []
    )
    frame, *cost_only = replay_grids(evidence, grids)
    table = wrapup_table(frame)
    if cost_only:
        alone = wrapup_table(cost_only[0])
        table = table.merge(
            alone[["value", "warned", "lead_p25", "lead_median"]].rename(
                columns={c: f"cost_only_{c}" for c in ("warned", "lead_p25", "lead_median")}
            ),
            on="value",
        )
    return frame, table


def _pick(table: pd.DataFrame, need: int, column: str = "lead_median") -> float | None:
    ok = table[pd.to_numeric(table[column]).fillna(-1) >= need]["value"]  # a column of None is object
    return float(ok.max()) if len(ok) else None


def wrapup_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    in_use = policy.wrapup_at
    values = sorted({*CANDIDATES, *([in_use] if in_use is not None else [])})
    base = policy.replace(wrapup_at=values[0])
    need = policy.landing_turns
    frame, table = _table(evidence, base, values)
    added: list[float] = []
    for v in [v for v in WIDEN if v not in values]:
        if _pick(table, need) != values[-1]:
            break
        f2, t2 = _table(evidence, base, [v])
        frame = pd.concat([frame, f2], ignore_index=True)
        # a column t2 has no value in keeps table's dtype (pandas will stop ignoring all-NA columns there)
        t2 = t2.astype({c: table[c].dtype for c in t2.columns if c in table and t2[c].isna().all()})
        table = pd.concat([table, t2], ignore_index=True).sort_values("value", ignore_index=True)
        values, added = sorted({*values, v}), [*added, v]
    cost_pick = _pick(table, need, "cost_only_lead_median") if "cost_only_lead_median" in table else None
    ref_value = in_use if in_use is not None else WRAPUP.value
    at = table[table["value"] == ref_value].to_dict("records")[0]
    warned = frame[(frame["value"] == ref_value) & frame["wrapup_at"].notna()]
    lead = "—" if pd.isna(at["lead_median"]) else f"{at['lead_median']:.3g}"
    effect = (
        f"at {ref_value} (grant {policy.grant:,}): warns {at['warned']} of {at['runs']} runs "
        f"({at['positives_warned']} positive, {at['negatives_warned']} negative); {at['landed']} land, "
        f"{at['landed_and_warned']} after a warning, median lead {lead} calls before the landing; "
        f"{at['finished_unlanded_after_warning']} finish unlanded after it"
    )
    leaf_calls = {leaf.run_id: leaf.calls for leaf in evidence.leaves}  # once, not per run
    landed_ids = frame[(frame["value"] == ref_value) & frame["landing_started_at"].notna()]["run_id"]
    common = dict(
        name="wrap-up threshold",
        ref=WRAPUP,
        seed=WRAPUP.value,
        in_use=in_use,
        unit="share of the budget used",
        effect=effect,
        touched=tuple(warned["run_id"]),
        rule=(
            f"the largest threshold whose median lead before the landing is at least the policy's {need} landing "
            f"turns; band from the largest whose 25th-percentile lead is"
        ),
        runs=int(at["landed_and_warned"]),
        calls=int(sum(leaf_calls[r] for r in landed_ids)),
        chart="wrapup",
        evidence=table,
    )
    notes = ["replayed through the governor under the policy; leads are counted on the recorded calls"]
    if in_use is None:
        notes.append(f"rules {policy.rules!r} give no wrap-up warning: evaluated as if they did")
    landed = int(table["landed_and_warned"].max()) if len(table) else 0
    if landed < MIN_RUNS:
        why = f"{landed} runs land after a warning at grant {policy.grant:,}; {MIN_RUNS} needed"
        return not_enough(why, notes=tuple(notes), **common)
    pick = _pick(table, need)
    if pick is None:
        why = f"no candidate from {values[0]} to {values[-1]} warns {need} calls before the median landing"
        return not_enough(why, notes=tuple(notes), **common)
    low = _pick(table, need, "lead_p25")
    if added:
        notes.append(
            f"the candidate grid ({CANDIDATES[0]:g} to {CANDIDATES[-1]:g}) was widened at its top to "
            f"{', '.join(f'{v:g}' for v in added)}: the pick sat there"
        )
    if "cost_only_lead_median" in table:
        readings = ", ".join(policy.wrapup_readings)
        notes.append(
            f"the warning reads {readings}; on the cost reading alone the same rule picks "
            + (f"{cost_pick:g}" if cost_pick is not None else "no candidate")
            + " (the other readings move the warning ahead of the bill on heavily cached runs)"
        )
    at_edge = pick == values[-1]
    if at_edge:
        # The grid cannot widen past its top in a way that means anything: at 1.0 the warning fires with the landing
        # itself (no lead left), so the band's upper edge is where the grid ends, not where the evidence does.
        notes.append(
            f"{pick:g} is the top of the candidate grid ({values[0]:g} to {values[-1]:g}) and it cannot widen "
            "further: a threshold of 1.0 warns at the landing itself; at grid edge, the value is extrapolated (the "
            "evidence does not bound it from above)"
        )
    if low is not None and low == values[0]:
        notes.append(
            f"the band's lower edge {low:g} is the bottom of the candidate grid: a lower value may hold too"
        )
    row = ConstantRow(
        status=RECOMMENDED,
        recommended=pick,
        band=(low, pick),
        extrapolated=at_edge or (low is not None and low == values[0]),
        at_grid_edge=at_edge,
        notes=tuple(notes),
        **common,
    )
    return settle(row)
