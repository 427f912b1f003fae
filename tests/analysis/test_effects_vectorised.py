"""The grant band's per-grant effects, counted with ``np.bincount``, against the per-grant pandas count it
replaced (kept here as the reference): equal, column for column, on annotated sweeps of synthetic runs."""

from __future__ import annotations

import pandas as pd

from workbench.analysis.band import _finished_inside, _landed, effects
from workbench.analysis.frames import annotate, run_facts
from workbench.report.sweeps import grant_sweep
from workbench.scenarios.seed import mixed_corpus


def reference(frame: pd.DataFrame) -> pd.DataFrame:
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


def test_effects_equal_the_groupby_count() -> None:
    runs = mixed_corpus(60, seed=5, max_turns=60)
    frame = annotate(
        grant_sweep(runs, ("current", "ink-s9"), range(20_000, 500_001, 20_000)), run_facts(runs)
    )
    for rules in ("current", "ink-s9"):
        part = frame[frame["rules"] == rules]
        pd.testing.assert_frame_equal(effects(part), reference(part), check_exact=True)
    # a grant where no run finished in its recording: the share is NaN in both
    none = frame[frame["rules"] == "current"].assign(recorded_finished=False)
    pd.testing.assert_frame_equal(effects(none), reference(none), check_exact=True)
