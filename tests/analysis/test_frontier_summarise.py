"""The frontier table, vectorised (``summarise``), against the per-group pandas count it replaced (kept here as
the reference): every count, token sum, dollar sum and interval equal, bit for bit, on synthetic runs with
dollars, with several context lengths, and on the real traces."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from workbench.analysis.frontier import (
    ALL_GROUP,
    COLUMNS,
    SHARES,
    RunLedger,
    _basis,
    _group_values,
    classify,
    ledger,
    policies_for,
    share_interval,
    summarise,
    sweep_rows,
)
from workbench.scenarios.seed import mixed_corpus
from workbench.trace.schema import Run


def reference(
    rows: pd.DataFrame, runs: RunLedger, by: str = "source", confidence: float = 0.95
) -> pd.DataFrame:
    """``summarise`` as it was: one pandas groupby, each group counted on its own."""
    facts = runs.table.set_index("run_id")
    f = rows.join(facts[["success", "success_basis", "recorded_tokens"]], on="run_id")
    f["group"] = _group_values(facts, by).reindex(f["run_id"]).to_numpy()
    f["_spent"] = f["spent"].astype("int64")
    cut = f["fate"] == "cut"
    f["_saved"] = np.where(cut, (f["recorded_tokens"] - f["_spent"]).clip(lower=0), 0)
    made = f["turns_replayed"].astype(int).to_numpy()
    usd = np.array([runs.usd_through(r, c) for r, c in zip(f["run_id"], made, strict=True)])
    total = facts["recorded_usd"].reindex(f["run_id"]).to_numpy(dtype=float)
    f["_usd"] = usd
    f["_usd_saved"] = np.where(cut.to_numpy(), total - usd, 0.0)
    f["_usd_total"] = total
    if "context_length" not in f.columns:
        f["context_length"] = None
    f["_ctx"] = f["context_length"].map(lambda c: -1 if c is None or pd.isna(c) else int(c))
    groups = [f]
    if by != "all" and f["group"].nunique() > 1:
        groups.append(f.assign(group=ALL_GROUP))
    out = []
    for frame in groups:
        for (group, rules, grant, ctx), g in frame.groupby(["group", "rules", "grant", "_ctx"], sort=False):
            succ = g["success"].astype(bool)
            rec: dict[str, Any] = {
                "group": group,
                "rules": rules,
                "grant": int(grant),
                "context_length": None if ctx < 0 else int(ctx),
                "basis": _basis(g["success_basis"]),
                "runs": len(g),
                "resolved": int(succ.sum()),
                "resolved_kept": int((succ & (g["fate"] == "kept")).sum()),
                "resolved_at_risk": int((succ & (g["fate"] == "at_risk")).sum()),
                "resolved_lost": int((succ & (g["fate"] == "cut")).sum()),
                "unresolved": int((~succ).sum()),
                "unresolved_cut": int((~succ & (g["fate"] == "cut")).sum()),
                "censored": int(g["censored"].astype(bool).sum()),
                # issue 21: stops on an inferred workspace fact, and runs the guard could not judge, counted apart
                "stopped_inferred": int((g["stop_basis"] == "inferred").sum()) if "stop_basis" in g else 0,
                "unjudged": int(g["unjudged_at"].notna().sum()) if "unjudged_at" in g else 0,
                "max_raw": int(g["raw"].max()),
                "spend_tokens": int(g["_spent"].sum()),
                "spend_saved_tokens": int(g["_saved"].sum()),
                "recorded_tokens": int(g["recorded_tokens"].sum()),
            }
            priced = ~np.isnan(g["_usd_total"].to_numpy())
            rec["usd_runs"] = int(priced.sum())
            rec["spend_usd"] = float(g["_usd"][priced].sum()) if priced.any() else math.nan
            rec["spend_saved_usd"] = float(g["_usd_saved"][priced].sum()) if priced.any() else math.nan
            rec["recorded_usd"] = float(g["_usd_total"][priced].sum()) if priced.any() else math.nan
            for stem, (num, den) in SHARES.items():
                share, low, high = share_interval(rec[num], rec[den], confidence)
                rec[f"{stem}_share"], rec[f"{stem}_low"], rec[f"{stem}_high"] = share, low, high
            out.append(rec)
    table = pd.DataFrame(out, columns=list(COLUMNS))
    table["context_length"] = table["context_length"].astype("object")
    order = table.assign(
        _last=table["group"] == ALL_GROUP,
        _ctx=table["context_length"].map(lambda v: -1 if v is None else v),
    )
    order = order.sort_values(["_last", "group", "rules", "_ctx", "grant"], kind="stable")
    return table.loc[order.index].reset_index(drop=True)


@dataclass(frozen=True)
class _Price:
    usd: float


def _price(model: str | None, usage: Any, when: Any) -> _Price | None:
    """A price with many significant digits (so summation order would show), unknown for some calls."""
    if usage.prompt is None or usage.prompt % 97 == 0:
        return None
    return _Price(usage.prompt * 3.1e-6 / 7 + (usage.completion or 0) * 1.7e-5 / 3)


def _runs() -> list[Run]:
    runs = mixed_corpus(40, seed=11, max_turns=50)
    # three sources and two models, so every grouping has several groups and an "all runs" one
    return [
        r.model_copy(
            update={
                "source": ("native", "openhands", "codex-cli")[i % 3],
                "model": ("gpt-5", "claude-sonnet-4-5")[i % 2],
                "metadata": {**r.metadata, "agent_class": ("A", "B")[i % 2]},
            }
        )
        for i, r in enumerate(runs)
    ]


@pytest.mark.parametrize("by", ["source", "agent", "model", "all"])
def test_summarise_equals_the_groupby_count(by: str) -> None:
    runs = _runs()
    book = ledger(runs, _price)
    policies = policies_for(("current", "ink-s9"), range(40_000, 400_001, 30_000), (None,))
    rows = classify(sweep_rows(runs, policies))
    pd.testing.assert_frame_equal(summarise(rows, book, by), reference(rows, book, by), check_exact=True)


def test_summarise_with_context_lengths() -> None:
    runs = _runs()[:12]
    book = ledger(runs, _price)
    policies = policies_for(("current",), (60_000, 200_000), (None, 8_192, 32_768))
    rows = classify(sweep_rows(runs, policies))
    assert rows["context_length"].notna().any()
    for by in ("model", "all"):
        pd.testing.assert_frame_equal(summarise(rows, book, by), reference(rows, book, by), check_exact=True)


@pytest.mark.real
def test_summarise_on_the_real_traces(shared: Path) -> None:
    from workbench.report.build import load_leaves

    _, leaves, _ = load_leaves([shared])
    book = ledger(leaves)
    rows = classify(sweep_rows(leaves, policies_for(("current",), range(100_000, 600_001, 10_000), (None,))))
    for by in ("source", "agent", "model", "all"):
        pd.testing.assert_frame_equal(summarise(rows, book, by), reference(rows, book, by), check_exact=True)
