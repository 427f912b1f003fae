"""Red team, the public facade: ``wb.replay(run, policy)`` works after any import (issue 25, build item 7).

Importing the subpackage ``workbench.replay`` (``wb.load`` does, among others) binds the package on ``workbench``,
so the README's own ``wb.load(...); wb.replay(...)`` raised ``TypeError: 'module' object is not callable``. The
facade now gives the package from the start, callable as the function. Run in a fresh interpreter: this test
process has imported everything already."""

from __future__ import annotations

import subprocess
import sys

from workbench.paths import bundled_traces

SCRIPT = """
import importlib, inspect, sys
import workbench as wb
before = wb.replay
corpus = wb.load({path!r})
run = corpus.runs[0]
importlib.import_module("workbench.replay")
importlib.import_module("workbench.replay.sweep")
import workbench.replay.engine  # every way of importing the subpackage
import workbench.replay.engine as engine
assert wb.replay is before, (wb.replay, before)
result = wb.replay(run, wb.Policy.named("current", grant=250_000))
assert isinstance(result, wb.ReplayResult), type(result)
from workbench.replay import replay
assert replay(run, wb.Policy.named("current", grant=250_000)).summary() == result.summary()
print(list(inspect.signature(wb.replay).parameters)[:2])
print(all(callable(getattr(wb, n)) for n in ("replay", "sweep", "replay_leaves", "load", "build_report")))
print(engine.__name__)
"""


def test_replay_is_callable_and_stable_after_load_and_after_importing_the_subpackage() -> None:
    script = SCRIPT.format(path=str(bundled_traces()))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["['run', 'policy']", "True", "workbench.replay.engine"]


def test_control_the_import_system_binds_a_subpackage_on_its_parent() -> None:
    # The control: what the facade guards against is real — importing a subpackage binds it over the name.
    script = (
        "import importlib, workbench\n"
        "importlib.import_module('workbench.replay')\n"
        "print(type(workbench.__dict__.get('replay')).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "_ReplayPackage", done.stderr
