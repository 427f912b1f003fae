"""Importers: one module per foreign format, each mapping its format into the native schema.

Every importer module exposes:

* ``NAME`` (the ``Run.source`` it produces) and ``VERSION``;
* ``sniff(path: Path, head: list[bytes]) -> bool`` — does this file look like mine? (``head`` is the first
  few non-blank lines, raw);
* ``load(path: Path) -> list[Run]`` — the runs in the file, each with ``lossy`` notes for what could not be
  mapped and ``diagnostics`` for lines that could not be read.

:func:`detect` picks the importer for a file; :func:`workbench.trace.load` uses it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from workbench.trace.errors import UnknownFormatError

# Order matters: the first importer whose sniff() says yes wins. Native first (it is unambiguous).
IMPORTER_MODULES: tuple[str, ...] = (
    "workbench.importers.native",
    "workbench.importers.claude_code",
    "workbench.importers.openhands",
    "workbench.importers.codex_cli",
    "workbench.importers.minisweagent",
    "workbench.importers.openai_log",
)

HEAD_LINES = 8


def importers() -> list[ModuleType]:
    """The importer modules that are installed, in detection order."""
    found = []
    for name in IMPORTER_MODULES:
        try:
            found.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return found


def read_head(path: Path, n: int = HEAD_LINES, max_bytes: int = 4 << 20) -> list[bytes]:
    """The first ``n`` non-blank lines of a file (at most ``max_bytes`` read)."""
    head: list[bytes] = []
    read = 0
    with open(path, "rb") as fh:
        for raw in fh:
            read += len(raw)
            if raw.strip():
                head.append(raw)
            if len(head) >= n or read > max_bytes:
                break
    return head


def detect(path: Path) -> ModuleType:
    """The importer module for ``path``; raises :class:`UnknownFormatError` when none recognises it."""
    head = read_head(path)
    for module in importers():
        if module.sniff(path, head):
            return module
    raise UnknownFormatError(
        str(path),
        "no importer recognises this file (native, Claude Code, OpenHands, "
        "Codex CLI or OpenAI-style request/response log)",
    )
