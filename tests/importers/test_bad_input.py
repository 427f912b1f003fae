"""Corrupted, truncated and adversarial lines, fed to the native reader and every importer.

Properties: nothing raises (bar one clear TraceError when no record at all is readable); every problem
names the file and the line; no valid record is lost; what was read can be written back.
"""

from __future__ import annotations

import json
import tempfile
from importlib import import_module
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samples import Sample, document_samples, line_samples, sample
from workbench.importers import openai_log
from workbench.trace import TraceError, read_run, write_run

# Every JSON-lines sample of the registry, and every whole-document one: a sample added there is battered here.
LINES = line_samples()
DOCUMENTS = document_samples()


def _ids(s: Sample) -> str:
    return s.id


def _load(s: Sample, path: Path) -> list:
    return import_module(s.module).load(path)


def _not_a_record(raw: bytes) -> bool:
    try:
        return not isinstance(orjson.loads(raw), dict)
    except orjson.JSONDecodeError:
        return True


def garbage_lines() -> st.SearchStrategy[bytes]:
    """Lines no reader can take as a record: each must become one diagnostic at its own line."""
    deep = st.integers(1025, 3000).map(lambda n: b"[" * n + b"]" * n)
    deep_obj = st.integers(1025, 1500).map(lambda n: b'{"a":' * n + b"1" + b"}" * n)
    invalid_utf8 = st.binary(min_size=1, max_size=8).map(lambda b: b'{"type": "user", "x": "\xff' + b + b'"}')
    scalar = st.sampled_from([b"1", b"null", b'"text"', b"[1, 2]", b"true", b"NaN", b"1e400"])
    noise = st.binary(min_size=1, max_size=200).filter(
        lambda b: b"\n" not in b and b.strip() and _not_a_record(b)
    )
    huge = st.just(b'{"a": ' + b"9" * 400 + b"}")
    return st.one_of(deep, deep_obj, invalid_utf8, scalar, noise, huge).filter(
        lambda b: b"\n" not in b and _not_a_record(b)
    )


json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**63), max_value=2**64 - 1),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=20),
    ),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)


def nested_lists(depth: int) -> st.SearchStrategy[list]:
    """Empty lists nested deep, for a value placed ``depth`` levels down: the record stays within orjson's
    254 levels (a deeper one cannot be written at all), however many mutations pile up."""
    return st.integers(2, max(2, 200 - depth)).map(lambda n: json.loads("[" * n + "]" * n))


def _mutate(record: object, path: list[object], value: object) -> object:
    """Replace the value at ``path`` (a walk of dict keys / list indices) with ``value``."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(record, dict) and head in record:
        return {**record, head: _mutate(record[head], rest, value)}
    if isinstance(record, list) and isinstance(head, int) and head < len(record):
        return [*record[:head], _mutate(record[head], rest, value), *record[head + 1 :]]
    return record


def _paths(record: object, prefix: tuple = ()) -> list[list[object]]:
    out = [list(prefix)] if prefix else []
    if isinstance(record, dict):
        for k, v in record.items():
            out.extend(_paths(v, (*prefix, k)))
    elif isinstance(record, list):
        for i, v in enumerate(record[:3]):
            out.extend(_paths(v, (*prefix, i)))
    return out


@st.composite
def adversarial_records(draw: st.DrawFn, lines: list[bytes]) -> bytes:
    """A record of the format with one field replaced: wrong types, huge or negative numbers, nesting."""
    base = orjson.loads(draw(st.sampled_from(lines)))
    paths = _paths(base)
    path = draw(st.sampled_from(paths)) if paths else []
    value = draw(
        st.one_of(
            json_values,
            st.sampled_from([-1, -(10**9), 10**15, 2**63 - 1, 1.5, "12", [], {}]),
            nested_lists(len(path)),
        )
    )
    return orjson.dumps(_mutate(base, path, value)) + b"\n"


def _check(s: Sample, path: Path, bad_lines: set[int]) -> None:
    try:
        runs = _load(s, path)
    except TraceError as exc:  # allowed only when nothing readable is left, which never happens here
        pytest.fail(f"{s.id}: whole file rejected: {exc}")
    diags = [d for r in runs for d in r.diagnostics]
    for d in diags:
        assert d.file == str(path)
        assert d.line is not None or d.field is not None, str(d)
    lines_with_problems = {d.line for d in diags}
    assert bad_lines <= lines_with_problems, (bad_lines - lines_with_problems, [str(d) for d in diags])
    assert sum(len(r.turns) for r in runs) >= s.calls
    with tempfile.TemporaryDirectory() as out:
        for i, r in enumerate(runs):
            again = read_run(write_run(r, Path(out) / f"{i}.jsonl"))
            assert len(again.turns) == len(r.turns)


@pytest.mark.parametrize("s", LINES, ids=_ids)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_garbage_lines_are_reported_and_nothing_valid_is_lost(s: Sample, data: st.DataObject) -> None:
    assert s.lines is not None
    lines, keep = s.lines(), s.keep
    out = list(lines)
    inserted = data.draw(
        st.lists(st.tuples(st.integers(keep, len(lines)), garbage_lines()), min_size=1, max_size=4)
    )
    for at, raw in sorted(inserted, key=lambda x: -x[0]):
        out.insert(at, raw + b"\n")
    truncate = data.draw(st.booleans())
    if truncate:  # a writer killed mid-line: the last line is cut short
        last = lines[-1]
        cut = data.draw(st.integers(1, len(last) - 2))
        out.append(last[:cut])
    bad = {i + 1 for i, raw in enumerate(out) if _not_a_record(raw)}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / s.name
        path.write_bytes(b"".join(out))
        _check(s, path, bad)
        if truncate:
            (last_diag,) = [d for r in _load(s, path) for d in r.diagnostics if d.line == len(out)]
            assert "truncated" in last_diag.message


@pytest.mark.parametrize("s", LINES, ids=_ids)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_adversarial_records_never_crash(s: Sample, data: st.DataObject) -> None:
    assert s.lines is not None
    lines, keep = s.lines(), s.keep
    out = list(lines)
    for _ in range(data.draw(st.integers(1, 3))):
        record = data.draw(adversarial_records(lines[keep:]))
        out.insert(data.draw(st.integers(keep, len(out))), record)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / s.name
        path.write_bytes(b"".join(out))
        try:
            runs = _load(s, path)
        except TraceError as exc:
            pytest.fail(f"{s.id}: {exc}")
        for r in runs:
            for d in r.diagnostics:
                assert d.file == str(path)
                assert d.line is not None or d.field is not None
            again = read_run(write_run(r, Path(tmp) / "out.jsonl"))
            skip = {"loaded_from", "diagnostics"}
            assert again.model_dump(exclude=skip) == r.model_dump(exclude=skip)


@pytest.mark.parametrize("s", LINES, ids=_ids)
def test_a_file_of_only_garbage_is_one_clear_error(s: Sample, tmp_path: Path) -> None:
    path = tmp_path / "junk.jsonl"
    path.write_bytes(b"not json\n\xff\xfe\n[1, 2]\n")
    with pytest.raises(TraceError) as err:
        _load(s, path)
    assert str(path) in str(err.value)


def test_negative_and_inflated_tokens_are_dropped_with_a_diagnostic(tmp_path: Path) -> None:
    lines = (
        sample("openai_log", "request/response lines").write(tmp_path).read_bytes().splitlines(keepends=True)
    )
    bad = orjson.loads(lines[1])
    bad["response"]["usage"] = {
        "prompt_tokens": -5,
        "completion_tokens": 10**13,
        "prompt_tokens_details": {"cached_tokens": "7"},
    }
    path = tmp_path / "log.jsonl"
    path.write_bytes(lines[0] + orjson.dumps(bad) + b"\n" + lines[2])
    (run,) = openai_log.load(path)
    assert run.turns[0].usage.prompt is None and run.turns[0].usage.completion is None
    assert run.turns[0].usage.cached is None
    assert {(d.line, d.field) for d in run.diagnostics} == {
        (2, "response.usage.prompt_tokens"),
        (2, "response.usage.completion_tokens"),
        (2, "response.usage.prompt_tokens_details.cached_tokens"),
    }
    assert run.turns[1].usage.prompt == 20


def test_a_huge_message_index_is_rejected_not_allocated(tmp_path: Path) -> None:
    lines = (
        sample("native", "budget-workbench/trace 1").write(tmp_path).read_bytes().splitlines(keepends=True)
    )
    path = tmp_path / "t.jsonl"
    path.write_bytes(
        lines[0] + b'{"m": 1000000000000000000, "message": {"role": "user"}}\n' + b"".join(lines[1:])
    )
    run = read_run(path)
    assert [(d.line, d.field) for d in run.diagnostics] == [(2, "m")]
    assert len(run.messages) == 3 and len(run.turns) == 2


# -- whole-document formats: a field replaced anywhere, or the file cut short -----------------------------------


def _write_document(path: Path, doc: object) -> None:
    if path.suffix == ".eval":
        from tests.importers.test_inspect_ai import write_eval

        if (
            isinstance(doc, dict)
            and isinstance(doc.get("samples"), list)
            and isinstance(doc.get("eval"), dict)
        ):
            write_eval(path, {"plan": {}, **doc}) if all(
                isinstance(s, dict) for s in doc["samples"]
            ) else None
            if path.exists():
                return
        import zipfile

        with zipfile.ZipFile(path, "w") as z:
            z.writestr("header.json", orjson.dumps(doc))
        return
    path.write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))


@pytest.mark.parametrize("s", DOCUMENTS, ids=_ids)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_adversarial_fields_in_documents_never_crash(s: Sample, data: st.DataObject) -> None:
    assert s.doc is not None
    doc = s.doc()
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        value = data.draw(
            st.one_of(
                json_values,
                st.sampled_from([-1, -(10**9), 10**15, 2**63 - 1, 1.5, "12", [], {}, None]),
                nested_lists(len(path)),
            )
        )
        doc = _mutate(doc, path, value)
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / Path(s.name).name
        try:
            _write_document(file, doc)
        except (orjson.JSONEncodeError, TypeError):
            return  # the mutation cannot be written as JSON at all
        try:
            runs = _load(s, file)
        except (
            TraceError
        ) as exc:  # allowed: nothing readable left (e.g. the step list replaced); it names the file
            assert exc.file == str(file)
            return
        for r in runs:
            for d in r.diagnostics:
                assert d.file == str(file)
                assert d.line is not None or d.field is not None, str(d)
            again = read_run(write_run(r, Path(tmp) / "out.jsonl"))
            skip = {"loaded_from", "diagnostics"}
            assert again.model_dump(exclude=skip) == r.model_dump(exclude=skip)


@pytest.mark.parametrize(
    "s", [s for s in DOCUMENTS if s.cut_refused and not s.name.endswith(".eval")], ids=_ids
)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_document_cut_short_is_one_error_naming_file_and_line(s: Sample, data: st.DataObject) -> None:
    assert s.doc is not None
    try:
        text = orjson.dumps(s.doc(), option=orjson.OPT_INDENT_2)
    except TypeError:  # orjson refuses integers past 64 bits (any-agent's trace ids)
        text = json.dumps(s.doc(), indent=2).encode()
    cut = data.draw(st.integers(1, len(text) - 2))
    with tempfile.TemporaryDirectory() as tmp:
        file = Path(tmp) / Path(s.name).name
        file.write_bytes(text[:cut])
        with pytest.raises(TraceError) as err:
            _load(s, file)
        assert err.value.file == str(file) and err.value.line is not None


def test_aider_history_cut_short_keeps_every_whole_call(tmp_path: Path) -> None:
    from tests.importers.test_aider import V046, V060, write
    from workbench.importers import aider

    full = write(tmp_path, V046 + V060).read_bytes()
    for cut in range(60, len(full), 37):
        path = tmp_path / "cut" / ".aider.chat.history.md"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(full[:cut])
        runs = aider.load(path)
        calls = sum(1 for line in full[:cut].decode().splitlines() if aider.TOKENS.match(line))
        assert sum(len(r.turns) for r in runs) == calls


# -- whole-document formats: OpenHands trajectory arrays, conversation folders, completion logs ---------------
# Not line-oriented, so the battery above cannot insert lines into them: each gets its elements, event files or
# fields replaced instead. Every diagnostic names its file and a line (the line its event starts on).


def _documents_ok(runs: list, allowed_files: set[str], tmp: Path) -> None:
    for r in runs:
        for d in r.diagnostics:
            assert d.file in allowed_files, str(d)
            assert d.line is not None, str(d)
        again = read_run(write_run(r, tmp / "out.jsonl"))
        skip = {"loaded_from", "diagnostics"}
        assert again.model_dump(exclude=skip) == r.model_dump(exclude=skip)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_trajectory_arrays_survive_bad_elements(data: st.DataObject) -> None:
    from tests.importers import openhands_shapes
    from workbench.importers import openhands_trajectory

    events: list = data.draw(
        st.sampled_from([openhands_shapes.v0_trajectory(), openhands_shapes.v1_events()])
    )
    for _ in range(data.draw(st.integers(1, 3))):
        record = orjson.loads(data.draw(adversarial_records([orjson.dumps(e) for e in events])))
        events.insert(data.draw(st.integers(1, len(events))), record)
    if data.draw(st.booleans()):
        events.insert(data.draw(st.integers(1, len(events))), data.draw(json_values))
    text = json.dumps(events, indent=data.draw(st.sampled_from([None, 2, 4])))
    if data.draw(st.booleans()):
        text = text[: data.draw(st.integers(len(text) // 2, len(text) - 1))]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "traj.json"
        path.write_text(text)
        try:
            runs = openhands_trajectory.load(path)
        except TraceError as exc:
            assert str(path) in str(exc)
            return
        _documents_ok(runs, {str(path)}, Path(tmp))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_conversation_folders_survive_bad_event_files(data: st.DataObject) -> None:
    from workbench.importers import openhands_conversation

    with tempfile.TemporaryDirectory() as tmp:
        folder = sample("openhands_conversation", "V1 conversation folder").write(Path(tmp))
        files = [*sorted((folder / "events").iterdir()), folder / "base_state.json"]
        original = {p: p.read_bytes() for p in files}
        for _ in range(data.draw(st.integers(1, 3))):
            target = data.draw(st.sampled_from(files))
            if data.draw(st.booleans()):
                raw = data.draw(adversarial_records([original[target]]))
            else:
                raw = data.draw(garbage_lines())
            target.write_bytes(raw)
        runs = openhands_conversation.load(folder)
        _documents_ok(runs, {str(p) for p in files}, Path(tmp))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_completion_logs_survive_bad_fields(data: st.DataObject) -> None:
    from workbench.importers import openhands_completions

    log = data.draw(st.sampled_from([s for s in DOCUMENTS if s.module == openhands_completions.__name__]))
    assert log.doc is not None
    base = orjson.dumps(log.doc())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "llm_completions" / "x"
        folder.mkdir(parents=True)
        path = folder / "m-1.json"
        path.write_bytes(data.draw(adversarial_records([base])))
        try:
            runs = openhands_completions.load(path)
        except TraceError as exc:
            assert str(path) in str(exc)
            return
        _documents_ok(runs, {str(path)}, Path(tmp))
        found = openhands_completions.read_folder(folder)
        assert all(d.file == str(path) and d.line is not None for d in found.diagnostics)
