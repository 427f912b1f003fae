"""No module of the workbench imports, directly or through others, a module that imports it back — at the top,
inside a function or under TYPE_CHECKING alike (issue 13: govern/policy and the rule modules, trace/schema and
frames, trace/corpus and frames did). Constants and views live below what uses them."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "workbench"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> nx.DiGraph:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != name:
                    graph.add_edge(name, target)
    return graph


def test_the_graph_is_read() -> None:
    graph = import_graph()
    assert graph.has_edge("workbench.govern.policy", "workbench.govern.noprogress")
    assert graph.has_edge("workbench.trace.frames", "workbench.trace.schema")


def test_no_import_cycles() -> None:
    cycles = [sorted(c) for c in nx.strongly_connected_components(import_graph()) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize(
    ("low", "high"),
    [
        ("workbench.govern.noprogress", "workbench.govern.policy"),
        ("workbench.trace.schema", "workbench.trace.frames"),
        ("workbench.trace.frames", "workbench.trace.corpus"),
    ],
)
def test_the_named_cycles_are_gone(low: str, high: str) -> None:
    assert not nx.has_path(import_graph(), low, high)
