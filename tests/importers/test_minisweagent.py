"""mini-swe-agent trajectories: fixtures in every shape its versions save, the 100 real SWE-bench runs checked
against an independent plain-json reading, labels from the results beside them, and dollars."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.importers import minisweagent_fixtures as fx
from workbench.cli import main
from workbench.importers import detect, minisweagent
from workbench.pricing import run_cost
from workbench.scale import load
from workbench.trace import TraceError, read_run, write_run
from workbench.trace.frames import runs_df


def _write(tmp: Path, doc: dict, name: str = "demo__demo-1.traj.json", indent: bool = True) -> Path:
    p = tmp / "trajs" / name.removesuffix(".traj.json") / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(doc, indent=2 if indent else None))
    return p


def test_v1_text_based(tmp_path: Path) -> None:
    p = _write(tmp_path, fx.v1(3))
    assert detect(p) is minisweagent
    (run,) = minisweagent.load(p)
    assert run.run_id == "demo__demo-1" and run.source == "mini-swe-agent"
    assert [t.usage.prompt for t in run.turns] == [1000, 2000, 3000]
    assert [t.usage.cached for t in run.turns] == [0, 900, 1800]
    assert [t.usage.completion for t in run.turns] == [50, 51, 52]
    assert [t.usage.reasoning for t in run.turns] == [7, 7, 7]
    assert [t.usage.cost for t in run.turns] == pytest.approx([0.01, 0.02, 0.03])
    assert run.recorded_cost_usd == pytest.approx(0.06)
    # every call re-sends the whole history: system, task, then two messages per earlier call
    assert [t.sent for t in run.turns] == [[(0, 2)], [(0, 4)], [(0, 6)]]
    assert [m.role for m in run.request(2)] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert [json.loads(t.tool_calls[0].arguments)["command"] for t in run.turns][:2] == ["ls dir0", "ls dir1"]
    assert run.turns[0].tool_calls[0].name == "bash"
    assert [r.is_error for t in run.turns for r in t.tool_results] == [False, True, False]
    assert run.turns[2].tool_results[0].content == "diff --git a/x b/x"
    assert run.outcome.stop_reason == "done" and run.outcome.text == "diff --git a/x b/x"
    assert run.policy is not None and run.policy.max_turns == 250
    assert run.policy.params == {"cost_limit_usd": 3.0}
    assert run.model == "openai/gpt-4.1" and run.task == fx.TASK
    assert run.turns[0].started_at is not None and run.turns[0].started_at.timestamp() == 1_763_500_000
    assert run.outcome.label is None  # no results beside it


def test_compact_json_is_detected_by_content(tmp_path: Path) -> None:
    p = _write(tmp_path, fx.v1(2), name="run.json", indent=False)
    assert detect(p) is minisweagent


def test_v2_text_based_limits_and_exit(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, fx.v2_text(2), name="x.traj.json"))
    assert len(run.turns) == 2
    assert [t.usage.cost for t in run.turns] == [0.002, 0.002]  # extra.cost when usage has none
    assert run.turns[1].ended_at is not None and run.turns[1].ended_at.timestamp() == 1_763_500_015.0
    assert all(m.role != "exit" for m in run.messages)
    assert run.outcome.stop_reason == "turn-cap" and run.outcome.detail == "LimitsExceeded"
    assert run.policy is not None and run.policy.max_turns == 2 and run.policy.params == {}
    assert run.run_id == "x"  # no instance_id: the file name


def test_v2_tool_calls_pair_by_id(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, fx.v2_toolcall(), name="demo__tool-1.traj.json"))
    (turn,) = run.turns
    assert [c.id for c in turn.tool_calls] == ["call_a", "call_b"]
    results = {r.call_id: r for r in turn.tool_results}
    assert results["call_a"].is_error is False and results["call_b"].is_error is True
    assert turn.usage.cached == 1024 and turn.usage.cost == 0.004
    assert run.outcome.stop_reason == "done"
    assert run.policy is not None and run.policy.max_turns is None  # step_limit 0 means no limit


def test_v2_responses_api(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, fx.v2_responses(), name="demo__resp-1.traj.json"))
    (turn,) = run.turns
    assert (turn.usage.prompt, turn.usage.cached, turn.usage.completion, turn.usage.reasoning) == (
        1200,
        1024,
        80,
        64,
    )
    assert turn.model == "gpt-5-mini" and turn.response_id == "resp_1"
    assert turn.tool_calls[0].id == "fc_1"
    assert turn.tool_results[0].timed_out is True and turn.tool_results[0].is_error is True
    assert run.outcome.stop_reason == "deadline"


@pytest.mark.parametrize("key", ["output", "tool_calls"])
@pytest.mark.parametrize("bad", [5, "fc_1", {"type": "function_call"}])
def test_a_call_list_that_is_not_a_list_is_said_and_read_as_none(
    tmp_path: Path, key: str, bad: object
) -> None:
    doc = fx.v2_responses()
    (k,) = [i for i, m in enumerate(doc["messages"]) if m.get("object") == "response"]
    doc["messages"][k][key] = bad
    (run,) = minisweagent.load(_write(tmp_path, doc, name="demo__resp-1.traj.json"))
    (turn,) = run.turns
    said = [d for d in run.diagnostics if d.field is not None and d.field.endswith(f".{key}")]
    assert len(said) == 1 and said[0].message.startswith("expected a list, got ")
    # the call is in "output" and in extra.actions: one broken list leaves it read from the other
    assert [c.id for c in turn.tool_calls] == ["fc_1"]


def test_labels_from_results_beside(tmp_path: Path) -> None:
    p = _write(tmp_path, fx.v1(2))
    report = tmp_path / "trajs" / "sb-cli-reports" / "run.json"
    report.parent.mkdir(parents=True)
    report.write_text(json.dumps({"resolved_ids": ["other"], "unresolved_ids": ["demo__demo-1"]}))
    (run,) = minisweagent.load(p)
    assert (run.outcome.label, run.outcome.label_source) == ("unresolved", "run report run.json")
    # a per-instance report is more specific and wins; the disagreement is said
    inst = tmp_path / "logs" / "demo__demo-1" / "report.json"
    inst.parent.mkdir(parents=True)
    inst.write_text(json.dumps({"demo__demo-1": {"resolved": True, "patch_exists": True}}))
    (run,) = minisweagent.load(p)
    assert run.outcome.label == "resolved"
    assert any("disagree" in n for n in run.lossy)


def test_limits_exceeded_by_cost(tmp_path: Path) -> None:
    doc = fx.v1(2, status="LimitsExceeded")
    doc["info"]["config"]["agent"]["cost_limit"] = 0.02
    (run,) = minisweagent.load(_write(tmp_path, doc))
    assert run.outcome.stop_reason == "max-budget"


def test_round_trip_and_frames(tmp_path: Path) -> None:
    (run,) = minisweagent.load(_write(tmp_path, fx.v1(3)))
    out = write_run(run, tmp_path / "native.jsonl")
    back = read_run(out)
    assert back.recorded_cost_usd == run.recorded_cost_usd and back.turns == run.turns
    frame = runs_df([run])
    assert frame.loc[0, "recorded_cost_usd"] == pytest.approx(0.06)
    assert frame.loc[0, "instance_id"] == "demo__demo-1"
    assert frame.loc[0, "turns"] == 3


def test_label_cli_attaches_by_instance(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, fx.v1(2))
    _write(tmp_path, fx.v2_toolcall(), name="demo__tool-1.traj.json")
    table = tmp_path / "grades.jsonl"
    table.write_text(
        '{"instance_id": "demo__demo-1", "score": 1.0}\n{"instance_id": "demo__tool-1", "resolved": false}\n'
    )
    out = tmp_path / "labelled"
    assert main(["label", str(tmp_path / "trajs"), "--results", str(table), "--out", str(out)]) == 0
    said = capsys.readouterr().out
    assert "labelled 2 of 2 runs (1 resolved, 1 unresolved)" in said
    runs = {r.run_id: r for r in load(out).runs}
    assert runs["demo__demo-1"].outcome.label == "resolved" and runs["demo__demo-1"].outcome.score == 1.0
    assert runs["demo__tool-1"].outcome.label == "unresolved"
    assert runs["demo__tool-1"].outcome.label_source == "results table grades.jsonl"


def test_label_cli_bad_results(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path, fx.v1(2))
    bad = tmp_path / "bad.json"
    bad.write_text('{"nothing": 1}')
    assert main(["label", str(tmp_path / "trajs"), "--results", str(bad), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("workbench label: ") and "bad.json" in err and "no labels found" in err
    assert not (tmp_path / "o").exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    path=st.lists(
        st.sampled_from(
            [
                "info",
                "messages",
                2,
                3,
                "extra",
                "response",
                "usage",
                "prompt_tokens",
                "content",
                "config",
                "agent",
                "step_limit",
                "model_stats",
            ]
        ),
        min_size=1,
        max_size=5,
    ),
    value=st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=True),
        st.text(max_size=10),
        st.lists(st.integers(), max_size=3),
        st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    ),
)
def test_bad_values_never_crash(tmp_path: Path, path: list, value: object) -> None:
    """Any value at any place in a trajectory: a run with diagnostics naming the file and field, or one
    TraceError naming the file; never another exception."""
    doc = fx.v1(3)

    def steps_into(node: object, key: object) -> bool:
        if isinstance(node, dict):
            return isinstance(key, str) and key in node
        return isinstance(node, list) and isinstance(key, int) and key < len(node)

    node: object = doc
    for key in path[:-1]:
        if not steps_into(node, key):
            break
        node = node[key]  # type: ignore[index]
    last = path[-1]
    if (isinstance(node, dict) and isinstance(last, str)) or steps_into(node, last):
        node[last] = value  # type: ignore[index]
    p = tmp_path / "t.traj.json"
    try:
        p.write_bytes(orjson.dumps(doc, option=orjson.OPT_NON_STR_KEYS))
    except orjson.JSONEncodeError:
        return
    try:
        (run,) = minisweagent.load(p)
    except TraceError as exc:
        assert str(p) in str(exc)
        return
    for d in run.diagnostics:
        assert d.file == str(p) and d.field
    write_run(run, tmp_path / "back.jsonl")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.floats(0.0, 0.999))
def test_truncated_file_is_one_clear_error(tmp_path: Path, cut: float) -> None:
    raw = json.dumps(fx.v1(3), indent=2).encode()
    p = tmp_path / "t.traj.json"
    p.write_bytes(raw[: int(len(raw) * cut)])
    with pytest.raises(TraceError) as info:
        minisweagent.load(p)
    assert str(p) in str(info.value)


# -- the 100 real SWE-bench Verified runs --------------------------------------------------------------------


def _independent(root: Path) -> dict[str, dict]:
    """Per run, read with plain json: calls, token totals, recorded cost, and the label from report.json."""
    out = {}
    for f in sorted((root / "trajs").glob("*/*.traj.json")):
        d = json.loads(f.read_text())
        usages = [
            m["extra"]["response"]["usage"]
            for m in d["messages"]
            if m["role"] == "assistant" and "usage" in m.get("extra", {}).get("response", {})
        ]
        rep = json.loads((root / "logs" / d["instance_id"] / "report.json").read_text())
        out[d["instance_id"]] = {
            "calls": len(usages),
            "prompt": sum(u["prompt_tokens"] for u in usages),
            "completion": sum(u["completion_tokens"] for u in usages),
            "cached": sum(u["prompt_tokens_details"]["cached_tokens"] for u in usages),
            "cost": d["info"]["model_stats"]["instance_cost"],
            "label": "resolved" if rep["resolved"] else "unresolved",
            "routes": {
                m["extra"]["response"].get("provider") for m in d["messages"] if m["role"] == "assistant"
            },
        }
    return out


@pytest.mark.real
def test_real_runs_equal_independent_reading(shared: Path) -> None:
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    truth = _independent(root)
    corpus = load(root)
    runs = {r.run_id: r for r in corpus.runs}
    assert len(runs) == len(truth) == 100
    assert sum(v["calls"] for v in truth.values()) == sum(len(r.turns) for r in runs.values()) == 3901
    for iid, t in truth.items():
        r = runs[iid]
        assert (len(r.turns), r.total("prompt"), r.total("completion"), r.total("cached")) == (
            t["calls"],
            t["prompt"],
            t["completion"],
            t["cached"],
        ), iid
        assert r.outcome.label == t["label"], iid
        assert r.recorded_cost_usd == pytest.approx(t["cost"])
    labels = [r.outcome.label for r in runs.values()]
    assert labels.count("resolved") == 60 and labels.count("unresolved") == 40
    # and the run report agrees with every per-instance report (no disagreement notes)
    assert not any("disagree" in n for r in runs.values() for n in r.lossy)


@pytest.mark.real
def test_real_dollars_against_openrouter(shared: Path) -> None:
    """genai-prices at the call's date reproduces OpenRouter's recorded cost on every run routed through
    Google's OpenRouter endpoints; the two runs on the direct `google` route were billed less for cache reads."""
    root = shared / "mini-swe-agent"
    if not root.is_dir():
        pytest.skip("../shared/traces/mini-swe-agent is absent")
    truth = _independent(root)
    corpus = load(root)
    agree, differ = [], []
    for r in corpus.runs:
        c = run_cost(r)
        assert c.usd is not None and c.unpriced_calls == 0 and c.models == ("google:gemini-3-pro-preview",)
        (agree if abs(c.usd - c.recorded_usd) <= 1e-6 * c.recorded_usd else differ).append(r.run_id)
    assert len(agree) == 98
    assert sorted(differ) == sorted(i for i, t in truth.items() if "google" in t["routes"])
    assert sorted(differ) == ["django__django-11299", "django__django-14493"]
    for iid in differ:
        c = run_cost(corpus.by_id(iid))
        assert c.usd > c.recorded_usd  # genai-prices' cache-read rate is the higher one
