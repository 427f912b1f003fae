"""The file tools touch only regular single-link files and never block; arguments are bounded in size and depth;
a turn runs at most MAX_CONCURRENT_CALLS calls at once; the run's lease stops every call still running."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import orjson
import pytest

from tests.loop.conftest import processes_with
from workbench.loop.tools import (
    EDIT_MAX_BYTES,
    MAX_ARGUMENT_BYTES,
    MAX_ARGUMENT_DEPTH,
    MAX_CALLS_PER_REPLY,
    MAX_RESULT_BYTES,
    MAX_TURN_OUTPUT_BYTES,
    READ_MAX_BYTES,
    Toolbox,
)
from workbench.loop.workspace import Workspace
from workbench.trace.schema import ToolCall, ToolResult


def call(name: str, cid: str = "c", **args: object) -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=orjson.dumps(args).decode())


def one(box: Toolbox, c: ToolCall) -> ToolResult:
    return asyncio.run(box.run_batch([c])).results[0]


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    return Toolbox(Workspace(tmp_path / "ws"))


@pytest.mark.timeout(20)
def test_a_fifo_is_refused_by_every_file_tool_without_blocking(box: Toolbox) -> None:
    os.mkfifo(box.workspace.root / "pipe")
    for c in (
        call("write", path="pipe", content="x"),
        call("read", path="pipe"),
        call("edit", path="pipe", old="a", new="b"),
    ):
        result = one(box, c)
        assert (
            result.is_error
            and result.content == "pipe is a FIFO; only regular files can be read, written or edited"
        )


@pytest.mark.timeout(20)
def test_a_file_with_a_second_hard_link_is_neither_read_nor_written(box: Toolbox, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("outside content")
    os.link(outside, box.workspace.root / "linked.txt")
    said = "linked.txt has 2 hard links; a file linked elsewhere is not read, written or edited"
    for c in (
        call("read", path="linked.txt"),
        call("write", path="linked.txt", content="overwritten"),
        call("edit", path="linked.txt", old="outside", new="changed"),
    ):
        result = one(box, c)
        assert result.is_error and (result.content or "").startswith(said)
    assert outside.read_text() == "outside content"


@pytest.mark.timeout(20)
def test_write_replaces_atomically_and_keeps_the_mode(box: Toolbox) -> None:
    target = box.workspace.root / "run.sh"
    target.write_text("old")
    target.chmod(0o755)
    inode = target.stat().st_ino
    assert not one(box, call("write", path="run.sh", content="new")).is_error
    assert target.read_text() == "new" and target.stat().st_mode & 0o777 == 0o755
    assert target.stat().st_ino != inode  # a new file renamed over the old name
    assert sorted(p.name for p in box.workspace.root.iterdir()) == ["run.sh"]  # no temporary left


@pytest.mark.timeout(20)
def test_edit_of_a_non_utf8_file_is_an_error_result(box: Toolbox) -> None:
    (box.workspace.root / "bin.dat").write_bytes(b"abc\xff\xfe def")
    result = one(box, call("edit", path="bin.dat", old="abc", new="x"))
    assert (
        result.is_error
        and result.content == "bin.dat is not UTF-8 text (byte 3); edit changes text files only"
    )
    assert (box.workspace.root / "bin.dat").read_bytes() == b"abc\xff\xfe def"


@pytest.mark.timeout(20)
def test_a_symlink_loop_is_an_error_result(box: Toolbox) -> None:
    os.symlink("b", box.workspace.root / "a")
    os.symlink("a", box.workspace.root / "b")
    for c in (
        call("read", path="a"),
        call("write", path="a/x", content="x"),
        call("edit", path="a", old="1", new="2"),
    ):
        result = one(box, c)
        assert result.is_error and (
            "symbolic link loop" in (result.content or "") or "outside" in (result.content or "")
        )


@pytest.mark.timeout(30)
def test_read_of_a_huge_file_reads_only_its_head(box: Toolbox) -> None:
    big = box.workspace.root / "big.log"
    with open(big, "wb") as fh:
        fh.write(b"head line\n")
        fh.truncate(1 << 30)  # 1 GiB, sparse
    started = time.monotonic()
    result = one(box, call("read", path="big.log"))
    assert time.monotonic() - started < 5
    text = result.content or ""
    assert text.startswith("head line\n") and text.endswith(
        f"[the file is 1,073,741,824 bytes; only its first {READ_MAX_BYTES:,} were read]"
    )


@pytest.mark.timeout(30)
def test_edit_refuses_a_file_larger_than_its_cap(box: Toolbox) -> None:
    big = box.workspace.root / "big.txt"
    with open(big, "wb") as fh:
        fh.truncate(EDIT_MAX_BYTES + 1)
    result = one(box, call("edit", path="big.txt", old="a", new="b"))
    assert result.is_error and f"edit rewrites files of at most {EDIT_MAX_BYTES:,}" in (result.content or "")


@pytest.mark.timeout(20)
def test_arguments_too_deep_or_too_large_are_error_results(box: Toolbox) -> None:
    deep = ToolCall(
        id="d", name="write", arguments='{"path": "a", "content": "x", "z": ' + "[" * 300 + "]" * 300 + "}"
    )
    large = call("write", "l", path="a", content="x" * (MAX_ARGUMENT_BYTES + 1))
    batch = asyncio.run(box.run_batch([deep, large]))
    assert (
        batch.results[0].content == f"arguments of write are nested deeper than {MAX_ARGUMENT_DEPTH} levels"
    )
    assert (batch.results[1].content or "").startswith("arguments of write are 4,194,3")
    assert all(r.is_error for r in batch.results) and not (box.workspace.root / "a").exists()


@pytest.mark.timeout(30)
def test_at_most_max_concurrent_calls_run_at_once(box: Toolbox) -> None:
    running, peak = 0, 0

    async def dispatch(c: ToolCall) -> tuple[str, bool, bool]:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return c.id or "", False, False

    box.max_concurrent = 3
    box._dispatch = dispatch  # type: ignore[method-assign]
    calls = [call("sh", f"c{i}", command="true") for i in range(40)]
    batch = asyncio.run(box.run_batch(calls))
    assert peak == 3 and [r.content for r in batch.results] == [f"c{i}" for i in range(40)]


@pytest.mark.timeout(30)
def test_the_lease_stops_calls_still_running(box: Toolbox) -> None:
    started = time.monotonic()
    batch = asyncio.run(
        box.run_batch(
            [
                call("sh", "slow", command="sleep 982.16", timeout_seconds=120),
                call("write", "w", path="f", content="x"),
            ],
            budget_s=1.0,
        )
    )
    # far below the 982 s the command would run: a bound against a hang, loose enough for a loaded machine
    assert time.monotonic() - started < 25
    slow, write = batch.results
    assert slow.timed_out and slow.content == "[sh stopped: the run's time ran out while it ran]"
    assert not write.is_error and batch.mutated
    assert processes_with("982.16") == []


@pytest.mark.timeout(120)
def test_a_reply_of_100000_calls_runs_only_the_first_max_calls(box: Toolbox) -> None:
    (box.workspace.root / "f.txt").write_text("x")
    calls = [call("read", f"c{i}", path="f.txt") for i in range(100_000)]
    results = asyncio.run(box.run_batch(calls)).results
    assert len(results) == 100_000 and [r.call_id for r in results[:3]] == ["c0", "c1", "c2"]
    assert sum(r.content == "x" and not r.is_error for r in results) == MAX_CALLS_PER_REPLY
    refused = results[MAX_CALLS_PER_REPLY:]
    assert all(r.is_error for r in refused)
    assert refused[0].content == "not run: the reply has 100,000 tool calls; at most 64 run per reply"
    # control: without the bound every call runs
    unbounded = Toolbox(box.workspace, sandbox=None, max_calls=10**9)
    ran = asyncio.run(unbounded.run_batch(calls[:200])).results
    assert sum(r.content == "x" for r in ran) == 200


@pytest.mark.timeout(60)
def test_the_turn_output_is_bounded_and_later_results_become_errors(box: Toolbox) -> None:
    (box.workspace.root / "big.txt").write_text("y" * (2 * MAX_RESULT_BYTES))
    results = asyncio.run(box.run_batch([call("read", f"r{i}", path="big.txt") for i in range(40)])).results
    sizes = [len((r.content or "").encode()) for r in results]
    kept = [r for r in results if not r.is_error]
    each = sizes[0]
    assert len(kept) == MAX_TURN_OUTPUT_BYTES // each and sum(sizes[: len(kept)]) <= MAX_TURN_OUTPUT_BYTES
    withheld = results[len(kept)]
    assert withheld.is_error and withheld.content == (
        f"[result withheld: {each:,} bytes, and this turn's results already hold {each * len(kept):,} of the "
        f"{MAX_TURN_OUTPUT_BYTES:,} bytes one turn may add]"
    )
    assert withheld.size == len(withheld.content.encode())
    # control: without the bound all 40 results are kept
    unbounded = Toolbox(box.workspace, sandbox=None, max_turn_output=10**12)
    assert not any(
        r.is_error
        for r in asyncio.run(
            unbounded.run_batch([call("read", f"r{i}", path="big.txt") for i in range(40)])
        ).results
    )
