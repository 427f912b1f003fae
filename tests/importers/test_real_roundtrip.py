"""Every real run: import -> write -> read -> write is byte-identical, and reading gives the same run."""

from __future__ import annotations

from pathlib import Path

from workbench.scale import load
from workbench.trace import read_run, write_run


def test_every_shared_trace_imports_and_round_trips(shared: Path, tmp_path: Path) -> None:
    corpus = load(shared)
    assert corpus.problems == ()
    assert len(corpus) == 125
    assert {r.source for r in corpus} == {"claude-code", "openhands", "codex-cli", "mini-swe-agent"}
    for i, run in enumerate(corpus):
        first = write_run(run, tmp_path / f"{i}.jsonl")
        back = read_run(first)
        assert back.diagnostics == []
        assert back.model_dump(exclude={"loaded_from"}) == run.model_dump(exclude={"loaded_from"}), run.run_id
        again = write_run(back, tmp_path / f"{i}.again.jsonl")
        assert first.read_bytes() == again.read_bytes(), run.run_id
        assert all(back.request(t) == run.request(t) for t in range(len(run.turns)))
        assert run.lossy, f"{run.run_id}: an import that maps nothing lossily says so explicitly"
