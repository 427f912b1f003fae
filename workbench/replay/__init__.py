"""Counterfactual replay: recorded runs fed to the Governor under any Policy, and sweeps over corpora × grids."""

from workbench.replay.engine import replay, replay_leaves
from workbench.replay.result import ReplayResult

__all__ = ["ReplayResult", "replay", "replay_leaves"]
