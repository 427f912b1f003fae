"""Red team, the corpus cache (issue 25): an entry is used only when it is ours and whole.

* A damaged entry (a bit flip, a truncation, random bytes) of any kind — a file's runs, its facts, the path index's
  header or its Arrow tables — is a miss: the load equals a load without the cache, one warning line names the
  entry, and the entry is rewritten (the next load is silent).
* An edited but *valid* Arrow sheet does not change a sweep.
* A pickle another user planted at the computable path is never decoded, let alone run.

Each test holds its control: the damaged bytes really differ, the edited sheet really reads differently, and the
planted pickle really runs code when unpickled."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench as wb
from workbench.cli import main
from workbench.scale import entry as entries
from workbench.scenarios.seed import mixed_corpus
from workbench.trace.native import write_run


def _folder(root: Path, n: int = 3) -> Path:
    folder = root / "in"
    folder.mkdir(exist_ok=True)
    for i, run in enumerate(mixed_corpus(n)):
        write_run(run, folder / f"{i}.jsonl")
    return folder


def _kinds(cache: Path) -> dict[str, list[Path]]:
    files = [p for p in cache.rglob("*") if p.is_file()]
    return {
        "runs": [p for p in files if p.name.endswith(".runs.pickle")],
        "facts": [p for p in files if ".facts-" in p.name],
        "header": [p for p in files if p.parent.parent.name == "index" and p.suffix == ".pickle"],
        "leaves": [p for p in files if p.name.endswith(".leaves.arrow")],
        "index runs": [p for p in files if p.name.endswith(".runs.arrow")],
    }


def _plain(corpus: wb.Corpus) -> list[dict]:
    return [r.model_dump(exclude={"loaded_from"}) for r in corpus.runs]


@pytest.fixture
def cached(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[dict]]:
    # a folder of its own in the session (a removed tmp_path's name is given again): a case whose folder and
    # content equal the previous case's would get that load's runs from memory, never reading its damaged entry
    root = tmp_path_factory.mktemp("cached")
    folder = _folder(root)
    truth = _plain(wb.load(folder, cache=False))
    cache = root / "cache"
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    return folder, cache, truth


@pytest.mark.parametrize("kind", ["runs", "facts", "header", "leaves", "index runs"])
@pytest.mark.parametrize("damage", ["bitflip", "truncate", "garbage"])
def test_a_damaged_entry_is_a_named_miss_and_is_rewritten(
    cached: tuple[Path, Path, list[dict]], kind: str, damage: str, capfd: pytest.CaptureFixture[str]
) -> None:
    folder, cache, truth = cached
    target = _kinds(cache)[kind][0]
    data = target.read_bytes()
    if damage == "bitflip":
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0x10
        bad = bytes(bad)
    elif damage == "truncate":
        bad = data[: len(data) // 2]
    else:
        bad = os.urandom(len(data))
    assert bad != data  # the control: the entry really is damaged
    target.write_bytes(bad)
    capfd.readouterr()
    if kind in ("runs", "facts"):
        (cache / "index").rename(cache / "index.gone")  # the index would answer without reading this entry
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith(f"workbench: cache entry {target} ")
    assert err[0].endswith(": ignored, read again and rewritten")
    if kind in ("runs", "facts"):
        assert target.read_bytes() != bad  # rewritten whole
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    assert capfd.readouterr().err == ""  # rewritten: the next load is silent


def test_inspect_after_a_bit_flip_exits_as_without_it(
    cached: tuple[Path, Path, list[dict]], capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, cache, _ = cached
    monkeypatch.setenv("WORKBENCH_CACHE_DIR", str(cache))
    for target in _kinds(cache)["runs"] + _kinds(cache)["header"]:
        bad = bytearray(target.read_bytes())
        bad[-7] ^= 0x01
        target.write_bytes(bytes(bad))
    capfd.readouterr()
    assert main(["inspect", str(folder)]) == 0
    err = capfd.readouterr().err
    assert "unexpected" not in err and "Traceback" not in err
    assert "does not match its checksum: ignored, read again and rewritten" in err


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["runs", "facts", "header", "leaves", "index runs"]), data=st.data())
def test_fuzzed_entries_never_raise_and_never_change_the_corpus(tmp_path_factory, kind: str, data) -> None:  # type: ignore[no-untyped-def]
    root = tmp_path_factory.mktemp("fuzz")
    folder = _folder(root, 2)
    truth = _plain(wb.load(folder, cache=False))
    cache = root / "cache"
    wb.load(folder, cache_dir=cache)
    target = _kinds(cache)[kind][0]
    raw = bytearray(target.read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(0, 2**31)) % len(raw)  # the file's length varies with tmp_path's name
        raw[at] = data.draw(st.integers(0, 255))
    target.write_bytes(bytes(raw))
    if kind in ("runs", "facts"):
        (cache / "index").rename(cache / "index.gone")
    assert _plain(wb.load(folder, cache_dir=cache)) == truth


def test_an_edited_valid_arrow_sheet_does_not_change_a_sweep(
    cached: tuple[Path, Path, list[dict]], capfd: pytest.CaptureFixture[str]
) -> None:
    folder, cache, _ = cached
    grid = {"grant": [100_000, 200_000]}
    before = wb.sweep(wb.load(folder, cache_dir=cache), grid, progress=False)
    (leaves,) = _kinds(cache)["leaves"]
    with pa.memory_map(str(leaves)) as source:
        table = pa.ipc.open_file(source).read_all()
    comp = table.column("list:comp").combine_chunks()
    edited = pa.LargeListArray.from_arrays(comp.offsets, pa.compute.multiply(comp.values, 3))
    table = table.set_column(table.schema.get_field_index("list:comp"), "list:comp", edited)
    edit = leaves.with_name("edited.arrow")
    with pa.OSFile(str(edit), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
        out.write_table(table)
    # renamed over it (the first corpus still maps the old file: rewriting it in place would fault)
    edit.replace(leaves)
    with pa.memory_map(str(leaves)) as source:  # the control: a valid sheet that reads differently
        again = pa.ipc.open_file(source).read_all()
    assert again.column("list:comp") != comp and again.num_rows == table.num_rows
    capfd.readouterr()
    after = wb.sweep(wb.load(folder, cache_dir=cache), grid, progress=False)
    assert after.equals(before)
    assert f"workbench: cache entry {leaves} does not match its checksum" in capfd.readouterr().err


class _Plant:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (Path.write_text, (self.marker, "pwned"))


def _plant(tmp_path: Path, cache: Path, *, owner: int | None, mode: int) -> tuple[Path, Path]:
    """A pickle that writes ``marker`` when unpickled, sealed correctly, in place of every runs entry."""
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Plant(marker))
    (target, *_) = _kinds(cache)["runs"]
    for t in _kinds(cache)["runs"]:
        t.write_bytes(entries.seal(t.name, payload))
        if owner is not None:
            os.chown(t, owner, owner)
        t.chmod(mode)
    pickle.loads(payload)  # the control: this pickle runs code
    assert marker.read_text() == "pwned"
    marker.unlink()
    return target, marker


@pytest.mark.skipif(os.geteuid() != 0, reason="planting a file of another user needs root (as .ci/run runs)")
def test_a_pickle_planted_by_another_user_is_never_decoded(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    cache = tmp_path / "cache"
    truth = _plain(wb.load(folder, cache_dir=cache))
    _, marker = _plant(tmp_path, cache, owner=65534, mode=0o644)
    (cache / "index").rename(cache / "index.gone")
    capfd.readouterr()
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    assert not marker.exists()
    assert "is owned by uid 65534, not by this user (uid 0): never decoded" in capfd.readouterr().err


def test_a_pickle_others_may_write_is_never_decoded(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    cache = tmp_path / "cache"
    truth = _plain(wb.load(folder, cache_dir=cache))
    _, marker = _plant(tmp_path, cache, owner=None, mode=0o666)
    (cache / "index").rename(cache / "index.gone")
    capfd.readouterr()
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    assert not marker.exists()
    err = capfd.readouterr().err
    assert (
        "workbench: cache entry " in err and ".runs.pickle is writable by other users: never decoded" in err
    )


def test_a_cache_folder_others_may_write_is_not_trusted(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, 1)
    cache = tmp_path / "cache"
    truth = _plain(wb.load(folder, cache_dir=cache))
    (target,) = _kinds(cache)["runs"]
    target.parent.chmod(0o777)  # a shared, writable folder: anyone could have put the entry there
    (cache / "index").rename(cache / "index.gone")
    capfd.readouterr()
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    assert "is in a folder writable by other users: never decoded" in capfd.readouterr().err


def test_an_entry_renamed_onto_another_is_a_mismatch(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, 2)
    cache = tmp_path / "cache"
    truth = _plain(wb.load(folder, cache_dir=cache))
    a, b = _kinds(cache)["runs"]
    b.write_bytes(a.read_bytes())  # a valid entry of ours, under another file's name
    (cache / "index").rename(cache / "index.gone")
    capfd.readouterr()
    assert _plain(wb.load(folder, cache_dir=cache)) == truth
    assert f"workbench: cache entry {b} does not match its checksum" in capfd.readouterr().err
