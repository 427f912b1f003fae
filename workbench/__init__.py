"""budget-workbench: a research workbench for the budgets that govern LLM agent loops.

The public API, in the order an analyst meets it::

    import workbench as wb

    corpus = wb.load("traces/", "../shared/traces")        # any supported file or folder -> Corpus of Runs
    result = wb.replay(run, wb.Policy.named("current", grant=250_000))   # what that policy would have done
    table = wb.sweep(corpus.leaves(), {"grant": range(150_000, 300_001, 5_000)})
    report = wb.build_report(["traces/"])                   # the calibration report (also `workbench report`)

Everything else lives in the layer packages: ``workbench.trace``, ``workbench.importers``, ``workbench.govern``,
``workbench.estimate``, ``workbench.context``, ``workbench.replay``, ``workbench.scale``, ``workbench.loop``, ``workbench.analysis``,
``workbench.charts``, ``workbench.report``, ``workbench.widgets``.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
from typing import Any

# Where each public name lives. Imported on first use, so `import workbench` (and every CLI call) stays cheap:
# the report pulls in matplotlib and jinja2, the replay numpy and pandas.
_EXPORTS = {
    "Corpus": "workbench.trace",
    "Run": "workbench.trace",
    "load": "workbench.scale",
    "load_file": "workbench.scale",
    "load_phoenix": "workbench.sources.phoenix",
    "Policy": "workbench.govern",
    "ReplayResult": "workbench.replay",
    "replay": "workbench.replay",
    "replay_leaves": "workbench.replay",
    "sweep": "workbench.scale.sweep",
    "build_report": "workbench.report",
    "write_report": "workbench.report",
}


# A public name that is also a subpackage: the import system binds the subpackage here on its first import (as
# ``wb.load`` does), so the facade gives the subpackage from the start — it is callable as the function
# (workbench/replay/__init__.py), and ``wb.replay(run, policy)`` works before and after any import.
_CALLABLE_PACKAGES = frozenset({"replay"})


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    if name in _CALLABLE_PACKAGES:
        return importlib.import_module(module)
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "Corpus",
    "Policy",
    "ReplayResult",
    "Run",
    "__version__",
    "build_report",
    "load",
    "load_file",
    "load_phoenix",
    "replay",
    "replay_leaves",
    "sweep",
    "write_report",
]
