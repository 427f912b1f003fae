"""The empty-reply share (``EMPTY_REPLY_DIVISOR``): every empty reply against the abandonment rule
(docs/calibrate.md, "Empty-reply share")."""

from __future__ import annotations

import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, NEGATIVE, POSITIVE, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import not_enough, settle
from workbench.govern.policy import Policy
from workbench.govern.replies import abandon_empty

DIVISOR = ConstantRef("workbench.govern.replies", "EMPTY_REPLY_DIVISOR")
CANDIDATES = (1, 2, 3, 4, 6, 8)  # workbench choice: shares 1, 1/2 ... 1/8 of what is left


def empty_replies(evidence: Evidence, grant: int) -> pd.DataFrame:
    rows = []
    for leaf in evidence.leaves:
        for i, t in enumerate(leaf.run.turns):
            if t.text or t.tool_calls:
                continue
            before = leaf.spent[i - 1] if i else 0
            rows.append(
                {
                    "run_id": leaf.run_id,
                    "group": leaf.group,
                    "call": i,
                    "last_call": i == leaf.calls - 1,
                    "completion": t.usage.completion,
                    "remaining": grant - before,
                    "share_of_remaining": (t.usage.completion or 0) / (grant - before)
                    if grant > before
                    else None,
                }
            )
    cols = ["run_id", "group", "call", "last_call", "completion", "remaining", "share_of_remaining"]
    return pd.DataFrame(rows, columns=cols)


def empty_reply_row(evidence: Evidence, policy: Policy) -> ConstantRow:
    replies = empty_replies(evidence, policy.grant)
    rows = []
    for d in sorted({*CANDIDATES, DIVISOR.value}):
        hit = (
            replies[
                [
                    abandon_empty("", int(r), None if pd.isna(c) else int(c), d)
                    for r, c in zip(replies["remaining"], replies["completion"], strict=True)
                ]
            ]
            if len(replies)
            else replies
        )
        first = hit.drop_duplicates("run_id")
        rows.append(
            {
                "value": d,
                "share": 1 / d,
                "empty_replies": len(replies),
                "abandoned": len(hit),
                "false_positives": int((first["group"].isin(POSITIVE) & ~first["last_call"]).sum()),
                "negatives_abandoned": int(first["group"].isin(NEGATIVE).sum()),
            }
        )
    table = pd.DataFrame(rows)
    at = table[table["value"] == DIVISOR.value].to_dict("records")[0]
    effect = (
        f"{len(replies)} empty replies in {evidence.calls:,} calls; at 1/{DIVISOR.value} of what was left "
        f"(grant {policy.grant:,}) {at['abandoned']} would be abandoned, {at['false_positives']} of them in "
        "positive runs before their end"
    )
    runs_with = replies["run_id"].nunique() if len(replies) else 0
    common = dict(
        name="empty-reply share",
        ref=DIVISOR,
        seed=DIVISOR.value,
        in_use=DIVISOR.value if policy.empty_abandon else None,
        unit="divisor of what is left",
        effect=effect,
        touched=tuple(replies["run_id"].unique()) if len(replies) else (),
        rule=(
            "the smallest share (largest divisor) that abandons no positive run before its end and still abandons "
            "an empty reply in a negative run"
        ),
        runs=runs_with,
        calls=len(replies),
        chart="empty",
        evidence=table,
    )
    if runs_with < MIN_RUNS:
        why = f"{len(replies)} empty replies in {runs_with} runs; {MIN_RUNS} runs with one needed"
        return not_enough(why, **common)
    ok = table[(table["false_positives"] == 0) & (table["negatives_abandoned"] > 0)]
    if ok.empty:
        why = "no candidate abandons a negative run without abandoning a positive one"
        return not_enough(why, **common)
    return settle(
        ConstantRow(
            status=RECOMMENDED,
            recommended=int(ok["value"].max()),
            band=(int(ok["value"].min()), int(ok["value"].max())),
            **common,
        )
    )
