"""Red team, the public facade: ``wb.replay`` stays the function after any import (issue 25, build item 7).

Importing the subpackage ``workbench.replay`` (``wb.load`` does, among others) used to bind the package over the
function, so the README's own ``wb.load(...); wb.replay(...)`` raised ``TypeError: 'module' object is not
callable``. Run in a fresh interpreter: this test process has imported everything already."""

from __future__ import annotations

import subprocess
import sys

from workbench.paths import bundled_traces

SCRIPT = """
import importlib, sys, types
import workbench as wb
corpus = wb.load({path!r})
run = corpus.runs[0]
importlib.import_module("workbench.replay")
importlib.import_module("workbench.replay.sweep")
import workbench.replay.engine  # every way of importing the subpackage
result = wb.replay(run, wb.Policy.named("current", grant=250_000))
assert isinstance(result, wb.ReplayResult), type(result)
names = {{n: type(getattr(wb, n)).__name__ for n in ("replay", "sweep", "replay_leaves", "load", "build_report")}}
print(names)
assert isinstance(sys.modules["workbench.replay"], types.ModuleType)
from workbench.replay import replay, sweep
assert replay is wb.replay and sweep is wb.sweep
print(len(result.to_frame()) > 0)
"""


def test_replay_is_the_function_after_load_and_after_importing_the_subpackage() -> None:
    script = SCRIPT.format(path=str(bundled_traces()))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == str(
        {n: "function" for n in ("replay", "sweep", "replay_leaves", "load", "build_report")}
    )
    assert lines[1] == "True"


def test_control_the_import_system_binds_a_subpackage_on_its_parent() -> None:
    # The control: what the facade guards against is real — a plain module gets the subpackage bound over a name.
    script = (
        "import types, sys, importlib\n"
        "import workbench\n"
        "workbench.__class__ = types.ModuleType\n"  # the facade's guard removed
        "importlib.import_module('workbench.replay')\n"
        "print(type(workbench.__dict__.get('replay')).__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "module", done.stderr
