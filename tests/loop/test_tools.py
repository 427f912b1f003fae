"""Tools in a workspace: confinement, timeouts, concurrency with ordered results, change measurement."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.loop.tools import MAX_RESULT_BYTES, TOOL_SCHEMAS, Toolbox, bound
from workbench.loop.workspace import WALK_LIMIT, PathEscape, Workspace, walk
from workbench.trace.schema import ToolCall


def call(name: str, cid: str = "c", **args: object) -> ToolCall:
    return ToolCall(id=cid, name=name, arguments=orjson.dumps(args).decode())


def run(box: Toolbox, *calls: ToolCall):
    return asyncio.run(box.run_batch(calls))


@pytest.fixture
def box(tmp_path: Path) -> Toolbox:
    return Toolbox(Workspace(tmp_path / "ws"))


def test_schemas_name_the_four_tools() -> None:
    assert [s["function"]["name"] for s in TOOL_SCHEMAS] == ["sh", "read", "write", "edit"]
    sh = TOOL_SCHEMAS[0]["function"]["parameters"]
    assert sh["required"] == ["command"] and "timeout_seconds" in sh["properties"]


@pytest.mark.timeout(20)
def test_write_read_edit_and_mutation(box: Toolbox) -> None:
    batch = run(box, call("write", "w", path="src/a.txt", content="one two"))
    assert batch.mutated and not batch.results[0].is_error
    batch = run(
        box, call("edit", "e", path="src/a.txt", old="two", new="three"), call("read", "r", path="src/a.txt")
    )
    assert batch.mutated
    assert (box.workspace.root / "src/a.txt").read_text() == "one three"
    batch = run(box, call("read", "r2", path="src/a.txt"))
    assert batch.results[0].content == "one three" and not batch.mutated


@pytest.mark.timeout(20)
@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd_copy", "a/../../x", "link/escape.txt"])
def test_escaping_paths_are_error_results_and_write_nothing(box: Toolbox, tmp_path: Path, path: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, box.workspace.root / "link")
    batch = run(
        box, call("write", "w", path=path, content="x"), call("edit", "e", path=path, old="a", new="b")
    )
    assert all(r.is_error and "outside the workspace" in (r.content or "") for r in batch.results)
    assert not (tmp_path / "outside.txt").exists() and not (outside / "escape.txt").exists()
    assert not Path("/etc/passwd_copy").exists() and not (tmp_path / "x").exists()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet="ab./\\~-", min_size=1, max_size=12))
def test_resolve_never_returns_a_path_outside(tmp_path: Path, path: str) -> None:
    ws = Workspace(tmp_path / "ws")
    try:
        resolved = ws.resolve(path)
    except PathEscape:
        return
    assert resolved == ws.root or ws.root in resolved.parents


@pytest.mark.timeout(20)
def test_sh_timeout_sets_timed_out(box: Toolbox) -> None:
    batch = run(box, call("sh", "s", command="echo started; sleep 30", timeout_seconds=1))
    result = batch.results[0]
    assert result.timed_out and result.is_error
    assert "started" in (result.content or "") and "timed out after 1s" in (result.content or "")


@pytest.mark.timeout(20)
def test_sh_exit_code_and_shell_writes_count_as_change(box: Toolbox) -> None:
    batch = run(box, call("sh", "s", command="echo hi > made.txt; exit 3"))
    assert batch.results[0].is_error and "[exit code 3]" in (batch.results[0].content or "")
    assert batch.mutated  # seen by the walk, not by a write tool
    batch = run(box, call("sh", "s", command="cat made.txt"))
    assert not batch.mutated and batch.results[0].content == "hi\n[exit code 0]"


@pytest.mark.timeout(20)
def test_calls_run_concurrently_results_in_request_order(box: Toolbox) -> None:
    # The first call waits for a file the second creates: only concurrent execution finishes both.
    first = call(
        "sh", "a", command="while [ ! -f .flag ]; do sleep 0.05; done; echo first", timeout_seconds=10
    )
    second = call("sh", "b", command="touch .flag; echo second")
    batch = run(box, first, second)
    assert [r.call_id for r in batch.results] == ["a", "b"]
    assert [r.content.split("\n")[0] for r in batch.results] == ["first", "second"]
    assert not any(r.timed_out for r in batch.results)


@pytest.mark.timeout(20)
def test_bad_arguments_and_unknown_tools_are_error_results(box: Toolbox) -> None:
    batch = run(
        box,
        ToolCall(id="1", name="write", arguments='{"path": "a", "content": '),
        call("read", "2"),
        call("fly", "3"),
        call("edit", "4", path="missing.txt", old="a", new="b"),
    )
    contents = [r.content for r in batch.results]
    assert all(r.is_error for r in batch.results)
    assert "not valid JSON" in contents[0] and "path" in contents[1] and "unknown tool" in contents[2]
    assert "no such file" in contents[3]
    assert not batch.mutated


def test_walk_skips_dot_and_dependency_dirs_and_is_bounded(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "x").write_text("x")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "y").write_text("y")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "z").write_text("z")
    assert {p for p, _, _ in walk(tmp_path)} == {os.path.join("src", "z")}
    many = tmp_path / "many"
    many.mkdir()
    for i in range(WALK_LIMIT + 50):
        (many / f"f{i:05d}").touch()
    assert len(walk(many)) == WALK_LIMIT


def test_bound_keeps_tail_for_commands_and_head_for_files() -> None:
    text = "".join(f"line {i}\n" for i in range(5000))
    tail = bound(text, keep_tail=True)
    head = bound(text, keep_tail=False)
    assert tail.rstrip().endswith("line 4999") and head.startswith("line 0")
    assert len(tail.encode()) < MAX_RESULT_BYTES + 100 and "bytes cut" in head
