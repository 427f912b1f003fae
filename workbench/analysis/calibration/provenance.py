"""A constant's provenance, read from the one comment on its own assignment line in its home module.

Every seed constant lives in one place with a one-line provenance comment (``LANDING_TURNS = 4  # seed 001
linear.go landingTurns``, or the comment block right above it). The calibration table quotes that comment rather than restating it, so the two can
never drift.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import tokenize
from dataclasses import dataclass
from functools import cache
from typing import Any


@dataclass(frozen=True)
class ConstantRef:
    """A constant by its home: ``module`` and ``name``; ``value`` and ``provenance`` are read from the source."""

    module: str
    name: str

    @property
    def path(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def value(self) -> Any:
        return getattr(importlib.import_module(self.module), self.name)

    @property
    def provenance(self) -> str:
        return provenance_of(self.module, self.name)


@cache
def _comments(module: str) -> dict[str, str]:
    source = inspect.getsource(importlib.import_module(module))
    spans: dict[str, tuple[int, int]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Name):
                    spans[t.id] = (node.lineno, node.end_lineno or node.lineno)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments.setdefault(tok.start[0], tok.string.lstrip("#").strip())
    out: dict[str, str] = {}
    for name, (first, last) in spans.items():
        found = [comments[i] for i in range(first, last + 1) if i in comments]
        if not found:  # the comment block directly above (estimate/constants.py's style)
            above = first - 1
            while above in comments:
                found.insert(0, comments[above])
                above -= 1
        if found:
            out[name] = " ".join(found)
    return out


def provenance_of(module: str, name: str) -> str:
    """The comment on ``name``'s assignment in ``module`` (every line of a wrapped assignment, else the comment
    block directly above it); raises
    ``LookupError`` when the constant has none — a seed constant without provenance is a defect to fix at home."""
    found = _comments(module).get(name)
    if found is None:
        raise LookupError(f"{module}.{name} has no provenance comment on its assignment")
    return found
