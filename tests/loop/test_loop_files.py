"""Red team: the loop's own files (spilled results, the trace) cannot be redirected by links the model plants.

The spill store is a loop-owned folder outside the workspace, opened once; every file in it is created with
``O_EXCL | O_NOFOLLOW`` inside the held descriptor. The trace is one descriptor opened without following a link
before any tool runs. Each attack has a control showing what the old code did with the same plant."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workbench.context.spill import DirectorySpill
from workbench.loop.recorder import Recorder, open_trace
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace.schema import Run


def _old_preserve(root: Path, key: str, text: str) -> None:
    """The spill store before the fix (``path.exists()`` then ``write_text``): the control."""
    path = root / f"{key}.txt"
    root.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        path.write_text(text, encoding="utf-8")


def test_a_dangling_link_planted_in_the_spill_folder_is_not_written_through(tmp_path: Path) -> None:
    store = DirectorySpill(tmp_path / "spill")
    target = tmp_path / "host" / "planted-by-model.txt"
    target.parent.mkdir()
    os.symlink(target, tmp_path / "spill" / "call_7.txt")
    assert (
        store.preserve("call_7", "model-chosen content") is None
    )  # no pointer names a file it did not write
    assert not target.exists()
    assert store.preserve("call_8", "kept") == str(tmp_path / "spill" / "call_8.txt")
    assert (tmp_path / "spill" / "call_8.txt").read_text() == "kept"
    assert oct((tmp_path / "spill").stat().st_mode & 0o777) == "0o700"
    # control: the old store writes the model's text at the host path
    _old_preserve(tmp_path / "spill", "call_7", "model-chosen content")
    assert target.read_text() == "model-chosen content"


def test_a_spill_folder_swapped_for_a_link_after_opening_is_not_followed(tmp_path: Path) -> None:
    store = DirectorySpill(tmp_path / "spill")
    host = tmp_path / "host"
    host.mkdir()
    os.rename(tmp_path / "spill", tmp_path / "spill-moved")
    os.symlink(host, tmp_path / "spill")  # the folder's name now leads to a host folder
    store.preserve("call_1", "text")
    assert list(host.iterdir()) == [] and (tmp_path / "spill-moved" / "call_1.txt").read_text() == "text"
    # control: the old store resolves the name again and writes into the host folder
    _old_preserve(tmp_path / "spill", "call_2", "text")
    assert (host / "call_2.txt").exists()


def test_a_spill_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    with pytest.raises(PermissionError, match="nobody else can write"):
        DirectorySpill(shared)


def test_read_reaches_a_spilled_result_only_through_the_held_folder(tmp_path: Path) -> None:
    import asyncio

    import orjson

    from workbench.trace.schema import ToolCall

    store = DirectorySpill(tmp_path / "spill")
    path = store.preserve("call_3", "the spilled bytes")
    box = Toolbox(Workspace(tmp_path / "ws"), sandbox=None, spill=store)

    def read(p: str) -> str:
        call = ToolCall(id="r", name="read", arguments=orjson.dumps({"path": p}).decode())
        return asyncio.run(box.run_batch([call])).results[0].content or ""

    assert read(str(path)) == "the spilled bytes"
    (tmp_path / "other.txt").write_text("host")
    assert "outside the workspace" in read(str(tmp_path / "other.txt"))
    assert "not a spilled result" in read(f"{store.root}/../other.txt")


def test_the_trace_is_not_opened_through_a_planted_link(tmp_path: Path) -> None:
    host = tmp_path / "host-file"
    host.write_text("precious")
    out = tmp_path / "run.jsonl"
    os.symlink(host, out)
    with pytest.raises(OSError):
        open_trace(out)
    assert host.read_text() == "precious"
    # control: a plain open (what the trace writer did) truncates the host file through the link
    with open(out, "wb"):
        pass
    assert host.read_text() == ""


def test_the_recorder_writes_through_the_descriptor_it_opened_first(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    recorder = Recorder(out, Run(run_id="real", source="workbench"))
    os.rename(out, tmp_path / "moved.jsonl")
    out.write_text("forged")  # a new file at the name is not the record
    recorder.flush()
    recorder.close()
    assert out.read_text() == "forged" and '"real"' in (tmp_path / "moved.jsonl").read_text()
