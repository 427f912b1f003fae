"""Inspect AI logs: .json and .eval, a run per sample and epoch, usage conventions across versions, scores."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from workbench.importers import detect, inspect_ai
from workbench.trace import TraceError, read_run, write_run

EVAL = {
    "eval_id": "a1b2c3d4e5f6g7h8",
    "run_id": "r1",
    "created": "2025-06-01T10:00:00+00:00",
    "task": "swe_lite",
    "task_id": "t1",
    "dataset": {"name": "d", "samples": 2},
    "model": "anthropic/claude-sonnet-4",
    "config": {"message_limit": 60, "token_limit": 500000, "time_limit": 1800},
}


def msg(role: str, content, **kw) -> dict:
    return {"role": role, "content": content, "source": "input" if role != "assistant" else "generate", **kw}


def model_event(t: str, inputs: list[dict], answer: dict, usage: dict, **kw) -> dict:
    return {
        "event": "model",
        "timestamp": t,
        "working_start": 1.0,
        "model": "anthropic/claude-sonnet-4",
        "input": inputs,
        "tools": [],
        "tool_choice": "auto",
        "config": {},
        "output": {
            "model": "claude-sonnet-4-20250514",
            "choices": [
                {"message": answer, "stop_reason": "tool_calls" if answer.get("tool_calls") else "stop"}
            ],
            "usage": usage,
        },
        **kw,
    }


def bash_call(cid: str, cmd: str) -> dict:
    return {"id": cid, "function": "bash", "arguments": {"cmd": cmd}, "type": "function"}


def anthropic_usage(fresh: int, read: int, write: int, out: int) -> dict:
    """Anthropic's convention: input_tokens is fresh input; total adds every part."""
    return {
        "input_tokens": fresh,
        "output_tokens": out,
        "total_tokens": fresh + read + write + out,
        "input_tokens_cache_read": read,
        "input_tokens_cache_write": write,
        "total_cost": 0.01,
    }


def openai_old_usage(prompt: int, cached: int, out: int, reasoning: int) -> dict:
    """OpenAI before 2026 in Inspect: input_tokens is the whole prompt, reasoning inside output."""
    return {
        "input_tokens": prompt,
        "output_tokens": out,
        "total_tokens": prompt + out,
        "input_tokens_cache_read": cached,
        "reasoning_tokens": reasoning,
    }


def sample_one() -> dict:
    sys_m, user_m = msg("system", "You are an agent."), msg("user", "Fix the bug.")
    a1 = msg(
        "assistant",
        [{"type": "reasoning", "reasoning": "look first"}, {"type": "text", "text": "ls"}],
        tool_calls=[bash_call("call_1", "ls")],
    )
    t1 = msg("tool", "a.py", tool_call_id="call_1", function="bash")
    a2 = msg("assistant", "Done.")
    events = [
        {"event": "sample_init", "timestamp": "2025-06-01T10:00:00+00:00", "sample": {}, "state": {}},
        {
            "event": "span_begin",
            "id": "s-solver",
            "name": "solvers",
            "type": "solvers",
            "timestamp": "2025-06-01T10:00:00+00:00",
        },
        model_event(
            "2025-06-01T10:00:01+00:00",
            [sys_m, user_m],
            a1,
            anthropic_usage(10, 3000, 500, 40),
            completed="2025-06-01T10:00:04+00:00",
            span_id="s-solver",
        ),
        {
            "event": "tool",
            "type": "function",
            "id": "call_1",
            "function": "bash",
            "arguments": {"cmd": "ls"},
            "result": "a.py",
            "timestamp": "2025-06-01T10:00:04+00:00",
            "completed": "2025-06-01T10:00:05+00:00",
            "span_id": "s-solver",
        },
        model_event(
            "2025-06-01T10:00:05+00:00",
            [sys_m, user_m, a1, t1],
            a2,
            anthropic_usage(20, 3500, 0, 10),
            working_time=2.5,
            span_id="s-solver",
        ),
        {"event": "span_end", "id": "s-solver", "timestamp": "2025-06-01T10:00:08+00:00"},
        {
            "event": "span_begin",
            "id": "s-scorers",
            "name": "scorers",
            "type": "scorers",
            "timestamp": "2025-06-01T10:00:08+00:00",
        },
        {
            "event": "span_begin",
            "id": "s-judge",
            "parent_id": "s-scorers",
            "name": "model_graded_qa",
            "type": "scorer",
            "timestamp": "2025-06-01T10:00:08+00:00",
        },
        model_event(
            "2025-06-01T10:00:09+00:00",
            [msg("user", "grade this")],
            msg("assistant", "GRADE: C"),
            anthropic_usage(900, 0, 0, 5),
            span_id="s-judge",
        ),
        {"event": "span_end", "id": "s-judge", "timestamp": "2025-06-01T10:00:10+00:00"},
        {"event": "span_end", "id": "s-scorers", "timestamp": "2025-06-01T10:00:10+00:00"},
    ]
    return {
        "id": "django-1",
        "epoch": 1,
        "input": "Fix the bug.",
        "target": "patch",
        "messages": [sys_m, user_m, a1, t1, a2],
        "output": {"model": "claude-sonnet-4-20250514", "choices": [], "usage": {}},
        "scores": {"model_graded_qa": {"value": "C", "answer": "Done.", "explanation": "ok"}},
        "metadata": {},
        "store": {},
        "events": events,
        "model_usage": {"anthropic/claude-sonnet-4": anthropic_usage(30, 6500, 500, 50)},
        "started_at": "2025-06-01T10:00:00+00:00",
        "attachments": {},
    }


def sample_two() -> dict:
    """Epoch 2 of another sample: pooled inputs (input_refs), OpenAI's old convention, a token limit hit."""
    user_m = msg("user", "attachment://abc123")
    a1 = msg("assistant", "", tool_calls=[bash_call("c9", "pytest")])
    events = [
        model_event(
            "2025-06-01T11:00:00+00:00", [], a1, openai_old_usage(5000, 4000, 300, 200), input_refs=[[0, 1]]
        ),
        {
            "event": "tool",
            "type": "function",
            "id": "c9",
            "function": "bash",
            "arguments": {"cmd": "pytest"},
            "result": "",
            "error": {"type": "timeout", "message": "Command timed out"},
            "timestamp": "2025-06-01T11:00:03+00:00",
        },
    ]
    return {
        "id": 7,
        "epoch": 2,
        "input": [user_m],
        "target": "x",
        "messages": [],
        "output": {"choices": []},
        "scores": {"accuracy": {"value": 0.25}},
        "events": events,
        "events_data": {"messages": [user_m], "calls": []},
        "attachments": {"abc123": "Make the tests pass."},
        "limit": {"type": "token", "limit": 500000},
    }


def log() -> dict:
    return {
        "version": 2,
        "status": "success",
        "eval": EVAL,
        "plan": {"name": "plan", "steps": []},
        "results": {"total_samples": 2, "completed_samples": 2, "scores": []},
        "stats": {
            "started_at": "2025-06-01T10:00:00+00:00",
            "completed_at": "2025-06-01T12:00:00+00:00",
            "model_usage": {},
        },
        "samples": [sample_one(), sample_two()],
    }


def independent(doc: dict) -> list[dict[str, int]]:
    """Per sample: calls and whole-prompt/completion sums, read straight from the events (scorer spans excluded)."""
    out = []
    for s in doc["samples"]:
        scoring = {
            e["id"]
            for e in s["events"]
            if e["event"] == "span_begin" and e.get("type") in ("scorer", "scorers")
        }
        calls = [e for e in s["events"] if e["event"] == "model" and e.get("span_id") not in scoring]
        prompt = 0
        for e in calls:
            u = e["output"]["usage"]
            parts = (
                u["input_tokens"] + u.get("input_tokens_cache_read", 0) + u.get("input_tokens_cache_write", 0)
            )
            prompt += parts if parts + u["output_tokens"] == u["total_tokens"] else u["input_tokens"]
        out.append(
            {
                "calls": len(calls),
                "prompt": prompt,
                "completion": sum(e["output"]["usage"]["output_tokens"] for e in calls),
            }
        )
    return out


def check(runs, doc) -> None:
    want = independent(doc)
    assert [(len(r.turns), r.total("prompt"), r.total("completion")) for r in runs] == [
        (w["calls"], w["prompt"], w["completion"]) for w in want
    ]


def test_json_log(tmp_path: Path) -> None:
    doc = log()
    path = tmp_path / "2025-06-01T10-00-00_swe-lite_a1b2.json"
    path.write_text(json.dumps(doc, indent=2))
    assert detect(path).NAME == "inspect-ai"
    runs = inspect_ai.load(path)
    check(runs, doc)
    one, two = runs
    assert one.run_id == "swe_lite/a1b2c3d4e5f6/django-1/e1" and two.run_id == "swe_lite/a1b2c3d4e5f6/7/e2"
    t0, t1 = one.turns
    assert (t0.usage.prompt, t0.usage.cached, t0.usage.cache_write, t0.usage.completion, t0.usage.cost) == (
        3510,
        3000,
        500,
        40,
        0.01,
    )
    assert [c.name for c in t0.tool_calls] == ["bash"] and t0.tool_calls[0].arguments == '{"cmd":"ls"}'
    assert [(r.call_id, r.content, r.duration_s) for r in t0.tool_results] == [("call_1", "a.py", 1.0)]
    assert (t0.ended_at - t0.started_at).total_seconds() == 3 and (
        t1.ended_at - t1.started_at
    ).total_seconds() == 2.5
    assert one.turns[1].sent == [(0, 4)] and len(one.messages) == 5  # the first request and its answer reused
    assert one.messages[2].reasoning == "look first"
    assert (one.outcome.label, one.outcome.score, one.outcome.label_source) == (
        "correct",
        1.0,
        "inspect score model_graded_qa",
    )
    assert one.outcome.stop_reason == "done"
    assert (
        "1 model call(s) made while scoring (model-graded scorers) are not the agent's: left out" in one.lossy
    )
    assert one.policy.deadline_s == 1800 and one.policy.params["token_limit"] == 500000
    # OpenAI's older convention: input_tokens already holds the cached part
    (u,) = [t.usage for t in two.turns]
    assert (u.prompt, u.cached, u.completion, u.reasoning) == (5000, 4000, 300, 200)
    assert two.task == "Make the tests pass."
    assert two.request(0)[0].content == "Make the tests pass."
    assert two.turns[0].tool_results[0].timed_out and two.turns[0].tool_results[0].is_error
    assert (two.outcome.stop_reason, two.outcome.score, two.outcome.label) == ("budget", 0.25, None)
    for r in runs:
        again = read_run(write_run(r, tmp_path / f"{r.metadata['epoch']}.jsonl"))
        assert again.model_dump(exclude={"loaded_from"}) == r.model_dump(exclude={"loaded_from"})


def write_eval(path: Path, doc: dict, *, header: bool = True) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        head = {k: v for k, v in doc.items() if k != "samples"}
        z.writestr(
            "_journal/start.json", json.dumps({"version": 2, "eval": doc["eval"], "plan": doc["plan"]})
        )
        for k, s in enumerate(doc["samples"]):
            # a sample without its id or epoch (the bad-input test removes fields) is still written, by position
            z.writestr(f"samples/{s.get('id', k)}_epoch_{s.get('epoch', 1)}.json", json.dumps(s))
        if header:
            z.writestr("reductions.json", json.dumps([]))
            z.writestr("summaries.json", json.dumps([]))
            z.writestr("header.json", json.dumps(head))


def test_eval_zip_and_an_in_progress_one(tmp_path: Path) -> None:
    doc = log()
    path = tmp_path / "log.eval"
    write_eval(path, doc)
    assert detect(path).NAME == "inspect-ai"
    runs = inspect_ai.load(path)
    check(sorted(runs, key=lambda r: r.metadata["sample_id"] == 7), doc)  # members are read in name order
    running = tmp_path / "running.eval"
    write_eval(running, doc, header=False)  # only the journal's start.json: the run is in progress
    assert len(inspect_ai.load(running)) == 2


def test_a_corrupt_sample_member_loses_only_that_sample(tmp_path: Path) -> None:
    doc = log()
    path = tmp_path / "log.eval"
    write_eval(path, doc)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("samples/zz_epoch_1.json", "{broken")
    runs = inspect_ai.load(path)
    assert len(runs) == 2
    assert [d.field for d in runs[0].diagnostics] == ["samples/zz_epoch_1.json"]


def test_the_2024_transcript_shape(tmp_path: Path) -> None:
    s = sample_one()
    s["transcript"] = {"events": s.pop("events"), "content": {}}
    doc = {**log(), "samples": [s]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    (run,) = inspect_ai.load(path)
    assert len(run.turns) == 2


def test_bad_fields_are_named_and_a_truncated_log_is_one_error(tmp_path: Path) -> None:
    doc = log()
    doc["samples"][0]["events"][2]["output"]["usage"]["output_tokens"] = -1
    doc["samples"][1]["events"][0]["timestamp"] = "yesterday"
    path = tmp_path / "l.json"
    path.write_text(json.dumps(doc))
    one, two = inspect_ai.load(path)
    assert [d.field for d in one.diagnostics] == ["samples[0].events[2].output.usage.output_tokens"]
    assert [d.field for d in two.diagnostics] == ["samples[1].events[0].timestamp"]
    path.write_text(json.dumps(doc, indent=2)[:-100])
    with pytest.raises(TraceError) as err:
        inspect_ai.load(path)
    assert err.value.file == str(path) and err.value.line is not None


def write_zstd_eval(path: Path, doc: dict) -> None:
    """An .eval as Inspect writes it since April 2026: members compressed with Zstandard (zip method 93), in
    several frames. The standard library cannot write method 93 before Python 3.14, so the members are stored
    compressed and their headers then say what they hold (method, CRC and size of the inflated data)."""
    import struct
    import zlib

    import zstandard

    members = {
        "header.json": json.dumps({k: v for k, v in doc.items() if k != "samples"}).encode(),
        **{f"samples/{s['id']}_epoch_{s['epoch']}.json": json.dumps(s).encode() for s in doc["samples"]},
    }
    cctx = zstandard.ZstdCompressor()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            half = len(data) // 2
            z.writestr(name, cctx.compress(data[:half]) + cctx.compress(data[half:]))  # two frames
    buf = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        infos, start = z.infolist(), z.start_dir
    for info in infos:
        data = members[info.filename]
        struct.pack_into("<H", buf, info.header_offset + 8, 93)
        struct.pack_into("<L", buf, info.header_offset + 14, zlib.crc32(data))
        struct.pack_into("<L", buf, info.header_offset + 22, len(data))
    at = start
    for info in infos:
        assert buf[at : at + 4] == b"PK\x01\x02"
        data = members[info.filename]
        struct.pack_into("<H", buf, at + 10, 93)
        struct.pack_into("<L", buf, at + 16, zlib.crc32(data))
        struct.pack_into("<L", buf, at + 24, len(data))
        n, m, k = struct.unpack_from("<3H", buf, at + 28)
        at += 46 + n + m + k
    path.write_bytes(bytes(buf))


def test_a_zstandard_eval_is_read(tmp_path: Path) -> None:
    doc = log()
    path = tmp_path / "new.eval"
    write_zstd_eval(path, doc)
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} == {93}
    assert detect(path).NAME == "inspect-ai"
    runs = inspect_ai.load(path)
    check(sorted(runs, key=lambda r: r.metadata["sample_id"] == 7), doc)
    assert all(not r.diagnostics for r in runs)
