"""One battery for every importer, as scikit-learn's ``check_estimator`` runs over every estimator (issue 21).

Every module :func:`workbench.importers.importers` returns is enrolled: no list is kept here. Each must
* have a sample of each documented version in the registry (tests/samples/__init__.py), read with the calls,
  runs and tokens an independent reading counts;
* recognise its own samples and no other format's (unique detection), whatever the file is named;
* survive bad input: a file cut at any byte, a field set to garbage, huge numbers — a clear ``TraceError`` or
  runs with diagnostics, never another exception, never an implausible token count;
* round-trip what it read through the native format;
* honour its facts contract where it declares one (``FACTS``).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samples import Sample, Sized, samples, samples_for, sized, write_all, write_sample
from workbench.importers import HEAD_LINES, detect, importers, read_head
from workbench.trace import TraceError, read_run, write_run
from workbench.trace.limits import MAX_TOKEN_COUNT

ENROLLED = importers()
SAMPLES = samples()  # built here, not inside a property test (the writers' modules hold tests of their own)
IDS = [m.__name__.rsplit(".", 1)[1] for m in ENROLLED]
SETTINGS = settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> dict[Sample, Path]:
    return write_all(tmp_path_factory.mktemp("samples"))


def _heads(path: Path) -> list[list[bytes]]:
    """The heads a sniffer is asked with: the short one and the full one (a folder has none)."""
    return [[]] if path.is_dir() else [read_head(path, HEAD_LINES), read_head(path)]


def _totals(runs: list[Any]) -> tuple[int, int, int]:
    return (
        sum(len(r.turns) for r in runs),
        sum(r.total("prompt") or 0 for r in runs),
        sum(r.total("completion") or 0 for r in runs),
    )


def test_the_enrolment_is_the_importer_list_itself() -> None:
    """Every importer has samples and every sample names an importer: adding a module to ``importers()``
    enrols it, and it fails here until it brings its samples."""
    names = {m.__name__ for m in ENROLLED}
    assert {s.module for s in samples()} == names
    assert len(ENROLLED) >= 14


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
def test_each_version_reads_with_the_calls_and_tokens_of_an_independent_reading(
    module: ModuleType, written: dict[Sample, Path]
) -> None:
    mine = samples_for(module.__name__)
    assert mine, f"{module.__name__} has no sample"
    assert len({s.version for s in mine}) == len(mine), "one sample per version"
    for s in mine:
        path = written[s]
        assert detect(path) is module, (s.version, detect(path).__name__)
        runs = module.load(path)
        calls, prompt, completion = _totals(runs)
        assert (calls, len(runs)) == (s.calls, s.runs), s.version
        if s.prompt is not None:
            assert prompt == s.prompt, s.version
        if s.completion is not None:
            assert completion == s.completion, s.version


@pytest.mark.parametrize("entry", sized(), ids=lambda s: s.module.rsplit(".", 1)[1])
def test_each_sized_sample_reads_as_its_importer_with_the_calls_it_was_written_with(
    entry: Sized, tmp_path: Path
) -> None:
    """The files the import benchmark times (``write_sized``) are what they say: their format, at their size."""
    for n in (1, 7):
        folder = tmp_path / str(n)
        folder.mkdir()
        path = entry.write(folder / f"generated.{entry.suffix}", n)
        module = detect(path)
        assert module.__name__ == entry.module
        assert _totals(module.load(path))[0] == n * entry.unit


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
def test_detection_is_unique_against_every_other_formats_samples(
    module: ModuleType, written: dict[Sample, Path]
) -> None:
    for s, path in written.items():
        for head in _heads(path):
            assert bool(module.sniff(path, head)) == (s.module == module.__name__), (s.id, len(head))


def test_detection_ignores_the_file_name(tmp_path: Path, written: dict[Sample, Path]) -> None:
    for s, path in written.items():
        if path.is_dir():
            continue
        neutral = tmp_path / f"{samples().index(s)}-data"
        neutral.write_bytes(path.read_bytes())
        assert detect(neutral).__name__ == s.module, s.version


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
def test_what_it_reads_round_trips_through_the_native_format(
    module: ModuleType, written: dict[Sample, Path], tmp_path: Path
) -> None:
    for k, s in enumerate(samples_for(module.__name__)):
        for i, run in enumerate(module.load(written[s])):
            back = read_run(write_run(run, tmp_path / f"{k}-{i}.jsonl"))
            # diagnostics name the foreign file's problems: the native file has none of its own
            same = {"loaded_from", "diagnostics"}
            assert back.model_dump(exclude=same) == run.model_dump(exclude=same), s.version


# -- bad input ------------------------------------------------------------------------------------------------


def _target(path: Path) -> Path:
    """The file a mutation works on: the sample, or the largest file of a sample folder."""
    if path.is_file():
        return path
    return max((p for p in path.rglob("*") if p.is_file()), key=lambda p: p.stat().st_size)


def _copy(path: Path, into: Path) -> Path:
    dest = into / path.name
    if path.is_dir():
        shutil.copytree(path, dest)
    else:
        shutil.copy2(path, dest)
    return dest


def _read_survives(module: ModuleType, path: Path) -> list[Any]:
    """Load as a user would (detect, then load): a TraceError is the one allowed failure; what is read has
    plausible figures and names its problems' file."""
    try:
        runs = detect(path).load(path)
    except TraceError as exc:
        assert str(exc).strip() and "\n" not in str(exc).strip()
        return []
    for r in runs:
        for t in r.turns:
            for v in (t.usage.prompt, t.usage.cached, t.usage.cache_write, t.usage.completion):
                assert v is None or 0 <= v <= MAX_TOKEN_COUNT
        for d in r.diagnostics:
            assert d.file
    return runs


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_a_file_cut_at_any_byte_is_read_or_refused_clearly(module: ModuleType, data: st.DataObject) -> None:
    mine = samples_for(module.__name__)
    s = data.draw(st.sampled_from(mine), label="sample")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_sample(s, Path(tmp))
        target = _target(path)
        raw = target.read_bytes()
        cut = data.draw(st.integers(0, max(len(raw) - 1, 0)), label="cut")
        target.write_bytes(raw[:cut])
        if cut == 0 and path.is_file():
            with pytest.raises(TraceError):
                detect(path)
            return
        _read_survives(module, path)


GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**40), 10**40),
    st.floats(allow_nan=True, allow_infinity=False),
    st.text(max_size=20),
    st.just([]),
    st.just({}),
    st.just([None, {"x": 1}]),
)


def _paths(obj: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append((*at, k))
            out.extend(_paths(v, (*at, k)))
    elif isinstance(obj, list):
        for i, v in enumerate(obj[:20]):
            out.append((*at, i))
            out.extend(_paths(v, (*at, i)))
    return out


def _set(obj: Any, path: tuple[Any, ...], value: Any) -> None:
    for k in path[:-1]:
        obj = obj[k]
    obj[path[-1]] = value


def _json_records(raw: bytes) -> tuple[list[Any], bool] | None:
    """The file's JSON: ``([doc], False)`` for one document, ``(records, True)`` for JSON lines; ``None`` for text."""
    try:
        return [json.loads(raw)], False
    except ValueError:
        pass
    try:
        return [json.loads(line) for line in raw.splitlines() if line.strip()], True
    except ValueError:
        return None


def _write_records(target: Path, records: list[Any], lines: bool) -> None:
    if lines:
        target.write_text("".join(json.dumps(r) + "\n" for r in records))
    else:
        target.write_text(json.dumps(records[0]))


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
@SETTINGS
@given(data=st.data())
def test_a_garbage_field_is_a_diagnostic_not_a_crash(module: ModuleType, data: st.DataObject) -> None:
    s = data.draw(st.sampled_from(samples_for(module.__name__)), label="sample")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_sample(s, Path(tmp))
        target = _target(path)
        raw = target.read_bytes()
        parsed = _json_records(raw)
        if parsed is None:  # a text format (Aider) or a zip (Inspect's .eval): a line of garbage instead
            lines = raw.split(b"\n")
            at = data.draw(st.integers(0, len(lines) - 1), label="line")
            lines[at] = data.draw(st.binary(max_size=40), label="garbage").replace(b"\n", b" ")
            target.write_bytes(b"\n".join(lines))
        else:
            records, is_lines = parsed
            paths = _paths(records)
            where = data.draw(st.sampled_from(paths), label="field")
            _set(records, where, data.draw(GARBAGE, label="value"))
            _write_records(target, records, is_lines)
        _read_survives(module, path)


def _inflate(obj: Any, big: int) -> Any:
    if isinstance(obj, bool):
        return obj
    if isinstance(obj, int):
        return big
    if isinstance(obj, dict):
        return {k: _inflate(v, big) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_inflate(v, big) for v in obj]
    return obj


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
@pytest.mark.parametrize("big", [2**53 + 1, 2**63, 10**30])
def test_huge_numbers_are_refused_as_implausible(module: ModuleType, big: int, tmp_path: Path) -> None:
    for k, s in enumerate(samples_for(module.__name__)):
        path = write_sample(s, tmp_path / f"{k}")
        target = _target(path)
        parsed = _json_records(target.read_bytes())
        if parsed is None:
            target.write_text(target.read_text(errors="replace").replace("340 received", f"{big} received"))
        else:
            records, is_lines = parsed
            _write_records(target, [_inflate(r, big) for r in records], is_lines)
        _read_survives(module, path)


# -- the facts contract (issue 21 item 1) -----------------------------------------------------------------------

FACT_STATUSES = {"recorded", "inferred", "unknown"}


@pytest.mark.parametrize("module", ENROLLED, ids=IDS)
def test_the_facts_contract_is_declared_in_its_three_statuses(module: ModuleType) -> None:
    facts = getattr(module, "FACTS", None)
    if facts is None:
        pytest.skip(f"{module.__name__} declares no FACTS yet (the contract of issue 21 item 1)")
    for fact, declared in dict(facts).items():
        status = getattr(declared, "status", declared[0] if isinstance(declared, tuple) else declared)
        assert status in FACT_STATUSES, (fact, declared)
