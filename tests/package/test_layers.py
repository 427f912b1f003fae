"""Every import of the workbench points to its own layer or a lower one: the layer table of docs/architecture.md,
read from the page, row by row (the first row lowest). Imports at the top, inside functions and under
TYPE_CHECKING count alike (issue 24: ``workbench.trace`` imported the governor and the replay inside functions)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "workbench"
PAGE = ROOT / "docs" / "architecture.md"


def layers() -> dict[str, int]:
    """Each package (or top-level module) named in the page's layer table -> its row, 0 the lowest."""
    text = PAGE.read_text(encoding="utf-8")
    table = text[text.index("| package | owns | never |") :].split("\n\n", 1)[0]
    rows = [line for line in table.splitlines()[2:] if line.startswith("|")]
    out: dict[str, int] = {}
    for rank, row in enumerate(rows):
        for name in re.findall(r"`(workbench(?:\.\w+)?)`", row.split("|")[1]):
            out[name] = rank
    return out


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> list[tuple[int, str]]:
    """Every workbench module ``path`` imports (line, dotted name), wherever the import statement is."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            # ``from workbench import labels`` imports the module workbench.labels
            out += [(node.lineno, _submodule(base, a.name)) for a in node.names]
    return [
        (line, target) for line, target in out if target == "workbench" or target.startswith("workbench.")
    ]


def _submodule(base: str, name: str) -> str:
    dotted = f"{base}.{name}"
    where = ROOT.joinpath(*dotted.split("."))
    return dotted if where.with_suffix(".py").is_file() or (where / "__init__.py").is_file() else base


def layer_of(name: str, table: dict[str, int]) -> int | None:
    """The row of a dotted module name: its top package's (``workbench.trace.schema`` -> ``workbench.trace``)."""
    top = ".".join(name.split(".")[:2])
    return table.get(top)


def test_the_table_is_read() -> None:
    table = layers()
    assert table["workbench.format"] == 0
    assert table["workbench.trace"] < table["workbench.importers"] < table["workbench.govern"]
    assert (
        table["workbench.replay"]
        < table["workbench.scale"]
        < table["workbench.report"]
        < table["workbench.cli"]
    )


def test_every_module_is_in_the_table() -> None:
    table = layers()
    missing = sorted(
        {module_name(p) for p in PACKAGE.rglob("*.py") if layer_of(module_name(p), table) is None}
    )
    assert missing == []


def test_no_import_points_to_a_higher_layer() -> None:
    table = layers()
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = layer_of(module_name(path), table)
        assert own is not None, path
        for line, target in imported(path):
            if (
                target == "workbench"
            ):  # the package root: ``__version__``, and the facade, which imports on use
                continue
            theirs = layer_of(target, table)
            if theirs is None:
                found.append(
                    f"{path.relative_to(ROOT)}:{line} imports {target}, which the table does not place"
                )
            elif theirs > own:
                found.append(
                    f"{path.relative_to(ROOT)}:{line} imports {target} (row {theirs} above row {own})"
                )
    assert found == []


def test_an_import_inside_a_function_is_read(tmp_path: Path) -> None:
    """The reader sees what the rule is about: imports in functions and under TYPE_CHECKING, relative ones too."""
    src = tmp_path / "mod.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from workbench.govern.policy import Policy\n"
        "def f():\n    import workbench.replay.fast\n"
    )
    lines = [(line, target) for line, target in _imports_of_text(src.read_text())]
    assert lines == [(3, "workbench.govern.policy"), (5, "workbench.replay.fast")]


def _imports_of_text(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.append((node.lineno, node.module))
    return sorted(t for t in out if t[1].startswith("workbench."))
