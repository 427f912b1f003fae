"""The native format as an importer, so detection treats it like any other source."""

from __future__ import annotations

from pathlib import Path

from workbench.importers._common import head_value
from workbench.importers.contract import declare, recorded
from workbench.trace.native import read_run
from workbench.trace.schema import SCHEMA_NAME, Run

NAME = "native"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)
VERSION = "1"

FACTS = declare(
    mutated=recorded("Turn.mutated as written, Turn.mutated_rule when inferred, None unknown"),
    new_info=recorded("ToolResult content or sha256"),
    tool_error=recorded("ToolResult.is_error"),
    tool_timeout=recorded("ToolResult.timed_out"),
    ending=recorded("Turn.format_error; a reply without calls is final"),
    tool_usage=recorded("ToolResult.usage, tool-spend events"),
    cache_read=recorded("Usage.cached (None unknown)"),
    cache_write=recorded("Usage.cache_write (None unknown)"),
    route=recorded("Run.metadata as written"),
)


def sniff(path: Path, head: list[bytes]) -> bool:
    first = head_value(head, 0) if head else None
    return isinstance(first, dict) and first.get("schema") == SCHEMA_NAME


def load(path: Path) -> list[Run]:
    return [read_run(path)]
