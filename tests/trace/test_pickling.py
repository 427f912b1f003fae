"""The cache's pickle of runs (workbench.scale.pickling): read back equal to what was pickled, field for field and
field-name set for field-name set, with one shared field-name set per kind of model and a key-sharing dict per
object; a shared set is never changed in place (an assignment, a copy, pydantic's own pickle)."""

from __future__ import annotations

import copy
import pickle
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
from tests.samples import samples, write_sample
from workbench.scale.pickling import dumps
from workbench.trace.schema import Message, Run, SharedFields, ToolCall, Turn, Usage


def _models(value: object) -> list[object]:
    """Every pydantic model under ``value`` (each object once)."""
    from pydantic import BaseModel

    out, seen, stack = [], set(), [value]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, BaseModel):
            out.append(x)
            stack.extend(x.__dict__.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        elif isinstance(x, dict):
            stack.extend(x.values())
    return out


def _same(back: list[Run], runs: list[Run]) -> None:
    assert back == runs
    assert [r.model_dump_json() for r in back] == [r.model_dump_json() for r in runs]
    assert [r.model_dump(exclude_unset=True) for r in back] == [
        r.model_dump(exclude_unset=True) for r in runs
    ]
    for a, b in zip(_models(back), _models(runs), strict=True):
        assert type(a) is type(b)
        assert a.model_fields_set == b.model_fields_set  # type: ignore[attr-defined]
        assert list(a.__dict__) == list(b.__dict__)


def test_every_sample_format_reads_back_equal(tmp_path: Path) -> None:
    for k, sample in enumerate(samples()):
        path = write_sample(sample, tmp_path / str(k))
        runs = list(wb.load(path, cache=False).runs)
        assert runs, sample
        _same(pickle.loads(dumps(runs)), runs)


def test_the_shared_traces_read_back_equal_and_smaller(shared: Path) -> None:
    runs = list(wb.load(shared, cache=False).runs)
    back = pickle.loads(dumps(runs))
    _same(back, runs)
    models = _models(back)
    names = {id(m.__pydantic_fields_set__) for m in models}  # type: ignore[attr-defined]
    assert all(type(m.__pydantic_fields_set__) is SharedFields for m in models)  # type: ignore[attr-defined]
    assert len(names) < 100 < len(models) // 100  # 39 sets for 31,058 models (the 125 runs)
    turn, plain = back[0].turns[0], pickle.loads(pickle.dumps(runs[0].turns[0]))
    assert sys.getsizeof(turn.__dict__) < sys.getsizeof(plain.__dict__)  # keys shared with its class


usages = st.builds(
    Usage,
    prompt=st.none() | st.integers(0, 10**6),
    cached=st.none() | st.integers(0, 10**6),
    completion=st.none() | st.integers(0, 10**6),
    cost=st.none() | st.floats(0, 10, allow_nan=False),
)
messages = st.builds(
    Message,
    role=st.sampled_from(["system", "user", "assistant", "tool"]),
    content=st.none() | st.text(max_size=20),
    tool_calls=st.lists(st.builds(ToolCall, name=st.text(min_size=1, max_size=5)), max_size=2),
    kind=st.none() | st.sampled_from(["wrapup", "landing"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(usages, messages), max_size=6), st.data())
def test_random_models_read_back_with_their_field_sets(
    parts: list[tuple[Usage, Message]], data: st.DataObject
) -> None:
    """Models built with any subset of their fields (defaults left unset) keep exactly that subset."""
    turns = [
        Turn(index=k, usage=u) if data.draw(st.booleans()) else Turn(index=k)
        for k, (u, _) in enumerate(parts)
    ]
    run = Run(run_id="r", source="synthetic", messages=[m for _, m in parts])
    value = [run, turns, [u for u, _ in parts]]
    back = pickle.loads(dumps(value))
    assert back == value
    for a, b in zip(_models(back), _models(value), strict=True):
        assert a.model_fields_set == b.model_fields_set  # type: ignore[attr-defined]


def test_equal_strings_and_field_sets_are_one_object_read_back() -> None:
    """Equal strings of one entry (a model name on every turn) are read back as one object, and models of two
    entries built with the same field names share one set in the process."""
    name = "".join(["gpt-", "x" * 40])  # built apart from the copy below: two objects of equal value
    turns = [Turn(index=0, model=name), Turn(index=1, model="".join(["gpt-", "x" * 40]))]
    assert turns[0].model is not turns[1].model
    first = pickle.loads(dumps(turns))
    assert first == turns and first[0].model is first[1].model
    (other,) = pickle.loads(dumps([Turn(index=7, model="m")]))
    assert other.__pydantic_fields_set__ is first[0].__pydantic_fields_set__  # type: ignore[attr-defined]
    assert len(dumps(turns)) < len(pickle.dumps(turns))


def _restored() -> tuple[Usage, Usage]:
    first, second = pickle.loads(dumps([Usage(prompt=1), Usage(prompt=2)]))
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    return first, second


def test_an_assignment_changes_only_its_own_model() -> None:
    first, second = _restored()
    first.cached = 5
    assert (first.cached, first.model_fields_set) == (5, {"prompt", "cached"})
    assert second.model_fields_set == {"prompt"}
    assert second.model_dump(exclude_unset=True) == {"prompt": 2}


def test_a_copy_has_a_set_of_its_own() -> None:
    first, second = _restored()
    edited = first.model_copy(update={"completion": 3})
    deep = second.model_copy(update={"cached": 1}, deep=True)
    assert edited.model_fields_set == {"prompt", "completion"} and deep.model_fields_set == {
        "prompt",
        "cached",
    }
    assert first.model_fields_set == second.model_fields_set == {"prompt"}
    assert type(copy.copy(first.__pydantic_fields_set__)) is set


def test_the_shared_set_refuses_changes_in_place() -> None:
    first, _ = _restored()
    shared = first.__pydantic_fields_set__
    for change in (
        lambda s: s.add("cached"),
        lambda s: s.update({"cached"}),
        lambda s: s.discard("prompt"),
        lambda s: s.clear(),
        lambda s: s.__ior__({"cached"}),
    ):
        with pytest.raises(TypeError, match="shared"):
            change(shared)
    assert shared == {"prompt"}


def test_pydantic_s_own_pickle_of_a_restored_model_still_works() -> None:
    first, _ = _restored()
    again = pickle.loads(pickle.dumps(first))
    assert again == first and again.model_fields_set == {"prompt"}
    again.cached = 1  # its set is a SharedFields of its own: assignment still gives it a plain one
    assert again.model_fields_set == {"prompt", "cached"}


def test_a_sealed_run_read_back_still_refuses_assignment(shared: Path) -> None:
    corpus = wb.load(shared)  # through the cache: runs read back from their entries
    run = corpus.runs[0]
    with pytest.raises(TypeError, match="read-only"):
        run.model = "x"
    edited = run.model_copy(update={"model": "x"})
    assert edited.model == "x" and "model" in edited.model_fields_set


def test_a_diagnostic_log_pickles_and_copies_with_its_counts() -> None:
    from workbench.trace.limits import DiagnosticLog
    from workbench.trace.schema import Diagnostic

    log = DiagnosticLog("f.jsonl", limit=2)
    for k in range(5):
        log.append(Diagnostic(file="f.jsonl", line=k + 1, message=f"bad {k}"))
    shallow = copy.copy(log)
    assert type(shallow) is DiagnosticLog and list(shallow) == list(log) and shallow.total == 5
    for back in (pickle.loads(pickle.dumps(log)), pickle.loads(dumps(log)), copy.deepcopy(log)):
        assert type(back) is DiagnosticLog and list(back) == list(log)
        assert (back.file, back.limit, back.dropped, back.total) == ("f.jsonl", 2, 3, 5)
        back.append(Diagnostic(file="f.jsonl", line=6, message="bad 5"))
        assert back.total == 6 and back[-1].message.startswith("4 more problems")
    assert log.total == 5 and log[-1].message.startswith("3 more problems")


def test_a_file_with_bad_lines_is_read_back_from_its_cache_entry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its runs carry a DiagnosticLog, which pickle could not read back: every load re-read the file and said
    that the entry "cannot be decoded"."""
    from tests.trace.test_cli import log_file
    from workbench.importers import detect

    src = log_file(tmp_path)
    src.write_bytes(src.read_bytes() + b'{"request": {"messages": [')
    first = list(wb.load(src, cache_dir=tmp_path / "cache").runs)
    assert any(r.diagnostics for r in first)
    module = detect(src)
    monkeypatch.setattr(module, "load", lambda *a, **k: pytest.fail("parsed again"))
    again = list(wb.load(src, cache_dir=tmp_path / "cache").runs)
    assert again == first and [len(r.diagnostics) for r in again] == [len(r.diagnostics) for r in first]
    assert "cannot be decoded" not in capsys.readouterr().err


def test_runs_restored_after_a_parse_still_share_their_dict_keys() -> None:
    """A first load parses (validating thousands of models) before it restores its runs from what it pickled: in
    a fresh interpreter, a Turn restored after 300 were validated has the small, key-sharing dict."""
    import subprocess

    code = (
        "import sys, pickle\n"
        "from workbench.scale.pickling import dumps\n"
        "from workbench.trace.schema import Turn, Usage\n"
        "made = [Turn(index=i, usage=Usage(prompt=i)) for i in range(300)]\n"
        "back = pickle.loads(dumps(made))\n"
        "plain = pickle.loads(pickle.dumps(made))\n"
        "print(max(map(sys.getsizeof, (t.__dict__ for t in back))), min(map(sys.getsizeof, (t.__dict__ for t in plain))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    shared, own = map(int, out)
    assert shared < own
