"""Reserve and safety: completion per call and prompt growth between sends, per source (docs/calibrate.md,
"Reserve and safety")."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
import pandas as pd

from workbench.analysis.calibration.evidence import MIN_RUNS, Evidence
from workbench.analysis.calibration.model import RECOMMENDED, ConstantRow, within
from workbench.analysis.calibration.provenance import ConstantRef
from workbench.analysis.calibration.status import keep, not_enough, settle
from workbench.estimate.constants import UNKNOWN_CONTEXT_LENGTH
from workbench.govern.policy import Policy

LENGTH_STOPS = frozenset({"length", "max_tokens", "max_output_tokens"})
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
        # (run, call, value, the reply hit its length limit): a growth follows the previous call's reply
        capped = [_length_stop(t.finish_reason) for t in leaf.run.turns]
        a["where"][0].extend((leaf.run_id, i, v, capped[i]) for i, v in done)
        a["where"][1].extend((leaf.run_id, i, v, capped[i - 1]) for i, v in grow)
        a["prompt_max"] = max([a.get("prompt_max") or 0, *(x for x in prompts if x is not None)])
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
                "prompt_max": a.get("prompt_max") or None,
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
        return not_enough(why, notes=tuple(notes), **common)
    pick = int(np.ceil(usable[f"{col}_p99"].max()))
    low = int(np.ceil(usable[f"{col}_p95"].max()))
    above = sorted(
        ((v, rid, i, capped) for at in usable[f"{col}_at"] for rid, i, v, capped in at if v > pick),
        reverse=True,
    )
    if above:
        limit = (
            " (the reply hit its length limit)"
            if which == "reserve"
            else " (after a reply that hit its length limit)"
        )
        shown = ", ".join(
            f"{rid} call {i}: {v:,.0f}" + (limit if capped else "") for v, rid, i, capped in above[:5]
        )
        more = f" and {len(above) - 5} more" if len(above) > 5 else ""
        notes.append(f"{len(above)} call(s) above the recommendation, left out as outliers: {shown}{more}")
    row = ConstantRow(
        status=RECOMMENDED, recommended=pick, band=(min(low, pick), pick), notes=tuple(notes), **common
    )
    if in_use is not None and within(in_use, row.band):
        return keep(row, f"{in_use:,} in use is inside the band")
    return settle(row)


def _length_stop(finish: str | None) -> bool:
    """The reply stopped at its length limit (OpenAI ``length``, Anthropic ``max_tokens``, Gemini ``MAX_TOKENS``)."""
    return finish is not None and finish.lower() in LENGTH_STOPS


def windows_in_use(evidence: Evidence, policy: Policy) -> tuple[list[tuple[int, str]], int | None]:
    """The context windows the pair must fit, each with where it comes from: the policy's own, else each recorded
    one; with neither, ADR-107's fallback for an unknown context length. Also the largest prompt sent."""
    table = per_source(evidence)
    prompt_max = int(table["prompt_max"].max()) if table["prompt_max"].notna().any() else None
    own = [
        (int(w), f"the policy's {name}")
        for name in ("context_length", "window")
        if (w := getattr(policy, name))
    ]
    if own:
        return own, prompt_max
    recorded = sorted(
        {
            (int(leaf.run.context_length), leaf.run.source)
            for leaf in evidence.leaves
            if leaf.run.context_length
        }
    )
    if recorded:
        return [(w, f"recorded by {src}") for w, src in recorded], prompt_max
    return [
        (
            UNKNOWN_CONTEXT_LENGTH,
            "ADR-107's fallback for an unknown context length: no run records one and the policy sets none",
        )
    ], prompt_max


def fit_pair(
    reserve: ConstantRow, safety: ConstantRow, evidence: Evidence, policy: Policy
) -> list[ConstantRow]:
    """Both rows flagged when their answers together cannot fit a window in use (ADR-107's budget is the context
    length minus reserve minus safety: nothing is left for the prompt); the room they leave noted otherwise."""
    r, s = reserve.answer, safety.answer
    if r is None or s is None:
        return [reserve, safety]
    pair = int(r) + int(s)
    windows, prompt_max = windows_in_use(evidence, policy)
    flags, notes = [], []
    for w, where in windows:
        if pair >= w:
            flags.append(
                f"reserve + safety = {pair:,} tokens cannot fit the {w:,}-token window in use ({where}): no room "
                "is left for the prompt"
            )
        else:
            tight = (
                f"; the largest prompt sent here, {prompt_max:,}, would not fit beside them"
                if prompt_max is not None and w - pair < prompt_max
                else ""
            )
            notes.append(
                f"reserve + safety = {pair:,} tokens leave {w - pair:,} of the {w:,}-token window in use ({where}){tight}"
            )
    notes.append(f"the pair fits only windows above {pair:,} tokens")
    return [replace(row, flags=(*row.flags, *flags), notes=(*row.notes, *notes)) for row in (reserve, safety)]


def reserve_rows(evidence: Evidence, policy: Policy) -> list[ConstantRow]:
    return fit_pair(_row(evidence, policy, "reserve"), _row(evidence, policy, "safety"), evidence, policy)
