"""Importers: one module per foreign format, each mapping its format into the native schema.

Every importer module exposes:

* ``NAME`` (the ``Run.source`` it produces) and ``VERSION``;
* ``sniff(path: Path, head: list[bytes]) -> bool`` — does this file look like mine? (``head`` is the first
  few non-blank lines, raw; importers of whole-document formats read a bounded prefix with
  :func:`workbench.importers._common.read_prefix`, and of zip files their member names);
* ``load(path: Path) -> list[Run]`` — the runs in the file, each with ``lossy`` notes for what could not be
  mapped and ``diagnostics`` for lines that could not be read.

:func:`detect` picks the importer for a file; :func:`workbench.trace.load` uses it.
"""

from __future__ import annotations

import importlib
import os
import stat
from pathlib import Path
from types import ModuleType

from workbench.trace.errors import TraceError, UnknownFormatError
from workbench.trace.walk import kind_of

# Order matters: the first importer whose sniff() says yes wins. Native first (it is unambiguous).
IMPORTER_MODULES: tuple[str, ...] = (
    "workbench.importers.native",
    "workbench.importers.claude_code",
    "workbench.importers.openhands",
    "workbench.importers.codex_cli",
    "workbench.importers.minisweagent",
    "workbench.importers.swe_agent",
    "workbench.importers.inspect_ai",
    "workbench.importers.aider",
    "workbench.importers.gemini_cli",
    "workbench.importers.otel_genai",
    "workbench.importers.openai_log",
)

HEAD_LINES = 8

UNRECOGNISED = "unrecognised format: no importer recognises this file"
"""Why a file in no supported format is not loaded (the formats: ``importers()``, README, docs/importers/)."""


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
    """The first ``n`` non-blank lines of a file (at most ``max_bytes`` read, so a binary file or one huge line
    is never read whole)."""
    head: list[bytes] = []
    read = 0
    with open(path, "rb") as fh:
        while len(head) < n and read <= max_bytes:
            raw = fh.readline(max_bytes - read + 1)
            if not raw:
                break
            read += len(raw)
            if raw.strip():
                head.append(raw)
    return head


def detect(path: Path) -> ModuleType:
    """The importer module for ``path``, chosen by content; raises :class:`UnknownFormatError` when none
    recognises it (and :class:`TraceError` for what is not a regular file: nothing else is ever opened)."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise TraceError(str(path), f"not read: {kind_of(st.st_mode)}")
    if st.st_size == 0:
        raise UnknownFormatError(str(path), "empty file")
    head = read_head(path)
    found = importers()
    for module in found:
        if module.sniff(path, head):
            return module
    raise UnknownFormatError(str(path), UNRECOGNISED)
