"""DataFrame views: one row per run / model call / tool call / event, typed columns, Parquet round trip."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.samples.lines import small_run
from workbench.scale import load
from workbench.trace import Event, calls_df, events_df, run_summary, runs_df, to_parquet, turns_df
from workbench.trace.corpus import Corpus


def corpus() -> Corpus:
    a = small_run()
    b = small_run().model_copy(update={"run_id": "r2", "source": "claude-code"})
    b.turns = [t.model_copy(update={"usage": t.usage.model_copy(update={"cached": None})}) for t in b.turns]
    b.events = [Event(turn=0, kind="compaction", reason="auto", data={"pre_tokens": 1234, "trigger": "auto"})]
    return Corpus(runs=[a, b])


def test_rows_and_typed_columns() -> None:
    c = corpus()
    runs, turns, calls, events = runs_df(c), turns_df(c), calls_df(c), events_df(c)
    assert (len(runs), len(turns), len(calls), len(events)) == (2, 4, 2, 1)
    assert str(runs["prompt_tokens"].dtype) == "Int64"
    assert str(turns["cached_tokens"].dtype) == "Int64"
    assert str(turns["mutated"].dtype) == "boolean"
    assert isinstance(runs["source"].dtype, pd.CategoricalDtype)
    # unknown stays unknown: the second run's cache reads were never reported
    assert runs.set_index("run_id").loc["r2", "cached_tokens"] is pd.NA
    assert runs.set_index("run_id").loc["r1", "cached_tokens"] == 10
    assert list(runs["prompt_tokens"]) == [30, 30]
    assert calls.loc[0, "name"] == "sh" and bool(calls.loc[0, "has_result"])
    assert events.loc[0, "pre_tokens"] == 1234


def test_parquet_round_trip(tmp_path: Path) -> None:
    paths = to_parquet(corpus(), tmp_path / "pq")
    assert set(paths) == {"runs", "turns", "calls", "events"}
    turns = pd.read_parquet(paths["turns"])
    assert str(turns["prompt_tokens"].dtype) == "Int64"
    assert list(turns["prompt_tokens"]) == [10, 20, 10, 20]


def test_summary_and_reprs() -> None:
    c = corpus()
    s = run_summary(c.runs[1])
    assert (s["calls"], s["prompt_tokens"], s["cached_tokens"], s["events"]) == (2, 30, None, "compaction x1")
    assert "r2" in c._repr_html_() and "<table" in c._repr_html_()
    assert "Run r1" in c.runs[0]._repr_html_()


def test_frames_over_the_real_traces(shared: Path) -> None:
    c = load(shared)
    runs = runs_df(c).set_index("run_id")
    assert runs["turns"].sum() == len(turns_df(c)) == sum(len(r.turns) for r in c)
    assert runs.loc["ponylang__ponyc-4588", "stop_reason"] == "max-iterations"
    compactions = events_df(c).query("kind == 'compaction'")
    assert sorted(compactions["pre_tokens"]) == [142431, 167094, 167117, 167731, 170251]
    assert len(calls_df(c)) == sum(len(t.tool_calls) for r in c for t in r.turns)


def test_corpus_children_are_the_subagents_and_compactions(shared: Path) -> None:
    c = load(shared / "claude-code")
    kids = c.children("fa812bfe-b295-4cca-9c2f-fdf01028cb46")
    assert sorted((k.role, k.run_id.split("/")[1]) for k in kids) == [
        ("compaction", "agent-acompact-70d8e7"),
        ("subagent", "agent-a93ccab"),
        ("subagent", "agent-aa84377"),
    ]
