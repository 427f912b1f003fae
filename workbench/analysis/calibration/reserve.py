"""Reserve and safety: the largest completion observed, and the growth of the prompt between sends, per source.

ADR-107 keeps room for the reply (the reserve) and a safety margin for what grows before the next send. Their
workbench defaults are shares of the context length (``RESERVE_FLOOR_SHARE``, ``SAFETY_SHARE``); ``Policy.reserve``
and ``Policy.safety`` set them in tokens. Per source: completions per call and growth between consecutive sends
(the next call's prompt minus this call's). Rule, robust to one runaway reply: the recommendation in tokens is the
largest 99th percentile over sources with at least ``MIN_RUNS`` runs, the band from the largest 95th percentile to
it; the calls above it are listed as outliers (run, call, value), never the recommendation's driver. Where a source
records its context length, the share is given too.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import NOT_ENOUGH, RECOMMENDED, ConstantRow
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.govern.policy import Policy

RESERVE = ConstantRef("workbench.estimate.constants", "RESERVE_FLOOR_SHARE")
SAFETY = ConstantRef("workbench.estimate.constants", "SAFETY_SHARE")


def per_source(evidence: Evidence) -> pd.DataFrame:
    acc: dict[str, dict] = {}
    for leaf in evidence.leaves:
        a = acc.setdefault(
            leaf.run.source,
            {"runs": 0, "calls": 0, "completion": [], "growth": [], "context": set(), "where": ([], [])},
        )
        a["runs"] += 1
        a["calls"] += leaf.calls
        prompts = [t.usage.prompt for t in leaf.run.turns]
        done = [
            (i, t.usage.completion) for i, t in enumerate(leaf.run.turns) if t.usage.completion is not None
        ]
        grow = [
            (i + 1, b - p)
            for i, (p, b) in enumerate(itertools.pairwise(prompts))
            if p is not None and b is not None
        ]
        a["completion"] += [v for _, v in done]
        a["growth"] += [v for _, v in grow]
        a["where"][0].extend((leaf.run_id, i, v) for i, v in done)
        a["where"][1].extend((leaf.run_id, i, v) for i, v in grow)
        if leaf.run.context_length:
            a["context"].add(leaf.run.context_length)
    rows = []
    for source, a in sorted(acc.items()):
        c, g = np.asarray(a["completion"], float), np.asarray(a["growth"], float)
        ctx = min(a["context"]) if a["context"] else None
        rows.append(
            {
                "source": source,
                "runs": a["runs"],
                "calls": a["calls"],
                "completion_max": float(c.max()) if len(c) else None,
                "completion_p95": float(np.quantile(c, 0.95)) if len(c) else None,
                "completion_p99": float(np.quantile(c, 0.99)) if len(c) else None,
                "growth_max": float(g.max()) if len(g) else None,
                "growth_p95": float(np.quantile(g, 0.95)) if len(g) else None,
                "growth_p99": float(np.quantile(g, 0.99)) if len(g) else None,
                "context_length": ctx,
                "completion_at": a["where"][0],
                "growth_at": a["where"][1],
            }
        )
    return pd.DataFrame(rows)


def _row(evidence: Evidence, policy: Policy, which: str) -> ConstantRow:
    table = per_source(evidence)
    ref = RESERVE if which == "reserve" else SAFETY
    col = "completion" if which == "reserve" else "growth"
    in_use = policy.reserve if which == "reserve" else policy.safety
    usable = table[(table["runs"] >= MIN_RUNS) & table[f"{col}_max"].notna()]
    words = []
    for r in table.itertuples():
        mx = getattr(r, f"{col}_max")
        if mx is None or np.isnan(mx):
            continue
        ctx = r.context_length
        share = f", {mx / ctx:.1%} of its {int(ctx):,} context" if pd.notna(ctx) and ctx else ""
        words.append(f"{r.source} {mx:,.0f}{share}")
    what = "largest completion" if which == "reserve" else "largest growth between sends"
    seed_words = f"{ref.value:.0%} of the context length"
    over = []
    for r in table.itertuples():
        if pd.notna(r.context_length) and getattr(r, f"{col}_max") > ref.value * r.context_length:
            over.append(r.source)
    effect = (
        f"{what}: "
        + ("; ".join(words) or "none recorded")
        + (f". Exceeds the seed's {seed_words} in: {', '.join(over)}" if over else "")
    )
    common = dict(
        name=which,
        ref=ref,
        seed=ref.value,
        in_use=in_use,
        unit="tokens (seed: share of the context length)",
        effect=effect,
        touched=(),
        rule=(
            f"the largest 99th percentile of the {what.removeprefix('largest ')} over sources with at least "
            f"{MIN_RUNS} runs; band from the largest 95th percentile; the calls above it listed as outliers"
        ),
        runs=int(usable["runs"].sum()),
        calls=int(usable["calls"].sum()),
        chart="reserve",
        evidence=table.drop(columns=["completion_at", "growth_at"]),
    )
    notes = []
    if table["context_length"].isna().any():
        missing = ", ".join(table[table["context_length"].isna()]["source"])
        notes.append(
            f"no context length recorded for {missing}: the share of the window cannot be given there"
        )
    if usable.empty:
        why = f"no source has {MIN_RUNS} runs with reported usage"
        return ConstantRow(
            status=NOT_ENOUGH, recommended=None, band=None, why=why, notes=tuple(notes), **common
        )
    pick = int(np.ceil(usable[f"{col}_p99"].max()))
    low = int(np.ceil(usable[f"{col}_p95"].max()))
    above = sorted(((v, rid, i) for at in usable[f"{col}_at"] for rid, i, v in at if v > pick), reverse=True)
    if above:
        shown = ", ".join(f"{rid} call {i}: {v:,.0f}" for v, rid, i in above[:5])
        more = f" and {len(above) - 5} more" if len(above) > 5 else ""
        notes.append(f"{len(above)} call(s) above the recommendation, left out as outliers: {shown}{more}")
    return ConstantRow(
        status=RECOMMENDED,
        recommended=pick,
        band=(min(low, pick), pick),
        notes=tuple(notes),
        **common,
    )


def reserve_rows(evidence: Evidence, policy: Policy) -> list[ConstantRow]:
    return [_row(evidence, policy, "reserve"), _row(evidence, policy, "safety")]
