"""Counterfactual replay: recorded runs fed to the Governor under any Policy, and sweeps over corpora × grids.

``replay(run, policy)`` → ``ReplayResult`` (``.to_frame()`` is the decision timeline); ``replay_leaves`` does it
per segment of an interactive session; ``sweep(runs, {"grant": [...]})`` → one DataFrame row per (run, policy).
"""

from workbench.replay.engine import replay, replay_leaves
from workbench.replay.result import ReplayResult
from workbench.replay.sweep import COLUMNS, sweep

__all__ = ["COLUMNS", "ReplayResult", "replay", "replay_leaves", "sweep"]
