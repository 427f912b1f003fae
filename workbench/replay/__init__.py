"""Counterfactual replay: recorded runs fed to the Governor under any Policy, and sweeps over corpora × grids.

``replay(run, policy)`` → ``ReplayResult`` (``.to_frame()`` is the decision timeline); ``replay_leaves`` does it
per segment of an interactive session; ``sweep(runs, {"grant": [...]})`` → one DataFrame row per (run, policy).
"""

import sys
import types
from typing import Any

from workbench.replay.columns import COLUMNS
from workbench.replay.engine import replay, replay_leaves
from workbench.replay.result import ReplayResult
from workbench.replay.sweep import sweep

__all__ = ["COLUMNS", "ReplayResult", "replay", "replay_leaves", "sweep"]


class _ReplayPackage(types.ModuleType):
    """This package, callable as :func:`replay`: ``import workbench as wb`` makes ``wb.replay`` the package (the
    import system binds a subpackage on its parent), and the README's ``wb.replay(run, policy)`` must work before
    and after any import. ``from workbench.replay import replay`` is the function itself."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReplayResult:
        return replay(*args, **kwargs)


sys.modules[__name__].__class__ = _ReplayPackage
__wrapped__ = replay  # inspect.signature(wb.replay) and help() show the function's
