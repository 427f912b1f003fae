"""Importers: one module per foreign format, each an :class:`~workbench.importers.transcript.Importer` mapping its
format into the native schema (``load`` says what it loses in ``lossy``, what it could not read in
``diagnostics``). :func:`detect` picks the importer for a file; :func:`workbench.trace.load` uses it."""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

from workbench.trace.errors import UNRECOGNISED, TraceError, UnknownFormatError
from workbench.trace.walk import kind_of

if TYPE_CHECKING:
    from workbench.importers.transcript import Importer

# Order matters: the first importer whose sniff() says yes wins. Native first (it is unambiguous).
IMPORTER_MODULES: tuple[str, ...] = (
    "workbench.importers.native",
    "workbench.importers.claude_code",
    "workbench.importers.openhands_conversation",
    "workbench.importers.openhands",
    "workbench.importers.openhands_trajectory",
    "workbench.importers.openhands_completions",
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
# Issue 21: a format's structural signature may sit anywhere in a bounded head (an Aider history's first
# "# aider chat started at" after an editor mode line or pre-commit output): up to 200 lines or 64 KiB, and never
# fewer than HEAD_LINES lines (a JSONL whose first lines are long keeps the head it always had).
HEAD_MAX_LINES = 200
HEAD_SOFT_BYTES = 64 << 10


def importers() -> list[Importer]:
    """The importer modules that are installed, in detection order."""
    found = []
    for name in IMPORTER_MODULES:
        try:
            found.append(cast("Importer", importlib.import_module(name)))
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
    return found


def read_head(path: Path, n: int = HEAD_MAX_LINES, max_bytes: int = 4 << 20) -> list[bytes]:
    """The first non-blank lines of a file: up to ``n``, and past ``HEAD_LINES`` no more than about 64 KiB
    (about ``max_bytes`` read at most, however long its lines).
    Raises :class:`~workbench.trace.errors.TraceError` for what is not a readable regular file: a FIFO, a
    device, a dangling or looping link, a file without read permission."""
    from workbench.trace.limits import head_lines

    return head_lines(path, n, max_bytes, floor=HEAD_LINES, soft_bytes=HEAD_SOFT_BYTES)


def detect(path: Path) -> Importer:
    """The importer module for ``path``, chosen by content; raises :class:`UnknownFormatError` when none
    recognises it, and :class:`TraceError` for what is not a readable regular file (nothing else is opened). A
    folder that is one run (an OpenHands V1 conversation) sniffs by its files."""
    from workbench.importers._common import Head

    if path.is_dir():
        head = Head(())
    else:
        st = os.stat(path)
        reason = kind_of(st.st_mode)
        if reason is not None:
            raise TraceError(str(path), reason)
        if st.st_size == 0:
            raise UnknownFormatError(str(path), "empty file")
        head = Head(read_head(path))
    for module in importers():
        if module.sniff(path, head):
            return module
    raise UnknownFormatError(str(path), UNRECOGNISED)
