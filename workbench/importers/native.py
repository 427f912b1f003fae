"""The native format as an importer, so detection treats it like any other source."""

from __future__ import annotations

from pathlib import Path

from workbench.trace.native import is_native, read_run
from workbench.trace.schema import Run

NAME = "native"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.trace.cache)
VERSION = "1"


def sniff(path: Path, head: list[bytes]) -> bool:
    return bool(head) and is_native(head[0])


def load(path: Path) -> list[Run]:
    return [read_run(path)]
