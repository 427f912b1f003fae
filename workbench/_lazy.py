"""Light package facades: a package's ``__init__`` names what it exports once, as imports under
``if TYPE_CHECKING:`` (what type checkers, ruff and tests/package's import graph read), and ends with
``__getattr__, __dir__ = attach(__name__, __file__)``. Each name is imported from its module on first use, so
importing one light submodule (``workbench.govern.policy``, ``workbench.trace.errors``) no longer imports the
whole package, and ``from workbench.govern import Policy`` works as before.

A lazy name must not also be a submodule's name (the import system binds a submodule on its package, which
would then shadow the function); tests/package/test_lazy_facades.py holds that.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def exports_of(package: str, file: str) -> dict[str, tuple[str, str]]:
    """``{exported name: (module, attribute)}`` from the ``if TYPE_CHECKING:`` imports of ``file``."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(Path(file).read_text(encoding="utf-8")).body:
        if not (isinstance(node, ast.If) and _is_type_checking(node.test)):
            continue
        for statement in node.body:
            if not isinstance(statement, ast.ImportFrom):
                continue
            module = statement.module or ""
            if statement.level:
                base = package.split(".")[: len(package.split(".")) - statement.level + 1]
                module = ".".join([*base, module] if module else base)
            for alias in statement.names:
                found[alias.asname or alias.name] = (module, alias.name)
    return found


def attach(package: str, file: str) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a lazy package (PEP 562)."""
    table = cache(lambda: exports_of(package, file))

    def __getattr__(name: str) -> object:
        target = table().get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target[0]), target[1])
        setattr(sys.modules[package], name, value)  # later look-ups are plain attribute reads
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(table()))

    return __getattr__, __dir__
