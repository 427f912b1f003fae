"""Traces: the schema, the native JSONL format, the corpus and DataFrame views (loading: ``workbench.scale``)."""

from typing import TYPE_CHECKING

from workbench._lazy import attach

# imported on first use (workbench/_lazy.py): the DataFrame views need pandas, the schema pydantic
if TYPE_CHECKING:
    from workbench.trace.corpus import Corpus, discover
    from workbench.trace.errors import TraceError, UnknownFormatError
    from workbench.trace.frames import calls_df, events_df, run_summary, runs_df, to_parquet, turns_df
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

__getattr__, __dir__ = attach(__name__, __file__)

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
