"""OpenHands output: calls, tokens, policy and the recorded stop, against an independent json reading."""

from __future__ import annotations

import json
from pathlib import Path

from workbench.importers import detect, openhands


def raw_runs(path: Path) -> dict[str, dict[str, int]]:
    """instance_id -> calls (unique model_response ids) and token sums over those calls (plain json)."""
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            responses = {}
            for e in d["history"]:
                tcm = e.get("tool_call_metadata")
                if tcm and "action" in e:
                    responses.setdefault(tcm["model_response"]["id"], tcm["model_response"]["usage"])
            cached = [(u.get("prompt_tokens_details") or {}).get("cached_tokens") for u in responses.values()]
            reasoning = [
                (u.get("completion_tokens_details") or {}).get("reasoning_tokens") for u in responses.values()
            ]
            out[d["instance_id"]] = {
                "calls": len(responses),
                "prompt": sum(u["prompt_tokens"] for u in responses.values()),
                "completion": sum(u["completion_tokens"] for u in responses.values()),
                "cached_in_response": sum(c for c in cached if c is not None),
                "reasoning": sum(r for r in reasoning if r is not None),
            }
    return out


def test_calls_and_tokens_match_an_independent_reading(shared: Path) -> None:
    expected_calls = {
        "ponylang__ponyc-4595": 23,
        "ponylang__ponyc-4593": 33,
        "ponylang__ponyc-4588": 49,
        "alibaba__fastjson2-2775": 20,
    }
    seen = {}
    for path in sorted((shared / "openhands").glob("*.jsonl")):
        assert detect(path) is openhands
        raw = raw_runs(path)
        for run in openhands.load(path):
            r = raw[run.run_id]
            assert len(run.turns) == r["calls"] == expected_calls[run.run_id]
            assert run.total("prompt") == r["prompt"]
            assert run.total("completion") == r["completion"]
            assert run.diagnostics == []
            seen[run.run_id] = run
    assert set(seen) == set(expected_calls)
    gpt5 = seen["alibaba__fastjson2-2775"]
    raw = raw_runs(shared / "openhands" / "fastjson2_gpt5.output.jsonl")["alibaba__fastjson2-2775"]
    assert gpt5.total("cached") == raw["cached_in_response"] == 218496
    assert gpt5.total("reasoning") == raw["reasoning"] == 12864
    assert round(gpt5.total("cost") or 0, 7) == 0.5808695
    # llama runs report no cache in the response; metrics.token_usages says 0 read, 0 written
    assert seen["ponylang__ponyc-4588"].total("cached") == 0


def test_ponyc_4588_stopped_at_max_iterations(shared: Path) -> None:
    runs = {r.run_id: r for r in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl")}
    run = runs["ponylang__ponyc-4588"]
    assert run.outcome.stop_reason == "max-iterations"
    assert run.outcome.cut_by_limit
    assert (run.outcome.meter.name, run.outcome.meter.reached, run.outcome.meter.allowed) == (
        "max_iterations",
        50,
        50,
    )
    assert "Agent reached maximum iteration" in run.outcome.detail
    assert run.policy.max_turns == 50 and run.policy.rules == "openhands"
    assert run.policy.params["agent_class"] == "CodeActAgent"
    assert runs["ponylang__ponyc-4595"].outcome.stop_reason == "done"
    assert not runs["ponylang__ponyc-4595"].outcome.cut_by_limit
    assert all(r.outcome.label is None for r in runs.values())
    assert all(any("no resolved/unresolved label" in n for n in r.lossy) for r in runs.values())


def test_requests_and_tool_results(shared: Path) -> None:
    runs = {r.run_id: r for r in openhands.load(shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl")}
    run = runs["ponylang__ponyc-4588"]
    assert [m.role for m in run.request(0)] == ["system", "user"]
    req = run.request(3)
    assert req[:2] == run.request(0)
    assert [m.role for m in req[2:]] == ["assistant", "tool"] * 3
    for t in run.turns:
        assert [r.call_id for r in t.tool_results] == [c.id for c in t.tool_calls][: len(t.tool_results)]
    # the edit observations mark mutations; each mutated turn called the editor
    assert any(t.mutated for t in run.turns)
    assert all(any(c.name == "str_replace_editor" for c in t.tool_calls) for t in run.turns if t.mutated)
    assert [e.kind for e in run.events] == ["error-observation"]


def test_label_when_test_result_says_resolved(tmp_path: Path) -> None:
    line = {
        "instance_id": "x-1",
        "metadata": {"agent_class": "CodeActAgent", "max_iterations": 30, "llm_config": {"model": "m"}},
        "history": [],
        "test_result": {"report": {"resolved": True}},
        "error": None,
    }
    path = tmp_path / "output.jsonl"
    path.write_text(json.dumps(line) + "\n")
    (run,) = openhands.load(path)
    assert run.outcome.label == "resolved"
    assert run.policy.max_turns == 30
