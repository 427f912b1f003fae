"""The versions issue 21 found unread, each written by the test itself: detection by structure, not by a first
key, a folder's name or an id's type."""

from __future__ import annotations

import json
from pathlib import Path

from tests.samples.versions import any_agent_trace, openhands_2024_line, sdk_completion_before_2026
from workbench.importers import detect, openhands, openhands_completions, otel_genai
from workbench.importers._common import skeleton


def test_openhands_2024_outputs_named_by_question_id_or_an_integer_id(tmp_path: Path) -> None:
    path = tmp_path / "output.jsonl"
    lines = [openhands_2024_line("question_id", "q-17"), openhands_2024_line("id", 42)]
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    assert detect(path) is openhands
    runs = openhands.load(path)
    assert [r.run_id for r in runs] == ["q-17", "42"]
    assert [len(r.turns) for r in runs] == [3, 3] and not any(r.diagnostics for r in runs)


def test_an_sdk_completion_log_whose_request_fills_the_head_is_one_call_in_any_folder(tmp_path: Path) -> None:
    folder = tmp_path / "logs"  # not named completions
    folder.mkdir()
    path = folder / "call.json"
    path.write_text(json.dumps(sdk_completion_before_2026(100_000)))
    head = skeleton(path.read_bytes()[: 64 << 10])
    assert head is not None and head.at() == {"messages"} and head.cut_in == "messages"
    assert detect(path) is openhands_completions
    (run,) = openhands_completions.load(path)
    assert (run.turns[0].usage.prompt, run.turns[0].usage.completion, run.turns[0].usage.cost) == (
        4000,
        90,
        0.02,
    )
    # the same log with its keys in the later order, and a short request: still by structure
    d = sdk_completion_before_2026(10)
    path.write_text(
        json.dumps({"context_window": d.pop("context_window"), **dict(reversed(list(d.items())))})
    )
    assert detect(path) is openhands_completions


def test_any_agent_spans_with_integer_ids_and_parent_objects(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(any_agent_trace(), indent=2))
    assert detect(path) is otel_genai
    (run,) = otel_genai.load(path)
    assert run.run_id == "4bf92f3577b34da6a3ce929d0e0e4736"  # the 128-bit id exactly, not through a float
    first, second = run.turns
    assert (first.usage.prompt, first.usage.completion, round(first.usage.cost, 6)) == (900, 30, 0.000408)
    assert (second.usage.prompt, second.usage.cached, second.usage.completion) == (1000, 768, 12)
    assert [c.name for c in first.tool_calls] == ["search"]


def test_a_skeleton_reads_keys_with_their_parents_from_a_cut_document() -> None:
    sk = skeleton(b'{"spans": [{"context": {"span_id": 1}, "parent": {"span_id": 2}}], "final_output": "x{"')
    assert sk is not None and sk.at() == {"spans", "final_output"}
    assert sk.at("spans") == {"context", "parent"} and sk.under("parent") == {"span_id"} and sk.cut_in is None
    assert skeleton(b"# aider chat started at") is None


def test_a_responses_api_completion_log_and_a_later_versions_extra_keys(tmp_path: Path) -> None:
    from tests.importers import openhands_shapes

    log = openhands_shapes.completion_log("resp-r", 500, 20, 0.001)
    request = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "y" * 90_000}]},
        {"type": "function_call", "call_id": "c1", "name": "bash", "arguments": "{}"},
    ]
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"input": request, "tools": [], "kwargs": {}, "response": log["response"]}))
    assert detect(path) is openhands_completions
    later = {**log, "llm_id": "main", "telemetry_version": 3}  # keys a later SDK might add
    path.write_text(json.dumps(later))
    assert detect(path) is openhands_completions
    (run,) = openhands_completions.load(path)
    assert (run.turns[0].usage.prompt, run.turns[0].usage.completion) == (500, 20)
