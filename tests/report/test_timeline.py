"""Timeline data and markers come from the recording and the ReplayResult they claim to show."""

from __future__ import annotations

from matplotlib.figure import Figure

from workbench.charts import replay_timeline, result_markers, timeline_frame
from workbench.govern import Policy
from workbench.replay import replay
from workbench.scenarios.seed import warm_runaway


def test_timeline_frame_is_the_recorded_meter() -> None:
    run = warm_runaway(turns=5)
    f = timeline_frame(run)
    # turn 0 uncached: 12,192 + 800; each later turn 244 fresh + 1,194.8 cached + 800 (floored on the total)
    assert f["spent"].tolist() == [12_992, 15_230, 17_469, 19_708, 21_947]
    assert f["raw"].tolist() == [12_992 * k for k in range(1, 6)]


def test_markers_are_the_results_decisions() -> None:
    run = warm_runaway()
    res = replay(run, Policy.named("current", grant=241_000))
    marks = dict(result_markers(res))
    assert marks["landing"] == res.landing_started_at == 102
    assert marks["stop: budget"] == res.stop_turn == 106
    assert marks["wrap-up"] == res.wrapup_at
    fig = replay_timeline(run, Policy.named("current", grant=241_000))
    assert isinstance(fig, Figure)
    top, bottom = fig.axes[:2]
    assert top.get_ylabel() == "cumulative tokens" and bottom.get_xlabel() == "turn (model call index)"
    labels = top.get_legend().get_texts()
    assert any(t.get_text() == "landing (turn 102)" for t in labels)


def test_figures_display_in_a_notebook_without_pyplot() -> None:
    fig = replay_timeline(warm_runaway(turns=20), Policy.named("current", grant=50_000))
    assert fig._repr_png_().startswith(b"\x89PNG")  # type: ignore[attr-defined]
