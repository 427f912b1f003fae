"""OpenHands event timestamps carry no zone; model_response.created is a UTC epoch. The importer puts both on one
clock, so a call's duration is its latency, not a time-zone offset."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

from workbench.scale import load


def test_call_durations_agree_with_recorded_latencies(shared: Path) -> None:
    path = shared / "openhands" / "multi_swe_bench_ponyc.output.jsonl"
    latencies = {}
    for raw in path.read_text().splitlines():
        d = json.loads(raw)
        for entry in d["metrics"]["response_latencies"]:
            latencies[entry["response_id"]] = entry["latency"]
    runs = load(path).runs
    assert len(runs) == 3
    checked = 0
    for run in runs:
        assert any("+8 h" in note for note in run.lossy), run.lossy  # the inferred zone is said, not hidden
        for t in run.turns:
            if t.response_id in latencies and t.started_at and t.ended_at:
                duration = (t.ended_at - t.started_at).total_seconds()
                # created is stamped when the provider starts the response and the action event after the client
                # has it: the gap is positive and no longer than the client-side latency plus a little handling.
                assert 0.0 < duration <= latencies[t.response_id] + 15.0
                checked += 1
    assert checked == 23 + 33 + 49


def test_a_run_already_in_utc_is_not_shifted(shared: Path) -> None:
    run = load(shared / "openhands" / "fastjson2_gpt5.output.jsonl").runs[0]
    gaps = [t.ended_at - t.started_at for t in run.turns if t.started_at and t.ended_at]
    assert gaps and all(timedelta(0) < g < timedelta(minutes=5) for g in gaps)
    assert not any("+8 h" in note for note in run.lossy)
