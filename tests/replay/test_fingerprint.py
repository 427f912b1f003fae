"""Content fingerprints (workbench.trace.fingerprint): the fingerprint ignores only what names a run, differs when
anything a replay, bill, price or chart reads differs, and a copy's sweep rows are its original's."""

from __future__ import annotations

import math
import pickle
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.scale.sweep import sweep
from workbench.scenarios.seed import mixed_corpus, mixed_run
from workbench.trace.fingerprint import fingerprint
from workbench.trace.schema import Diagnostic, Event, Message, Run, ToolCall, Turn, Usage

GRID = {"grant": [60_000, 150_000, 400_000], "max_turns": [25, 400]}


def copy_of(run: Run, k: int = 2) -> Run:
    """A copy as a second file gives it: new objects, equal content, renamed as workbench.trace.identity does."""
    twin = pickle.loads(pickle.dumps(run))
    return twin.model_copy(
        update={
            "run_id": f"{run.run_id}~{k}",
            "source_file": f"/elsewhere/copy{k}/{run.run_id}.jsonl",
            "loaded_from": f"/elsewhere/copy{k}/{run.run_id}.jsonl",
            "parent_run_id": None if run.parent_run_id is None else f"{run.parent_run_id}~{k}",
        }
    )


def _base() -> Run:
    run = mixed_run(3, max_turns=12)
    turns = [
        t.model_copy(update={"started_at": datetime(2026, 1, 1, 12, i, tzinfo=UTC)})
        for i, t in enumerate(run.turns)
    ]
    return run.model_copy(
        update={
            "turns": turns,
            "metadata": {**run.metadata, "flag": 1, "pair": [1, 2]},
            "events": [Event(turn=0, kind="prune", data={"pre_tokens": 100})],
            "messages": [*run.messages, Message(role="user", content="hello")],
        }
    )


def test_identity_fields_are_ignored() -> None:
    run = _base()
    renamed = copy_of(run)
    assert fingerprint(renamed) == fingerprint(run)
    # where a diagnostic was met, and which session a segment was cut from, name the run only
    located = run.model_copy(update={"diagnostics": [Diagnostic(file="/a/x.jsonl", line=3, message="odd")]})
    moved = located.model_copy(update={"diagnostics": [Diagnostic(file="/b/x.jsonl", line=3, message="odd")]})
    assert fingerprint(located) == fingerprint(moved)
    seg = run.model_copy(update={"metadata": {**run.metadata, "segment_of": "s1", "segment": 0}})
    seg_copy = run.model_copy(update={"metadata": {**run.metadata, "segment_of": "s1~2", "segment": 0}})
    assert fingerprint(seg) == fingerprint(seg_copy)
    # ... but the diagnostic's words and the segment's index are content
    assert fingerprint(located) != fingerprint(
        located.model_copy(update={"diagnostics": [Diagnostic(file="/a/x.jsonl", line=4, message="odd")]})
    )
    assert fingerprint(seg) != fingerprint(
        seg.model_copy(update={"metadata": {**seg.metadata, "segment": 1}})
    )


def _set_turn(run: Run, i: int, **kw: object) -> Run:
    turns = list(run.turns)
    turns[i] = turns[i].model_copy(update=kw)
    return run.model_copy(update={"turns": turns})


def _set_usage(run: Run, i: int, **kw: object) -> Run:
    return _set_turn(run, i, usage=run.turns[i].usage.model_copy(update=kw))


def _set_message(run: Run, i: int, **kw: object) -> Run:
    msgs = list(run.messages)
    msgs[i] = msgs[i].model_copy(update=kw)
    return run.model_copy(update={"messages": msgs})


Edit = Callable[[Run, st.DataObject], Run]

# Every edit changes something a replay, bill, price or chart can read; None / NaN / inf, 1 / 1.0 / True, a list
# against a tuple and a datetime's offset are told apart.
EDITS: dict[str, Edit] = {
    "usage": lambda r, d: _set_usage(
        r,
        d.draw(st.integers(0, len(r.turns) - 1)),
        **{
            d.draw(st.sampled_from(["prompt", "cached", "cache_write", "completion", "reasoning"])): d.draw(
                st.integers(10**7, 10**8)
            )
        },
    ),
    "usage unknown": lambda r, d: _set_usage(r, d.draw(st.integers(0, len(r.turns) - 1)), prompt=None),
    "cost": lambda r, d: _set_usage(
        r, 0, cost=d.draw(st.sampled_from([math.nan, math.inf, -0.0, 0.25, 1e-300]))
    ),
    "message text": lambda r, d: _set_message(
        r, d.draw(st.integers(0, len(r.messages) - 1)), content=d.draw(st.text(min_size=1)) + "\x00"
    ),
    "message role": lambda r, d: _set_message(r, len(r.messages) - 1, role="system"),
    "message kind": lambda r, d: _set_message(r, len(r.messages) - 1, kind="wrapup"),
    "tool call": lambda r, d: _set_turn(
        r, d.draw(st.integers(0, len(r.turns) - 1)), tool_calls=[ToolCall(name="bash", arguments="ls -x")]
    ),
    "sent": lambda r, d: _set_turn(r, d.draw(st.integers(0, len(r.turns) - 1)), sent=[(0, 1), (1, 1)]),
    "finish": lambda r, d: _set_turn(r, len(r.turns) - 1, finish_reason="an odd finish"),
    "mutated": lambda r, d: _set_turn(
        r, 0, mutated={None: True, True: False, False: None}[r.turns[0].mutated]
    ),
    "offset": lambda r, d: _set_turn(
        r,
        0,
        started_at=r.turns[0].started_at.astimezone(timezone(timedelta(hours=d.draw(st.integers(1, 12))))),
    ),
    "model": lambda r, d: r.model_copy(update={"model": "claude-sonnet-4-5"}),
    "source": lambda r, d: r.model_copy(update={"source": "openhands"}),
    "role": lambda r, d: r.model_copy(update={"role": "subagent"}),
    "context length": lambda r, d: r.model_copy(
        update={"context_length": d.draw(st.integers(1, 10**6).filter(lambda v: v != r.context_length))}
    ),
    "outcome": lambda r, d: r.model_copy(
        update={
            "outcome": r.outcome.model_copy(
                update={
                    "label": d.draw(
                        st.sampled_from(["resolved", "no", None]).filter(lambda v: v != r.outcome.label)
                    )
                }
            )
        }
    ),
    "metadata type": lambda r, d: r.model_copy(
        update={"metadata": {**r.metadata, "flag": d.draw(st.sampled_from([1.0, True, "1", None]))}}
    ),
    "metadata list": lambda r, d: r.model_copy(update={"metadata": {**r.metadata, "pair": (1, 2)}}),
    "event": lambda r, d: r.model_copy(
        update={
            "events": [
                Event(turn=0, kind="prune", data={"pre_tokens": d.draw(st.sampled_from([100.0, 101]))})
            ]
        }
    ),
    "turns dropped": lambda r, d: r.model_copy(update={"turns": r.turns[:-1]}),
    "recorded cost": lambda r, d: r.model_copy(
        update={"recorded_cost_usd": d.draw(st.sampled_from([math.nan, 0.0]))}
    ),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(sorted(EDITS)), data=st.data())
def test_any_content_edit_changes_the_fingerprint(name: str, data: st.DataObject) -> None:
    base = _base()
    edited = EDITS[name](base, data)
    assert fingerprint(edited) != fingerprint(base), name
    # ... whatever the copy is called
    assert fingerprint(copy_of(edited)) == fingerprint(edited)


def test_a_remembered_print_never_goes_stale() -> None:
    """A read-only run's fingerprint is kept with it; an edited copy is another object, fingerprinted afresh, and
    an editable run is never remembered (it could change)."""
    from workbench.trace import fingerprint as fingerprints
    from workbench.trace.corpus import Corpus

    run = Corpus([_base()]).runs[0]
    first = fingerprint(run)
    assert fingerprints._KNOWN[id(run)] == first == fingerprints._fingerprint(run)
    edited = run.model_copy(update={"model": "other"})
    assert fingerprint(edited) == fingerprints._fingerprint(edited) != first
    assert id(edited) not in fingerprints._KNOWN


def test_a_copy_s_sweep_rows_are_its_original_s() -> None:
    runs = mixed_corpus(10, seed=4, max_turns=40)
    corpus = [*runs, *(copy_of(r) for r in runs[:6]), *(copy_of(r, 3) for r in runs[:2])]
    swept = sweep(corpus, GRID, progress=False)
    one = swept[swept["run_id"] == runs[1].run_id].drop(columns="run_id").reset_index(drop=True)
    two = swept[swept["run_id"] == f"{runs[1].run_id}~2"].drop(columns="run_id").reset_index(drop=True)
    pd.testing.assert_frame_equal(one, two, check_exact=True)
    assert np.array_equal(
        swept["run_id"].to_numpy(), np.repeat([r.run_id for r in corpus], len(swept) // len(corpus))
    )


def test_segments_of_copies_fingerprint_alike() -> None:
    # a session's segments are cut per copy; each names its own session, and still answers as the original's
    run = _base()
    n = len(run.turns)
    session = run.model_copy(
        update={"segments": [_seg(0, 0, n // 2), _seg(1, n // 2, n)], "run_id": "session"}
    )
    twin = copy_of(session)
    prints = [fingerprint(leaf) for leaf in [*session.leaves(), *twin.leaves()]]
    assert prints[:2] == prints[2:] and prints[0] != prints[1]
    swept = sweep([session, twin], GRID, progress=False)
    assert set(swept["run_id"]) == {"session#s0", "session#s1", "session~2#s0", "session~2#s1"}
    half = len(swept) // 2
    pd.testing.assert_frame_equal(
        swept.iloc[:half].drop(columns="run_id").reset_index(drop=True),
        swept.iloc[half:].drop(columns="run_id").reset_index(drop=True),
        check_exact=True,
    )


def _seg(i: int, start: int, stop: int):  # type: ignore[no-untyped-def]
    from workbench.trace.schema import Segment

    return Segment(index=i, start=start, stop=stop, prompt=f"prompt {i}")


def test_turn_and_usage_types_are_pydantic() -> None:
    # the edits above build through the schema's own models: a typo there would silently test nothing
    assert isinstance(_base().turns[0], Turn) and isinstance(_base().turns[0].usage, Usage)
