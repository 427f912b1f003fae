"""Where governors fire, read from sweep rows."""

from __future__ import annotations

import pandas as pd

from workbench.analysis.fires import fire_points, fire_summary, stop_mix


def rows() -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "run_id": "a",
                "rules": "current",
                "grant": 200_000,
                "wrapup_at": 10,
                "landing_started_at": 14,
                "concluded_at": None,
                "diverges_at": 10,
                "stop_turn": 18,
                "stop_reason": "budget",
                "censored": False,
                "events": [{"kind": "inject", "turn": 10}, {"kind": "prune", "turn": 12}],
            },
            {
                "run_id": "b",
                "rules": "current",
                "grant": 200_000,
                "wrapup_at": None,
                "landing_started_at": None,
                "concluded_at": 6,
                "diverges_at": 6,
                "stop_turn": 7,
                "stop_reason": "no-progress",
                "censored": False,
                "events": [],
            },
            {
                "run_id": "c",
                "rules": "current",
                "grant": 200_000,
                "wrapup_at": None,
                "landing_started_at": None,
                "concluded_at": None,
                "diverges_at": None,
                "stop_turn": 30,
                "stop_reason": "done",
                "censored": False,
                "events": [],
            },
            {
                "run_id": "d",
                "rules": "current",
                "grant": 200_000,
                "wrapup_at": None,
                "landing_started_at": None,
                "concluded_at": None,
                "diverges_at": None,
                "stop_turn": 48,
                "stop_reason": "end-of-recording",
                "censored": True,
                "events": [],
            },
        ]
    )


def test_fire_points_list_every_firing_once() -> None:
    p = fire_points(rows())
    got = sorted(zip(p["run_id"], p["kind"], p["turn"], strict=True))
    assert got == [
        ("a", "diverges", 10),
        ("a", "landing", 14),
        ("a", "prune", 12),
        ("a", "stop: budget", 18),
        ("a", "wrap-up", 10),
        ("b", "conclude", 6),
        ("b", "diverges", 6),
        ("b", "stop: no-progress", 7),
    ]


def test_summary_and_stop_mix() -> None:
    s = fire_summary(fire_points(rows())).set_index("kind")
    assert s.loc["diverges", "runs"] == 2 and s.loc["diverges", "first_turn"] == 6
    assert s.loc["diverges", "median_turn"] == 8
    mix = stop_mix(rows()).iloc[0]
    assert (mix["budget"], mix["no-progress"], mix["done"], mix["censored"]) == (1, 1, 1, 1)
