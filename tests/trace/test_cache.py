"""The corpus cache: a second load gives equal runs without reading the file's format again; an edited file or
unreadable file is never answered from the cache; the cache never writes beside the inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.scale import load, load_file
from workbench.scale.cache import cache_dir
from workbench.scenarios.seed import mixed_corpus
from workbench.trace.errors import TraceError, UnknownFormatError
from workbench.trace.native import write_run


def _folder(tmp_path: Path, n: int = 4) -> Path:
    folder = tmp_path / "in"
    folder.mkdir()
    for i, run in enumerate(mixed_corpus(n)):
        write_run(run, folder / f"{i}.jsonl")
    (folder / "notes.json").write_text('{"not": "a trace"}')
    return folder


def _listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def test_a_second_load_comes_from_the_cache_and_is_equal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _folder(tmp_path)
    before = _listing(folder)
    cold = load(folder, cache_dir=tmp_path / "cache")
    import workbench.importers.native as native

    def refuse(path: Path) -> list:
        raise AssertionError(f"{path} was parsed again")

    monkeypatch.setattr(native, "load", refuse)
    warm = load(folder, cache_dir=tmp_path / "cache")
    assert warm.runs == cold.runs
    assert [r.loaded_from for r in warm.runs] == [r.loaded_from for r in cold.runs]
    assert warm.skipped == cold.skipped
    assert [s.path for s in warm.skipped] == [folder / "notes.json"]
    assert _listing(folder) == before  # nothing written beside the inputs
    assert list((tmp_path / "cache").rglob("*.runs.pickle"))


def test_an_edited_file_is_read_again(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 1)
    (run,) = load(folder, cache_dir=tmp_path / "c").runs
    write_run(run.model_copy(update={"turns": run.turns[:2]}), folder / "0.jsonl")
    (again,) = load(folder, cache_dir=tmp_path / "c").runs
    assert len(again.turns) == 2


def test_unreadable_files_are_refused_every_time(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"schema": "workbench-trace", "version": 1, "run": {"run_id": 5}}\n')
    for _ in range(2):
        with pytest.raises(TraceError):
            load_file(bad, cache_dir=tmp_path / "c")
    unknown = tmp_path / "unknown.jsonl"
    unknown.write_text("hello\n")
    for _ in range(2):
        with pytest.raises(UnknownFormatError):
            load_file(unknown, cache_dir=tmp_path / "c")
    assert not list((tmp_path / "c").rglob("*.runs.pickle"))


def test_copies_keep_their_own_names_and_paths(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 2)
    copy = tmp_path / "copy"
    copy.mkdir()
    for f in folder.glob("*.jsonl"):
        (copy / f.name).write_bytes(f.read_bytes())
    corpus = load(folder, copy, cache_dir=tmp_path / "c")
    assert [r.run_id for r in corpus.runs] == ["mixed-0", "mixed-1", "mixed-0~2", "mixed-1~2"]
    # importers record the file a run came from: a copy elsewhere is an entry of its own
    assert len(list((tmp_path / "c").rglob("*.runs.pickle"))) == 4
    again = load(folder, copy, cache_dir=tmp_path / "c")
    assert [r.source_file for r in again.runs] == [r.source_file for r in corpus.runs]
    assert again.runs[2].source_file == str(copy / "0.jsonl") or again.runs[2].source_file is None


def test_the_cache_lives_outside_the_inputs_by_default(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WORKBENCH_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "budget-workbench"


def test_an_importer_that_does_not_say_what_it_reads_is_read_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workbench.importers.native as native

    folder = _folder(tmp_path, 1)
    monkeypatch.setattr(native, "CACHEABLE", False)
    calls: list[Path] = []
    real = native.load
    monkeypatch.setattr(native, "load", lambda p: calls.append(p) or real(p))
    load(folder, cache_dir=tmp_path / "c")
    load(folder, cache_dir=tmp_path / "c")
    assert len(calls) == 2 and not list((tmp_path / "c").rglob("*.runs.pickle"))


def test_a_dependency_that_changes_changes_the_key(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from workbench.scale.cache import cacheable, file_key

    trace, beside = tmp_path / "t.jsonl", tmp_path / "results.json"
    trace.write_text("{}\n")
    module = SimpleNamespace(dependencies=lambda p: [beside])
    assert cacheable(module) and not cacheable(SimpleNamespace())
    absent = file_key(trace, module)
    beside.write_text("{}")
    present = file_key(trace, module)
    beside.write_text('{"resolved": []}')
    changed = file_key(trace, module)
    assert len({absent, present, changed}) == 3
    assert file_key(trace, module) == changed


def test_claude_code_names_the_files_it_reads_beside(tmp_path: Path) -> None:
    from workbench.importers import claude_code

    session = tmp_path / "abc.jsonl"
    sub = tmp_path / "abc" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-acompact-1.jsonl").write_text("")
    (sub / "agent-x.jsonl").write_text("")
    assert claude_code.dependencies(sub / "agent-x.jsonl") == [sub / "agent-x.meta.json", session]
    assert claude_code.dependencies(session) == [
        tmp_path / "abc.meta.json",
        sub / "agent-acompact-1.jsonl",
        sub / "agent-x.jsonl",
    ]


def test_openhands_names_its_completion_logs(tmp_path: Path) -> None:
    from workbench.importers import openhands

    output = tmp_path / "output.jsonl"
    output.write_text("")
    logs = tmp_path / "llm_completions"
    assert openhands.dependencies(output)[:1] == [logs]  # absent: its appearing changes the key
    (logs / "run-1").mkdir(parents=True)
    (logs / "run-1" / "a.json").write_text("{}")
    deps = openhands.dependencies(output)
    assert deps[:3] == [logs, logs / "run-1" / "a.json", logs / "run-1"]
    # and the SWE-bench results it looks for beside the file (labels of runs without a test_result)
    assert tmp_path.resolve() / "results" / "results.json" in deps
