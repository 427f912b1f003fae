"""Importers that say what they read are cached, and what they read beside a run keys the entry: loading twice
through the cache equals loading without it (the second time from the cache), and a results file added, edited
or removed beside a run — or a file added to a folder run — is a miss that gives the new answer, never a stale
one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

from tests.importers import minisweagent_fixtures as fx
from tests.importers import openhands_shapes as shapes
from tests.samples import write_sized
from workbench.importers import detect
from workbench.scale.cache import FileCache, cacheable, file_key
from workbench.trace.schema import Run

NEWLY_CACHEABLE = (
    "minisweagent",
    "inspect_ai",
    "otel_genai",
    "swe_agent",
    "aider",
    "gemini_cli",
    "openhands",
    "openhands_conversation",
    "openhands_trajectory",
    "openhands_completions",
)


def _write_all(folder: Path, calls: int) -> list[Path]:
    """The benchmarks' generated files of the newer formats (the registry's ``sized()`` samples)."""
    return write_sized(folder, calls)


def _no_parse(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> None:
    def refuse(path: Path) -> list[Run]:
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(module, "load", refuse)


def _cached_twice(path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> list[Run]:
    """Load ``path`` through the cache, then again with its importer refusing to parse: both equal an uncached
    load (``loaded_from`` included)."""
    module = detect(path)
    assert cacheable(module), module.__name__
    fresh = module.load(path)
    for r in fresh:
        r.loaded_from = str(path)
    cold = FileCache(cache).load_file(path)
    with monkeypatch.context() as m:
        _no_parse(m, module)
        warm = FileCache(cache).load_file(path)
    assert cold == fresh and warm == fresh
    assert [r.loaded_from for r in warm] == [str(path)] * len(warm)
    return warm


def test_every_named_importer_declares_what_it_reads() -> None:
    import importlib

    for name in NEWLY_CACHEABLE:
        assert cacheable(importlib.import_module(f"workbench.importers.{name}")), name


def _mini(tmp: Path, name: str = "demo__demo-1") -> Path:
    p = tmp / "trajs" / name / f"{name}.traj.json"
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(fx.v1(3), indent=2))
    return p


def _label(path: Path, cache: Path) -> tuple[str | None, str | None]:
    (run,) = FileCache(cache).load_file(path)
    (fresh,) = detect(path).load(path)
    fresh.loaded_from = str(path)
    assert run == fresh  # never a stale answer
    return run.outcome.label, run.outcome.label_source


def test_mini_swe_agent_results_beside_a_run_key_its_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traj, cache = _mini(tmp_path / "in"), tmp_path / "cache"
    root = tmp_path / "in"
    _cached_twice(traj, cache, monkeypatch)
    assert _label(traj, cache) == (None, None)
    report = root / "sb-cli-reports" / "run.json"
    report.parent.mkdir()
    report.write_text(json.dumps({"resolved_ids": ["demo__demo-1"]}))  # added: a miss, labelled now
    assert _label(traj, cache) == ("resolved", "run report run.json")
    report.write_text(json.dumps({"resolved_ids": [], "unresolved_ids": ["demo__demo-1"]}))  # edited
    assert _label(traj, cache) == ("unresolved", "run report run.json")
    inst = root / "logs" / "demo__demo-1" / "report.json"  # a per-instance report wins
    inst.parent.mkdir(parents=True)
    inst.write_text(json.dumps({"demo__demo-1": {"resolved": True}}))
    assert _label(traj, cache)[0] == "resolved"
    inst.unlink()  # removed
    assert _label(traj, cache)[0] == "unresolved"
    evaluation = root / "logs" / "run_evaluation" / "r1" / "model" / "demo__demo-1" / "report.json"
    evaluation.parent.mkdir(parents=True)
    evaluation.write_text(json.dumps({"demo__demo-1": {"resolved": True}}))  # the harness's own layout
    assert _label(traj, cache)[0] == "resolved"
    report.unlink()
    inst_results = root / "results" / "results.json"  # an older experiment's results
    inst_results.parent.mkdir()
    evaluation.unlink()
    inst_results.write_text(json.dumps({"resolved": [], "no_generation": ["demo__demo-1"]}))
    assert _label(traj, cache) == ("unresolved", "results results.json")


def test_mini_swe_agent_names_the_instance_the_file_holds(tmp_path: Path) -> None:
    from workbench.importers import minisweagent

    doc = fx.v1(2)
    doc["instance_id"] = 'odd"id\\é'  # escapes in the text: read from the parsed document
    p = tmp_path / "x.traj.json"
    p.write_text(json.dumps(doc))
    assert minisweagent._instances(p)[-1] == 'odd"id\\é'
    doc["instance_id"] = 'plain"id'
    p.write_text(json.dumps(doc, ensure_ascii=False))
    assert 'plain"id' in minisweagent._instances(p)
    deps = {str(d) for d in minisweagent.dependencies(p)}
    assert str(tmp_path.resolve() / "logs" / 'plain"id' / "report.json") in deps


def test_real_mini_swe_agent_runs_come_back_equal(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trajs = sorted((shared / "mini-swe-agent").rglob("*.traj.json"))[:5]
    assert trajs
    for p in trajs:
        (run,) = _cached_twice(p, tmp_path / "cache", monkeypatch)
        assert run.outcome.label in {"resolved", "unresolved"}


def test_real_openhands_outputs_come_back_equal(
    shared: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for p in sorted((shared / "openhands").glob("*.jsonl")):
        _cached_twice(p, tmp_path / "cache", monkeypatch)


def test_generated_files_of_the_newer_formats_come_back_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    seen = set()
    for p in _write_all(folder, 20):
        seen.add(detect(p).__name__.rsplit(".", 1)[-1])
        _cached_twice(p, tmp_path / "cache", monkeypatch)
    assert {"inspect_ai", "otel_genai", "swe_agent", "aider", "gemini_cli"} <= seen


def test_openhands_output_labels_from_results_beside_key_its_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "eval" / "output.jsonl"
    out.parent.mkdir()
    out.write_text(json.dumps(shapes.v1_output_line("repo__proj-1", resolved=None)) + "\n")
    _cached_twice(out, tmp_path / "cache", monkeypatch)
    assert _label(out, tmp_path / "cache")[0] is None
    (tmp_path / "eval" / "output.report.json").write_text(json.dumps({"resolved_ids": ["repo__proj-1"]}))
    assert _label(out, tmp_path / "cache") == ("resolved", "run report output.report.json")


def test_openhands_trajectory_comes_back_equal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "trajectory.json"
    p.write_text(json.dumps(shapes.v0_trajectory(), indent=2))
    _cached_twice(p, tmp_path / "cache", monkeypatch)


def _edits(folder: Path) -> list[Callable[[], None]]:
    events = sorted((folder / "events").iterdir())
    return [
        lambda: events[-1].write_text(events[-1].read_text().replace("finished", "finishd")),  # edited
        lambda: (folder / "llm_completions").mkdir(),  # an empty folder that shadows completions/
        lambda: (folder / "completions").mkdir(),
        lambda: (folder / "completions" / "m-1.json").write_text(
            json.dumps(shapes.completion_log("r1", 1000, 50, 0.0031))
        ),
        lambda: (folder / "llm_completions").rmdir(),  # now completions/ is read
        lambda: events[-1].unlink(),  # removed
    ]


def test_a_conversation_folder_is_keyed_on_everything_in_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = shapes.write_conversation(tmp_path / "conv")
    cache = tmp_path / "cache"
    keys = {file_key(folder, detect(folder))}
    _cached_twice(folder, cache, monkeypatch)
    for edit in _edits(folder):
        edit()
        keys.add(file_key(folder, detect(folder)))
        _cached_twice(folder, cache, monkeypatch)  # a miss, equal to reading it afresh; then a hit
    assert len(keys) == 1 + len(_edits(folder))


def test_a_lone_completion_log_is_keyed_on_the_run_that_may_own_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "conv" / "llm_completions" / "m-1.json"
    log.parent.mkdir(parents=True)
    log.write_text(json.dumps(shapes.completion_log("r1", 1000, 50, 0.0031)))
    (run,) = _cached_twice(log, tmp_path / "cache", monkeypatch)
    assert run.turns[0].usage.prompt == 1000
    (tmp_path / "conv" / "base_state.json").write_text("{}")  # now part of a conversation: no run of its own
    assert FileCache(tmp_path / "cache").load_file(log) == []
