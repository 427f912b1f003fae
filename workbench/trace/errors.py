"""Errors raised when a trace cannot be read at all (a bad line is a Diagnostic, not an error)."""

from __future__ import annotations


class TraceError(Exception):
    """A file could not be read as a trace at all. Names the file, and the line and field when known."""

    def __init__(self, file: str, message: str, *, line: int | None = None, field: str | None = None) -> None:
        self.file = file
        self.line = line
        self.field = field
        self.message = message
        where = file if line is None else f"{file}:{line}"
        what = f"{field}: {message}" if field else message
        super().__init__(f"{where}: {what}")


class UnknownFormatError(TraceError):
    """No importer recognises the file."""


UNRECOGNISED = "unrecognised format: no importer recognises this file"
"""Why a readable file in no supported format is not loaded (the formats: ``workbench.importers.importers()``)."""
