"""Every package imports on its own, first, in a fresh interpreter: no import cycle hides behind an import order."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import workbench

# Cycles run through package inits (a package's __init__ importing a sibling that imports the package back), so
# each package — and each top-level module — imported first in its own interpreter exposes them.
MODULES = sorted(
    m.name
    for m in pkgutil.walk_packages(workbench.__path__, "workbench.")
    if (m.ispkg or m.name.count(".") == 1) and m.name != "workbench.__main__"
)


def test_every_package_imports_first_in_a_fresh_interpreter() -> None:
    # One interpreter per module (a module imported first is what exposes a cycle), driven by one child script.
    script = (
        "import subprocess, sys\n"
        "bad = []\n"
        f"for name in {MODULES!r}:\n"
        "    r = subprocess.run([sys.executable, '-c', f'import {name}'], capture_output=True, text=True)\n"
        "    if r.returncode:\n"
        "        bad.append((name, r.stderr.strip().splitlines()[-1]))\n"
        "print(bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_governors_and_the_live_loop_do_not_load_the_analysis_stack() -> None:
    code = (
        "import sys, workbench.govern, workbench.replay.engine, workbench.context.manager\n"
        "heavy = sorted(m for m in ('scipy', 'matplotlib', 'lifelines', 'jinja2') if m in sys.modules)\n"
        "print(heavy)\n"
        "sys.exit(1 if heavy else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
