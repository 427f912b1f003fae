"""Efficiency as SWE-Effi measures it (Fan et al. 2025, arXiv:2509.09853): EuTB and EuCB, the area under the
resolve rate against a per-run budget of tokens or dollars up to a cap, and the "expensive failures"
(docs/frontier.md, "Efficiency as SWE-Effi measures it").

    Eu(C) = (1 / (N C)) * sum over resolved i with r_i <= C of (C - r_i)     (R(b) is a step function: exact)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

# SWE-Effi's caps (arXiv:2509.09853, its effectiveness metrics): 2M tokens for EuTB, $1.00 for EuCB.
TOKEN_CAP = 2_000_000
USD_CAP = 1.0
RECORDED = "recorded"

COLUMNS = ("group", "policy", "rules", "grant", "runs", "resolved", "resolve_rate", "eutb", "eucb",
           "usd_runs")  # fmt: skip


def effectiveness(cost: Sequence[float], resolved: Sequence[bool], cap: float) -> float:
    """SWE-Effi's normalised AUC of the cumulative resolve rate against a per-run budget, up to ``cap`` (module
    docstring). NaN for no runs."""
    c = np.asarray(cost, dtype=float)
    ok = np.asarray(resolved, dtype=bool)
    if len(c) == 0:
        return math.nan
    if not cap > 0:
        raise ValueError(f"the cap must be > 0, got {cap}")
    inside = ok & (c <= cap)
    return float(np.sum(cap - c[inside]) / (len(c) * cap))


def _row(raw: pd.Series, usd: pd.Series, ok: np.ndarray, token_cap: float, usd_cap: float) -> dict[str, Any]:
    """The measured columns of one set of runs: their raw tokens, dollars (NaN: unpriced) and resolved flags."""
    dollars = usd.to_numpy(float)
    priced = ~np.isnan(dollars)
    return {
        "runs": len(ok),
        "resolved": int(ok.sum()),
        "resolve_rate": float(ok.mean()) if len(ok) else math.nan,
        "eutb": effectiveness(raw.to_numpy(float), ok, token_cap),
        "eucb": effectiveness(dollars[priced], ok[priced], usd_cap) if priced.any() else math.nan,
        "usd_runs": int(priced.sum()),
    }


def efficiency(frontier: Any, *, token_cap: float = TOKEN_CAP, usd_cap: float = USD_CAP) -> pd.DataFrame:
    """Per group of a ``Frontier``: EuTB and EuCB of the recorded runs, then under each swept policy (no context
    manager rows and context rows alike)."""
    runs = frontier.runs
    rows = frontier.rows
    by = frontier.by
    out = []
    groups = [
        (g, runs[by].astype(str) == g if by != "all" else pd.Series(True, index=runs.index))
        for g in frontier.groups
        if g != "all runs"
    ]
    if "all runs" in frontier.groups:
        groups.append(("all runs", pd.Series(True, index=runs.index)))
    for g, mask in groups:
        mine = runs[mask]
        ids = set(mine["run_id"])
        measured = _row(
            mine["recorded_raw"], mine["recorded_usd"], mine["success"].to_numpy(bool), token_cap, usd_cap
        )
        out.append({"group": g, "policy": RECORDED, "rules": None, "grant": None} | measured)
        sub = rows[rows["run_id"].isin(ids)]
        ctxs = sub["context_length"].map(lambda v: -1 if v is None or pd.isna(v) else int(v))
        for (rules, grant, ctx), part in sub.groupby(["rules", "grant", ctxs], sort=True):
            ok = part["success"].to_numpy(bool) & (part["fate"].to_numpy() != "cut")
            label = f"{rules} g={int(grant):,}" + ("" if ctx == -1 else f" ctx={int(ctx):,}")
            measured = _row(part["raw"], part["usd"], ok, token_cap, usd_cap)
            out.append({"group": g, "policy": label, "rules": rules, "grant": int(grant)} | measured)
    return pd.DataFrame(out, columns=list(COLUMNS))


def expensive_failures(
    frontier: Any, grant: int | None, group: str | None = None, rules: str | None = None, top: int = 10
) -> pd.DataFrame:
    """The unresolved runs by recorded spend (dollars, then tokens), with what ``grant`` would have saved on each
    (the recorded spend minus the spend up to the policy's stop; 0 where it does not cut the run)."""
    runs = frontier.runs
    group = group if group is not None else frontier.groups[-1]
    sel = ~runs["success"].astype(bool)
    if group != "all runs":
        sel &= runs[frontier.by].astype(str) == group
    fails = runs[sel].copy()
    cols = ["run_id", "recorded_usd", "recorded_tokens", "recorded_raw", "recorded_stop", "saved_usd",
            "saved_tokens", "cut_by"]  # fmt: skip
    if fails.empty:
        return pd.DataFrame(columns=cols)
    fails = fails.sort_values(["recorded_usd", "recorded_tokens"], ascending=False, na_position="last").head(
        top
    )
    if grant is None:
        fails["saved_usd"] = math.nan
        fails["saved_tokens"] = pd.NA
        fails["cut_by"] = None
        return fails[cols].reset_index(drop=True)
    rules = rules if rules is not None else str(frontier.table["rules"].iloc[0])
    at = frontier.rows[
        (frontier.rows["grant"] == grant)
        & (frontier.rows["rules"] == rules)
        & frontier.rows["context_length"].isna()
    ].set_index("run_id")
    saved_usd, saved_tok, cause = [], [], []
    for rec in fails.to_dict("records"):
        r = at.loc[rec["run_id"]]
        cut = r["fate"] == "cut"
        saved_usd.append(rec["recorded_usd"] - r["usd"] if cut else 0.0)
        saved_tok.append(max(0, int(rec["recorded_tokens"]) - int(r["spent"])) if cut else 0)
        cause.append(r["cause"] if cut else None)
    fails["saved_usd"], fails["saved_tokens"], fails["cut_by"] = saved_usd, saved_tok, cause
    return fails[cols].reset_index(drop=True)
