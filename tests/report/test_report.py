"""The calibration report end to end on the bundled corpus: its figures agree with replays computed here
directly (not through workbench.analysis), it recovers the seed's band, and it renders self-contained."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from matplotlib.image import AxesImage

from workbench.govern import Policy
from workbench.paths import bundled_traces
from workbench.replay import replay
from workbench.report import ReportConfig, build_report, write_report
from workbench.scale import load

GRANTS = tuple(range(185_000, 250_001, 1_000))
CONTEXT = (None, 32_768, 65_536)


@pytest.fixture(scope="module")
def report():  # type: ignore[no-untyped-def]
    config = ReportConfig(grants=GRANTS, context_lengths=CONTEXT, context_grant_points=3)
    return build_report([bundled_traces() / "synthetic"], config=config, command="test")


@pytest.fixture(scope="module")
def runs():  # type: ignore[no-untyped-def]
    return load(bundled_traces() / "synthetic").runs


def test_recovers_the_seed_band_from_the_synthetic_runaway(report) -> None:  # type: ignore[no-untyped-def]
    band = report.band()
    assert (band.low, band.high) == (193_000, 241_000)
    # Bisected on fresh replays of the runaway: the closed-form edges spent(81) + 1 and spent(103).
    assert (band.exact_low, band.exact_high) == (192_097, 241_349)
    floor, ceiling = band.bindings
    assert floor.run_id == ceiling.run_id == "seed-warm-runaway"
    assert (floor.grant, floor.value) == (192_000, 85)
    assert (ceiling.grant, ceiling.value) == (242_000, 1_403_136)


def test_sweep_figure_shows_what_replay_says(report, runs) -> None:  # type: ignore[no-untyped-def]
    """Figure 1, recomputed independently: of the runs whose recording finished (stop done, last call not an
    error), the plotted share each grant keeps — the replay cuts nothing and starts no landing."""
    ax = report.figures["sweep"].axes[0]
    line = next(ln for ln in ax.get_lines() if ln.get_label().startswith("finished runs kept"))
    plotted = dict(zip(line.get_xdata(), line.get_ydata(), strict=True))
    finished = [r for r in runs if r.outcome.stop_reason == "done" and r.turns[-1].finish_reason != "error"]
    for grant in (185_000, 193_000, 220_000, 250_000):
        results = [replay(r, Policy.named("current", grant=grant)) for r in finished]
        kept = sum(1 for x in results if x.cut_turns == 0 and x.landing_started_at is None)
        assert plotted[grant] == pytest.approx(kept / len(finished)), grant
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert f"recommended grant {report.recommended:,}" in legend


def test_heatmap_figure_shows_what_replay_says(report, runs) -> None:  # type: ignore[no-untyped-def]
    """Figure 2, recomputed independently: every cell of the "as recorded" and "budget" panels (a run that ends
    as recorded — nothing cut, no landing — counts there whatever its recording's own stop)."""
    fig = report.figures["heatmap"]
    grants = sorted(set(report.context["grant"]))
    assert report.recommended in grants  # the context section reads the recommended grant itself
    leaves = [leaf for r in runs for leaf in r.leaves()]
    results = {
        (ctx, grant): [replay(r, Policy.named("current", grant=grant, context_length=ctx)) for r in leaves]
        for ctx in CONTEXT
        for grant in grants
    }

    def ending(x) -> str:  # type: ignore[no-untyped-def]
        return "as recorded" if x.cut_turns == 0 and x.landing_started_at is None else x.stop_reason

    labels = {"none": None, "33k": 32_768, "66k": 65_536}
    for reason in ("as recorded", "budget"):
        ax = next(a for a in fig.axes if a.get_title() == f"stop: {reason}")
        cells = np.asarray(next(c for c in ax.get_children() if isinstance(c, AxesImage)).get_array())
        rows = [labels[t.get_text()] for t in ax.get_yticklabels()]
        assert sorted(rows, key=lambda c: c or 10**9) == rows  # rows from small windows up to none
        for i, ctx in enumerate(rows):
            for j, grant in enumerate(grants):
                got = results[(ctx, grant)]
                share = sum(ending(x) == reason and not x.censored for x in got) / len(got)
                assert cells[i, j] == pytest.approx(share), (reason, ctx, grant)
    assert f"recommended grant {report.recommended:,}" in [t.get_text() for t in fig.legends[0].get_texts()]


def test_survival_covers_honest_leaves_only(report) -> None:  # type: ignore[no-untyped-def]
    surv = report.survival
    ids = set(surv.observations["run_id"])
    assert "seed-warm-runaway" not in ids and "split-worthy-leaf" in ids
    assert surv.runs == 25 and surv.censored == 0  # 24 honest leaves and the split-worthy leaf


def test_writes_self_contained_html_and_markdown(report, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    written = write_report(report, tmp_path)
    html = written.html.read_text()
    assert not re.search(r"""src=["'](?!data:)""", html)  # every image inline
    grant_charts = [k for k in report.figures if k in ("sweep", "frontier", "survival", "heatmap")]
    assert html.count("<img ") == len(report.figures) - len(grant_charts)  # the rest: inline PNGs
    assert html.count('<figure class="grant-chart"') == len(grant_charts) == 4  # inline SVG, text as text
    assert "<table class=" in html and "&lt;table" not in html  # tables rendered, not escaped as text
    assert "&#39;cost still separates from turn count&#39;" in html  # text is escaped
    md = written.markdown.read_text()
    for name in re.findall(r"\]\(([\w-]+\.png)\)", md):
        assert (tmp_path / name).is_file()
    assert "193,000 to 241,000" in md and "&#39;" not in md
    for f in report.provenance.files:
        assert f.sha256 == hashlib.sha256(Path(f.path).read_bytes()).hexdigest()
        assert f.sha256 in html


def test_notebook_shapes(report) -> None:  # type: ignore[no-untyped-def]
    assert "193,000" in report._repr_html_()
    assert set(report.to_frame()["grant"]) == set(GRANTS)
    assert report.band().to_frame().shape[0] == len(GRANTS)
    with pytest.raises(KeyError, match="were not swept"):
        report.finding("ink-s9")


def test_survival_figure_is_the_share_kept_split_by_outcome(report, runs) -> None:  # type: ignore[no-untyped-def]
    """Figure 3, recomputed by replaying directly: for the runs whose recording finished and for the rest, the
    plotted share each grant keeps (nothing cut, no landing) — the report's one coverage definition."""
    ax = report.figures["survival"].axes[0]
    finished = [r for r in runs if r.outcome.stop_reason == "done" and r.turns[-1].finish_reason != "error"]
    others = [r for r in runs if r not in finished]
    for prefix, group in (("finished:", finished), ("not finished:", others)):
        line = next(ln for ln in ax.get_lines() if ln.get_label().startswith(prefix))
        assert line.get_label() == f"{prefix} {len(group)} runs"
        plotted = dict(zip(line.get_xdata(), line.get_ydata(), strict=True))
        for grant in (185_000, 220_000, 250_000):
            results = [replay(r, Policy.named("current", grant=grant)) for r in group]
            kept = sum(1 for x in results if x.cut_turns == 0 and x.landing_started_at is None)
            assert plotted[grant] == pytest.approx(kept / len(group)), (prefix, grant)
