"""``workbench estimate`` on native traces written from synthetic runs (exact figures)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.trace import Message, Run, ToolCall, Turn, Usage, write_run


def run_with(run_id: str, cpt: float) -> Run:
    msgs = [Message(role="user", content="task " * 50)]
    turns = []
    for t in range(6):
        chars = sum(
            len(m.content or "") + sum(len(c.name) + len(c.arguments) for c in m.tool_calls) for m in msgs
        )
        turns.append(
            Turn(
                index=t, sent=[(0, len(msgs))], usage=Usage(prompt=1_000 + round(chars / cpt)), model="gpt-5"
            )
        )
        msgs += [
            Message(
                role="assistant", tool_calls=[ToolCall(id=f"c{t}", name="sh", arguments='{"cmd":"cat f"}')]
            ),
            Message(role="tool", tool_call_id=f"c{t}", content="line of output\n" * 40),
        ]
    return Run(run_id=run_id, source="synthetic", model="gpt-5", messages=msgs, turns=turns)


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    write_run(run_with("a", 4.0), tmp_path / "a.jsonl")
    write_run(run_with("b", 4.0), tmp_path / "b.jsonl")
    return tmp_path


def test_estimate_json_reports_every_requested_strategy(
    traces: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["estimate", str(traces), "--json", "--strategy", "adr", "--strategy", "exact"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {row["strategy"] for row in doc["summary"]} == {"adr", "exact"}
    adr = next(r for r in doc["summary"] if r["strategy"] == "adr")
    assert (adr["runs"], adr["calls"], adr["under_rate"]) == (2, 12, 0.0)
    assert any("unseen prefix" in n for n in doc["notes"])
    classes = {r["class"] for r in doc["classes"]}
    assert classes == {"prose", "tool_args", "tool_result"}
    result = next(r for r in doc["classes"] if r["class"] == "tool_result")
    assert result["exact_tokens"] > 0  # gpt-5 has an exact offline tokenizer (o200k_base)


def test_estimate_text_and_bad_input(
    traces: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["estimate", str(traces)]) == 0
    out = capsys.readouterr().out
    assert "Estimator study" in out and "Calibration bound" in out and "Notes:" in out
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert main(["estimate", str(bad)]) == 1
    assert "bad.jsonl" in capsys.readouterr().err


def test_runs_without_reported_usage_say_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_with("u", 4.0)
    for t in run.turns:
        t.usage = Usage()
    write_run(run, tmp_path / "u.jsonl")
    assert main(["estimate", str(tmp_path)]) == 0
    assert "no calls with a recorded request and reported prompt tokens" in capsys.readouterr().out
    assert main(["estimate", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["summary"] == []
