"""Traces: the schema, the native JSONL format, the corpus and DataFrame views (loading: ``workbench.scale``)."""

from workbench.trace.corpus import Corpus, discover
from workbench.trace.errors import TraceError, UnknownFormatError
from workbench.trace.native import TraceWriter, read_run, write_run
from workbench.trace.schema import (
    SCHEMA_VERSION,
    Diagnostic,
    Event,
    Message,
    Meter,
    Outcome,
    RecordedPolicy,
    Run,
    Segment,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)

_FRAMES = frozenset({"calls_df", "events_df", "run_summary", "runs_df", "to_parquet", "turns_df"})


def __getattr__(name: str) -> object:
    # The DataFrame views need pandas; the schema, the reader and the governors that use them do not.
    if name in _FRAMES:
        from workbench.trace import frames

        return getattr(frames, name)
    raise AttributeError(f"module 'workbench.trace' has no attribute {name!r}")


__all__ = [
    "SCHEMA_VERSION",
    "Corpus",
    "Diagnostic",
    "Event",
    "Message",
    "Meter",
    "Outcome",
    "RecordedPolicy",
    "Run",
    "Segment",
    "ToolCall",
    "ToolResult",
    "TraceError",
    "TraceWriter",
    "Turn",
    "UnknownFormatError",
    "Usage",
    "calls_df",
    "discover",
    "events_df",
    "read_run",
    "run_summary",
    "runs_df",
    "to_parquet",
    "turns_df",
    "write_run",
]
