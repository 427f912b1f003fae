"""Columns from specs: each frame's names and dtypes are its spec's; event kinds write the strings they were."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.trace.test_frames import corpus
from workbench.scale import load
from workbench.trace import calls_df, events_df, read_run, runs_df, turns_df, write_run
from workbench.trace.columns import FRAMES, dtypes, names
from workbench.trace.schema import Event, EventKind

ROOT = Path(__file__).resolve().parents[2]
BUILD = {"runs_df": runs_df, "turns_df": turns_df, "calls_df": calls_df, "events_df": events_df}


def _dtype(frame: pd.DataFrame, name: str) -> str:
    dtype = frame[name].dtype
    return "datetime" if str(dtype) == "datetime64[ns, UTC]" else str(dtype)


@pytest.mark.parametrize("key", sorted(FRAMES))
def test_a_frame_has_its_specs_columns_and_dtypes(key: str) -> None:
    for runs in (corpus(), []):
        frame = BUILD[key](runs)
        assert tuple(frame.columns) == names(FRAMES[key])
        assert {c: _dtype(frame, c) for c in frame.columns} == dtypes(FRAMES[key])


def test_every_frame_over_the_real_traces_is_typed_by_its_spec(shared: Path) -> None:
    runs = load(shared)
    for key, build in BUILD.items():
        frame = build(runs)
        assert {c: _dtype(frame, c) for c in frame.columns} == dtypes(FRAMES[key]), key


def test_turns_carry_the_route_the_docs_promise(shared: Path) -> None:
    # the route was computed for the price but dropped by the hand-kept dtype dict; the spec keeps it
    turns = turns_df(load(shared / "openhands")).set_index("run_id")
    ponyc = turns.loc["ponylang__ponyc-4588"]
    assert set(ponyc["route"]) == {"unknown via openrouter"}
    assert set(turns["route_basis"].dropna()) <= {"recorded", "inferred"}


def test_event_kinds_are_the_strings_they_were(tmp_path: Path) -> None:
    # a StrEnum kind is stored as its plain string: a trace written with the enum is the one written with the word
    run = corpus().runs[1]
    words = run.model_copy(update={"events": [Event(turn=0, kind="compaction", data={"pre_tokens": 1234})]})
    enums = run.model_copy(
        update={"events": [Event(turn=0, kind=EventKind.COMPACTION, data={"pre_tokens": 1234})]}
    )
    assert type(enums.events[0].kind) is str
    a, b = write_run(words, tmp_path / "a.jsonl"), write_run(enums, tmp_path / "b.jsonl")
    assert a.read_bytes() == b.read_bytes()


def test_the_bundled_native_traces_read_and_write_back_unchanged(tmp_path: Path) -> None:
    files = sorted((ROOT / "traces" / "synthetic").glob("*.jsonl"))
    assert len(files) > 10
    for k, path in enumerate(files):
        again = write_run(read_run(path), tmp_path / f"{k}.jsonl")
        assert again.read_bytes() == path.read_bytes(), path.name


def test_cut_by_limit_is_the_limit_stops_and_nothing_else() -> None:
    from workbench.govern.verdict import StopReason
    from workbench.trace.schema import LimitStop, Outcome

    assert {s for s in LimitStop} == {"budget", "turn-cap", "deadline", "max-iterations", "max-budget"}
    for stop in [*LimitStop, *StopReason, "end-of-recording", None]:
        assert Outcome(stop_reason=stop).cut_by_limit == (stop in set(LimitStop)), stop


def test_the_parts_of_a_run_nothing_edits_refuse_assignment() -> None:
    from pydantic import ValidationError

    from workbench.trace.schema import Meter, RecordedPolicy, Route, Segment, ToolCall, ToolResult

    for part, name in (
        (ToolCall(name="bash"), "arguments"),
        (ToolResult.of("ok"), "content"),
        (Event(kind=EventKind.PRUNE), "kind"),
        (Meter(name="cost"), "reached"),
        (RecordedPolicy(grant=1), "grant"),
        (Segment(index=0, start=0, stop=1), "stop"),
        (Route(provider="openai"), "via"),
    ):
        with pytest.raises(ValidationError, match="frozen"):
            setattr(part, name, None)
        assert getattr(part.model_copy(update={name: None}), name) is None  # an edited copy is the way
