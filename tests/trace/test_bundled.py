"""The bundled traces/ load cleanly (so `workbench inspect` works on a fresh clone); the OpenAI-style log
example in examples/ imports as documented."""

from __future__ import annotations

from workbench.importers import openai_log
from workbench.paths import REPO_ROOT, bundled_traces
from workbench.scale import load
from workbench.trace import read_run, write_run


def test_bundled_traces_load_without_problems(tmp_path) -> None:  # type: ignore[no-untyped-def]
    corpus = load(bundled_traces())
    assert corpus.problems == ()
    assert len(corpus) >= 1
    for run in corpus:
        assert run.diagnostics == [], run.run_id
        assert run.turns, run.run_id
        again = read_run(write_run(run, tmp_path / "x.jsonl"))
        assert again.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"})


def test_the_openai_log_example() -> None:
    (run,) = openai_log.load(REPO_ROOT / "examples" / "openai-log.jsonl")
    assert [len(t.tool_calls) for t in run.turns] == [1, 1, 2, 0]
    assert [len(t.tool_results) for t in run.turns] == [1, 1, 2, 0]
    assert (run.total("prompt"), run.total("cached"), run.total("completion")) == (1248, 256, 160)
    assert len(run.messages) == 10  # every distinct message once: 9 sent by the last request + its answer
    assert run.outcome.stop_reason == "done"
