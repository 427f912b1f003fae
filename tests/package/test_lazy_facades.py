"""Package ``__init__``s are light (workbench/_lazy.py): a submodule imports without its whole package, and every
name a facade exports still resolves, to the object its module defines."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import workbench
from workbench._lazy import exports_of

PACKAGE = Path(workbench.__file__).parent
LAZY = sorted(
    m.name
    for m in pkgutil.walk_packages(workbench.__path__, "workbench.")
    if m.ispkg
    and "attach(__name__, __file__)"
    in (PACKAGE.parent / m.name.replace(".", "/") / "__init__.py").read_text()
)


def test_the_facades_are_found() -> None:
    assert {"workbench.govern", "workbench.trace", "workbench.report", "workbench.loop"} <= set(LAZY)


@pytest.mark.parametrize("package", LAZY)
def test_every_exported_name_resolves_to_its_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    table = exports_of(package, str(module.__file__))
    assert table, "no names under TYPE_CHECKING"
    assert sorted(table) == sorted(n for n in module.__all__ if n in table)  # each lazy name is public
    for name, (source, attribute) in table.items():
        assert getattr(module, name) is getattr(importlib.import_module(source), attribute)
    assert set(table) <= set(dir(module))


@pytest.mark.parametrize("package", LAZY)
def test_no_lazy_name_is_also_a_submodule(package: str) -> None:
    # importing a submodule binds it on its package: a function of the same name would be shadowed by it
    module = importlib.import_module(package)
    submodules = {m.name for m in pkgutil.iter_modules(module.__path__)}
    assert not set(exports_of(package, str(module.__file__))) & submodules


def _imported(statement: str, watched: tuple[str, ...]) -> list[str]:
    code = f"import sys\n{statement}\nprint(sorted(m for m in {watched!r} if m in sys.modules))\n"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return eval(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "statement",
    [
        "import workbench.govern.policy",
        "import workbench.trace.errors",
        "import workbench.context.spill",
        "from workbench.estimate.constants import STRATEGIES",
        "import workbench.loop.errors",
        "import workbench.charts.display",
    ],
)
def test_a_light_submodule_imports_without_its_package(statement: str) -> None:
    assert _imported(statement, ("pydantic", "pandas", "numpy", "scipy", "matplotlib", "httpx")) == []


def test_a_facade_name_imports_its_module_on_first_use() -> None:
    statement = "from workbench.govern import Policy\nassert Policy.__module__ == 'workbench.govern.policy'"
    assert _imported(statement, ("workbench.govern.governor", "pydantic")) == []
