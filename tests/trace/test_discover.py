"""Discovery: every entry under a folder is loaded or listed as skipped with its reason; nothing hangs or raises."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest

from tests.samples.lines import openai_log_lines
from workbench.scale import load
from workbench.trace.walk import SkippedFile, scan


def reasons(corpus) -> dict[str, str]:
    return {s.path.name: s.reason for s in corpus.skipped}


def test_every_kind_of_bad_entry_is_listed_with_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / "calls.log").write_bytes(b"".join(openai_log_lines()))  # any name: detected by content
    (root / "notes.markdown").write_text("# just notes\n")
    (root / "empty.json").write_bytes(b"")
    os.mkfifo(root / "pipe")
    (root / "dangling").symlink_to(root / "nowhere")
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to(root)
    (root / "again.log").symlink_to(root / "calls.log")
    (root / "null").symlink_to("/dev/null")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(root / "sock"))
    except OSError:
        pytest.skip("cannot bind a unix socket here")
    done: list[object] = []
    t = threading.Thread(target=lambda: done.append(load(root)), daemon=True)
    t.start()
    t.join(timeout=60)
    sock.close()
    assert done, "loading a folder with a FIFO hung"
    corpus = done[0]
    assert [p.name for p in corpus.files] == ["calls.log"]
    assert len(corpus.runs) == 1
    got = reasons(corpus)
    assert got.pop("notes.markdown").startswith("unrecognised format: no importer recognises this file")
    assert got == {
        ".git": "version-control metadata folder: not searched",
        "again.log": f"the same file as {root / 'calls.log'}",
        "dangling": "dangling or looping symbolic link: its target does not exist",
        "empty.json": "empty file",
        "loop_a": "dangling or looping symbolic link: the links loop",
        "loop_b": "dangling or looping symbolic link: the links loop",
        "null": "not read: a device",
        "pipe": "not read: a FIFO (named pipe), which could block forever",
        "sock": "not read: a socket",
        "up": "dangling or looping symbolic link: the links loop (back into a folder being searched)",
    }
    assert corpus.problems == ()
    # what could not be read at all is refused (commands report it as an error); the rest is a note
    assert {s.path.name for s in corpus.refused} == {
        "dangling",
        "loop_a",
        "loop_b",
        "null",
        "pipe",
        "sock",
        "up",
    }
    summary = corpus.summary()
    assert (summary.skipped, summary.unreadable, summary.left_out) == (2, 7, 2)


def test_too_deep_folders_are_listed_not_searched(tmp_path: Path) -> None:
    deep = tmp_path / "a" / "b" / "c"
    deep.mkdir(parents=True)
    (tmp_path / "a" / "b" / "ok.jsonl").write_bytes(b"".join(openai_log_lines()))
    found = list(scan([tmp_path], max_depth=2))
    assert found == [
        SkippedFile(deep, "too deep: more than 2 folder levels below the given folder"),
        tmp_path / "a" / "b" / "ok.jsonl",
    ]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file: permissions cannot be tested")
def test_unreadable_files_and_folders_are_listed(tmp_path: Path) -> None:
    f = tmp_path / "secret.jsonl"
    f.write_bytes(b"".join(openai_log_lines()))
    f.chmod(0)
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        corpus = load(tmp_path)
    finally:
        d.chmod(0o755)
        f.chmod(0o644)
    assert reasons(corpus) == {
        "secret.jsonl": "unreadable: Permission denied",
        "locked": "unreadable folder: Permission denied",
    }


def test_a_fifo_given_explicitly_is_skipped_not_opened(tmp_path: Path) -> None:
    pipe = tmp_path / "p"
    os.mkfifo(pipe)
    corpus = load(pipe)
    assert [str(s) for s in corpus.skipped] == [
        f"{pipe}: not read: a FIFO (named pipe), which could block forever"
    ]


def test_skipped_entries_stay_path_like(tmp_path: Path) -> None:
    (tmp_path / "x.txt").write_text("hello\n")
    (entry,) = load(tmp_path).skipped
    assert os.fspath(entry) == str(tmp_path / "x.txt")
    assert load(tmp_path).skipped_frame().to_dict("records") == [entry.to_dict()]
