"""Charts: every function returns a matplotlib Figure and never shows it (a notebook displays the return
value; ``fig.savefig(path)`` writes it)."""

from typing import TYPE_CHECKING

from workbench._lazy import attach
from workbench.charts import display as _display

if TYPE_CHECKING:  # imported on first use (workbench/_lazy.py)
    from workbench.charts.bill import bill_chart, bill_interval_chart
    from workbench.charts.estimator import estimator_chart
    from workbench.charts.heatmap import stop_heatmap
    from workbench.charts.survival import survival_chart
    from workbench.charts.sweep import sweep_chart
    from workbench.charts.timeline import (
        replay_timeline,
        result_markers,
        run_timeline,
        timeline_chart,
        timeline_frame,
    )

__getattr__, __dir__ = attach(__name__, __file__)

__all__ = ["bill_chart", "bill_interval_chart", "estimator_chart", "replay_timeline",
           "result_markers", "run_timeline", "stop_heatmap", "survival_chart", "sweep_chart",
           "timeline_chart", "timeline_frame"]  # fmt: skip

_display.register()  # Figures render as images in a notebook that never imports pyplot
