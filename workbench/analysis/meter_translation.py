"""Translating between meters (docs/frontier.md, "Translating between meters"): the token grant and an agent's
dollar cap that keep the same share of a group's resolved runs, and which resolved runs each cut loses."""

from __future__ import annotations

from typing import Any

import pandas as pd

from workbench.analysis.frontier import ALL_GROUP

COLUMNS = ("resolved", "cost_limit", "cap_kept", "cap_kept_share", "grant", "grant_kept",
           "grant_kept_share", "lost_by_cap_only", "lost_by_grant_only", "lost_by_both")  # fmt: skip


def _lost(rows: pd.DataFrame, group: str, by: str) -> pd.DataFrame:
    sel = rows["success"].astype(bool) & (rows["fate"] == "cut")
    if group != ALL_GROUP:
        sel &= rows[by].astype(str) == group
    return rows[sel]


def translate(grant_frontier: Any, limit_frontier: Any, group: str, rules: str | None = None) -> pd.DataFrame:
    """One group's translation table, from a grant frontier (one rule set, no context manager) and a limit
    frontier over the same runs: one row per number of resolved runs the dollar curve keeps."""
    gcurve = grant_frontier.curve(group, rules)
    rules = str(gcurve["rules"].iloc[0])
    ccurve = limit_frontier.curve(group)
    if ccurve["cost_limit"].isna().all():
        raise ValueError("the limit frontier sweeps no cost limit")
    grows = grant_frontier.rows
    grows = grows[(grows["rules"] == rules) & grows["context_length"].isna()]
    g_lost = _lost(grows, group, grant_frontier.by)
    c_lost = _lost(limit_frontier.rows, group, "group")
    # only the runs both frontiers count
    both = set(limit_frontier.runs["run_id"]) & set(grant_frontier.runs["run_id"])
    out = []
    seen: set[int] = set()
    for rec in ccurve.to_dict("records"):
        kept = int(rec["resolved_kept"])
        if kept in seen or rec["cost_limit"] is None:
            continue
        seen.add(kept)
        k = limit_frontier.grid.index((rec["cost_limit"], rec["step_limit"]))
        cap_lost = set(c_lost.loc[c_lost["grant"] == k, "run_id"]) & both
        enough = gcurve[gcurve["resolved_kept"] >= kept]
        if len(enough):
            g = enough.iloc[0]
            grant = int(g["grant"])
            grant_lost = set(g_lost.loc[g_lost["grant"] == grant, "run_id"]) & both
            gk, gs = int(g["resolved_kept"]), float(g["resolved_kept_share"])
        else:
            grant, grant_lost, gk, gs = None, set(), None, None
        out.append(
            {
                "resolved": int(rec["resolved"]),
                "cost_limit": float(rec["cost_limit"]),
                "cap_kept": kept,
                "cap_kept_share": float(rec["resolved_kept_share"]),
                "grant": grant,
                "grant_kept": gk,
                "grant_kept_share": gs,
                "lost_by_cap_only": ", ".join(sorted(cap_lost - grant_lost)),
                "lost_by_grant_only": ", ".join(sorted(grant_lost - cap_lost)) if grant is not None else "",
                "lost_by_both": ", ".join(sorted(cap_lost & grant_lost)) if grant is not None else "",
            }
        )
    return pd.DataFrame(out, columns=list(COLUMNS))
