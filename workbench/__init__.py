"""budget-workbench: a research workbench for the budgets that govern LLM agent loops.

The public API, in the order an analyst meets it::

    import workbench as wb

    corpus = wb.load("traces/", "../shared/traces")        # any supported file or folder -> Corpus of Runs
    result = wb.replay(run, wb.Policy.named("current", grant=250_000))   # what that policy would have done
    table = wb.sweep(corpus.leaves(), {"grant": range(150_000, 300_001, 5_000)})
    report = wb.build_report(["traces/"])                   # the calibration report (also `workbench report`)

Everything else lives in the layer packages: ``workbench.trace``, ``workbench.importers``, ``workbench.govern``,
``workbench.estimate``, ``workbench.context``, ``workbench.replay``, ``workbench.loop``, ``workbench.analysis``,
``workbench.charts``, ``workbench.report``, ``workbench.widgets``.
"""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
import sys
import types
from typing import Any

# Where each public name lives. Imported on first use, so `import workbench` (and every CLI call) stays cheap:
# the report pulls in matplotlib and jinja2, the replay numpy and pandas.
_EXPORTS = {
    "Corpus": "workbench.trace",
    "Run": "workbench.trace",
    "load": "workbench.trace",
    "load_file": "workbench.trace",
    "Policy": "workbench.govern",
    "ReplayResult": "workbench.replay",
    "replay": "workbench.replay",
    "replay_leaves": "workbench.replay",
    "sweep": "workbench.replay",
    "build_report": "workbench.report",
    "write_report": "workbench.report",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'workbench' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)


class _Facade(types.ModuleType):
    """This module, keeping its public names stable: importing a subpackage sets an attribute of that name on its
    parent, so the first ``import workbench.replay`` (done by ``wb.load`` among others) would make ``wb.replay``
    the package and ``wb.replay(run, policy)`` a ``TypeError``. A subpackage named like a public function is not
    bound here; it stays reachable as ``sys.modules["workbench.replay"]`` and by ``from workbench.replay import
    ...``. (``import workbench.replay as r`` therefore names the function, as ``wb.replay`` does.)"""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _EXPORTS and isinstance(value, types.ModuleType):
            self.__dict__.pop(name, None)
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Facade


__all__ = [
    "Corpus",
    "Policy",
    "ReplayResult",
    "Run",
    "__version__",
    "build_report",
    "load",
    "load_file",
    "replay",
    "replay_leaves",
    "sweep",
    "write_report",
]
