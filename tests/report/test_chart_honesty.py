"""Charts draw what is there and say nothing they do not draw (issue 26): tick labels that read distinctly, money
as $1,234.56, the bill's panels, the frontier's layout and its caption, grader files listed as labels read."""

from __future__ import annotations

import pandas as pd

from workbench.charts.bill import bill_chart, bill_panels
from workbench.charts.style import _tokens, _usd_tick, usd_axis, window_label
from workbench.report.provenance import provenance


def test_token_ticks_read_distinctly() -> None:
    # an axis over a small range: '0, 0, -0' before; each tick now reads as itself
    assert [_tokens(x) for x in (-0.04, -0.0, 0.02, 0.5, 3.0)] == ["-0.04", "0", "0.02", "0.5", "3"]
    assert [_tokens(x) for x in (241_000, 1_400_000, 2_000_000)] == ["241k", "1.40M", "2M"]


def test_money_ticks_are_cents_apart() -> None:
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    ax.set_ylim(0.07, 0.105)
    usd_axis(ax.yaxis)
    labels = [_usd_tick(t) for t in ax.yaxis.get_major_locator().tick_values(0.07, 0.105)]
    assert len(labels) == len(set(labels)) and all(lab.startswith("$") and lab[-3] == "." for lab in labels)
    assert _usd_tick(-1234.5) == "-$1,234.50" and _usd_tick(-0.001) == "$0.00"
    assert (window_label(32_768), window_label(16_000)) == ("32k", "16,000")


def _grid(usd: float | None, writes: int) -> pd.DataFrame:
    rows = []
    for window in (None, 32_768, 65_536):
        for mask in (None, 10):
            rows.append(
                {
                    "run_id": "r",
                    "context_length": window,
                    "mask": mask,
                    "cf_usd": usd,
                    "cf_spent": 1000 + (window or 0) // 100 + (mask or 0),
                    "cf_cache_write_tokens": writes,
                    "recorded_usd": usd,
                    "recorded_spent": 1000,
                }
            )
    return pd.DataFrame(rows)


def test_bill_chart_draws_every_mask_at_every_window() -> None:
    fig = bill_chart(_grid(1.5, 10))
    assert bill_panels(_grid(1.5, 10)) == ("usd", "writes") and len(fig.axes) == 2
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    # mask 10 is a line over the three windows, not a single dot at 'none'
    assert len(lines["mask 10"].get_xdata()) == 3 and len(lines["no mask"].get_xdata()) == 3


def test_bill_chart_drops_an_all_zero_panel_and_draws_tokens_when_unpriced() -> None:
    frame = _grid(None, 0)
    assert bill_panels(frame) == ("tokens",)
    fig = bill_chart(frame)
    assert len(fig.axes) == 1 and "cost-meter tokens" in fig.axes[0].get_ylabel()
    assert [float(y) for y in fig.axes[0].get_lines()[0].get_ydata()] == [1000.0, 1327.0, 1655.0]


def test_grader_files_are_listed_as_labels_read(tmp_path) -> None:  # type: ignore[no-untyped-def]
    grader = str(tmp_path / "logs" / "a__b-1" / "report.json")
    why = "a SWE-bench per-instance report: read for outcome labels, not a trace (docs/labels.md)"
    readme = (str(tmp_path / "README.md"), "unrecognised format: no importer recognises this file")
    prov = provenance([], {}, [], "workbench report", not_loaded=[(grader, why), readme])
    assert prov.labels_read == ((grader, why),) and prov.not_loaded == (readme,)
