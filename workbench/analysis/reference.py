"""The readable reference implementations: the oracle the vectorised counts are held equal to, bit for bit.

``frontier_table`` is ``workbench.analysis.frontier.summarise`` as one pandas groupby, each (group, policy) cell
counted on its own; ``effects`` is ``workbench.analysis.band.effects`` as one groupby per grant. They are slow and
plain on purpose: tests (random corpora, and the shared traces) compare the fast code with them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis.band import _finished_inside, _landed
from workbench.analysis.frontier import (
    ALL_GROUP,
    SHARES,
    Basis,
    Fate,
    RunLedger,
    _group_values,
    share_interval,
    table_frame,
)
from workbench.analysis.losses import count_map


def _basis(bases: pd.Series) -> str:
    kinds = set(bases)
    return kinds.pop() if len(kinds) == 1 else Basis.MIXED


def _cell(g: pd.DataFrame, confidence: float) -> dict[str, Any]:
    """One (group, policy) cell of the frontier table, from its classified sweep rows (joined to the ledger)."""
    ok, fate = g["success"].astype(bool), g["fate"]
    rec: dict[str, Any] = {
        "basis": _basis(g["success_basis"]),
        "runs": len(g),
        "resolved": int(ok.sum()),
        "resolved_kept": int((ok & (fate == Fate.KEPT)).sum()),
        "resolved_at_risk": int((ok & (fate == Fate.AT_RISK)).sum()),
        "resolved_lost": int((ok & (fate == Fate.CUT)).sum()),
        "unresolved": int((~ok).sum()),
        "unresolved_cut": int((~ok & (fate == Fate.CUT)).sum()),
        "censored": int(g["censored"].astype(bool).sum()),
        "stopped_inferred": int((g["stop_basis"] == "inferred").sum()) if "stop_basis" in g else 0,
        "unjudged": int(g["unjudged_at"].notna().sum()) if "unjudged_at" in g else 0,
        "max_raw": int(g["raw"].max()),
        "spend_tokens": int(g["_spent"].sum()),
        "spend_saved_tokens": int(g["_saved"].sum()),
        "recorded_tokens": int(g["recorded_tokens"].sum()),
    }
    priced = g[g["_usd_total"].notna()]
    rec["usd_runs"] = len(priced)
    for col, src in (
        ("spend_usd", "_usd"),
        ("spend_saved_usd", "_usd_saved"),
        ("recorded_usd", "_usd_total"),
    ):
        rec[col] = float(priced[src].sum()) if len(priced) else math.nan
    for stem, (num, den) in SHARES.items():
        share, low, high = share_interval(rec[num], rec[den], confidence)
        rec[f"{stem}_share"], rec[f"{stem}_low"], rec[f"{stem}_high"] = share, low, high
    if "cause" in g:
        rec["lost_by"] = count_map(g.loc[ok & (fate == Fate.CUT), "cause"])
        rec["cut_by"] = count_map(g.loc[~ok & (fate == Fate.CUT), "cause"])
    return rec


def frontier_table(
    rows: pd.DataFrame, runs: RunLedger, by: str = "source", confidence: float = 0.95
) -> pd.DataFrame:
    """``summarise``: per group (and ``all runs`` when there are several) and policy, one cell."""
    facts = runs.table.set_index("run_id")
    f = rows.join(facts[["success", "success_basis", "recorded_tokens"]], on="run_id")
    f["group"] = _group_values(facts, by).reindex(f["run_id"]).to_numpy()
    f["_spent"] = f["spent"].astype("int64")
    cut = (f["fate"] == Fate.CUT).to_numpy()
    f["_saved"] = np.where(cut, (f["recorded_tokens"] - f["_spent"]).clip(lower=0), 0)
    made = f["turns_replayed"].astype(int)
    f["_usd"] = [runs.usd_through(r, c) for r, c in zip(f["run_id"], made, strict=True)]
    f["_usd_total"] = facts["recorded_usd"].reindex(f["run_id"]).to_numpy(dtype=float)
    f["_usd_saved"] = np.where(cut, f["_usd_total"] - f["_usd"], 0.0)
    ctx = f["context_length"] if "context_length" in f else pd.Series(None, index=f.index, dtype=object)
    f["_ctx"] = ctx.map(lambda c: -1 if c is None or pd.isna(c) else int(c))
    frames = [f] if by == "all" or f["group"].nunique() < 2 else [f, f.assign(group=ALL_GROUP)]
    out = []
    for frame in frames:
        for (group, rules, grant, c), g in frame.groupby(["group", "rules", "grant", "_ctx"], sort=False):
            key = {
                "group": group,
                "rules": rules,
                "grant": int(grant),
                "context_length": None if c < 0 else int(c),
            }
            out.append(key | _cell(g, confidence))
    return table_frame(out)


def effects(frame: pd.DataFrame) -> pd.DataFrame:
    """``band.effects``: per grant, the honest runs that finished inside it and what it cut and saved."""
    f = frame.assign(
        _honest=frame["recorded_finished"].astype(bool),
        _inside=_finished_inside(frame),
        _landed=_landed(frame),
        _saved=(frame["recorded_spent"] - frame["spent"]).clip(lower=0).where(frame["cut_turns"] > 0, 0),
    )
    rows = []
    for grant, g in f.groupby("grant", sort=True):
        honest = g[g["_honest"]]
        rows.append(
            {
                "grant": int(grant),
                "finished_runs": len(honest),
                "finished_inside": int(honest["_inside"].sum()),
                "share_finished": float(honest["_inside"].mean()) if len(honest) else float("nan"),
                "landed_mid_work": int(g["_landed"].sum()),
                "censored": int(g["censored"].astype(bool).sum()),
                "spend": int(g["spent"].sum()),
                "spend_saved": int(g["_saved"].sum()),
                "cut_turns": int(g["cut_turns"].fillna(0).sum()),
                "cut_tool_calls": int(g["cut_tool_calls"].fillna(0).sum()),
                "cut_mutations": int(g["cut_mutations"].fillna(0).sum()),
            }
        )
    return pd.DataFrame(rows)
