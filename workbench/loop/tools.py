"""The live loop's tools: ``sh``, ``read``, ``write`` and ``edit`` in a workspace folder.

Their function schemas are :data:`TOOL_SCHEMAS` (what every request sends). A path that leaves the workspace is
an error result and nothing is touched. A turn's calls run concurrently; :meth:`Toolbox.run_batch` returns their
results in request order and whether the workspace changed across the batch (revision counter plus walk).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from workbench.estimate import ctxbudget
from workbench.loop.workspace import PathEscape, Workspace
from workbench.trace.schema import ToolCall, ToolResult

# docs/governors.md §2 (seed 001 toolbox): `sh` default timeout 60 s, never more than maxCommandSeconds 120 s.
SH_DEFAULT_TIMEOUT_S = 60
SH_MAX_TIMEOUT_S = 120
# The result caps are the context law's (docs/governors.md §5.16): the line cap, and the single-result byte bound for
# an unknown window.
MAX_RESULT_LINES = ctxbudget.MAX_RESULT_LINES
MAX_RESULT_BYTES = ctxbudget.UNKNOWN_RESULT_CAP

TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    {
        "type": "function",
        "function": {
            "name": "sh",
            "description": "Run a shell command in the workspace folder; returns its output and exit code.",
            "parameters": {
                "type": "object",
                "properties": {
                    "command": {"type": "string", "description": "The command line, run by /bin/sh -c."},
                    "timeout_seconds": {
                        "type": "integer",
                        "description": f"Stop the command after this many seconds (default {SH_DEFAULT_TIMEOUT_S}, "
                        f"at most {SH_MAX_TIMEOUT_S}).",
                        "minimum": 1,
                        "maximum": SH_MAX_TIMEOUT_S,
                    },
                },
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "read",
            "description": "Read a text file of the workspace.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string", "description": "Path relative to the workspace."}},
                "required": ["path"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "write",
            "description": "Create or replace a file of the workspace with the given content.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                "required": ["path", "content"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "edit",
            "description": "Replace the one occurrence of `old` in a file with `new`.",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "old": {"type": "string"},
                    "new": {"type": "string"},
                },
                "required": ["path", "old", "new"],
            },
        },
    },
)


@dataclass(frozen=True)
class Batch:
    """One turn's tool results (request order) and whether the workspace revision moved across them."""

    results: tuple[ToolResult, ...]
    mutated: bool | None
    """None: not observed (a recording that did not say)."""


class ToolError(Exception):
    """A call that cannot run as asked; becomes an error result."""


def bound(text: str, *, keep_tail: bool) -> str:
    """``text`` within the line and byte caps: command output keeps its tail (the verdict is at the end), a file
    keeps its head; a notice says what was cut."""
    lines = text.splitlines(keepends=True)
    data = text.encode("utf-8", "replace")
    if len(lines) <= MAX_RESULT_LINES and len(data) <= MAX_RESULT_BYTES:
        return text
    kept = lines[-MAX_RESULT_LINES:] if keep_tail else lines[:MAX_RESULT_LINES]
    body = "".join(kept).encode("utf-8", "replace")
    if len(body) > MAX_RESULT_BYTES:
        body = body[-MAX_RESULT_BYTES:] if keep_tail else body[:MAX_RESULT_BYTES]
    clipped = body.decode("utf-8", "ignore")
    notice = (
        f"[{len(data) - len(body):,} of {len(data):,} bytes cut from the {'start' if keep_tail else 'end'}]"
    )
    return f"{notice}\n{clipped}" if keep_tail else f"{clipped}\n{notice}"


def _with_status(output: str, status: str) -> str:
    """Command output (bounded, tail kept) followed by its status line."""
    body = bound(output, keep_tail=True)
    return f"{body}{'' if not body or body.endswith(chr(10)) else chr(10)}{status}"


def _arguments(call: ToolCall, required: Sequence[str]) -> dict[str, Any]:
    try:
        args = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError as exc:
        raise ToolError(
            f"arguments of {call.name} are not valid JSON ({exc}): {call.arguments[:200]!r}"
        ) from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments of {call.name} must be a JSON object")
    missing = [name for name in required if not isinstance(args.get(name), str)]
    if missing:
        raise ToolError(f"{call.name} needs string argument(s): {', '.join(missing)}")
    return args


@dataclass
class Toolbox:
    """Runs tool calls in ``workspace``. ``clock`` (seconds, monotonic) times each call."""

    workspace: Workspace
    clock: Callable[[], float] = time.monotonic
    schemas: tuple[dict[str, Any], ...] = field(default=TOOL_SCHEMAS)
    hidden_env: tuple[str, ...] = ()
    """Environment variables withheld from ``sh`` (the API key's variable: a command cannot print it)."""

    async def run_batch(self, calls: Sequence[ToolCall], turn: int = 0) -> Batch:
        """Run one turn's calls concurrently (``turn`` is for recorded tool modes; live tools ignore it)."""
        before_revision = self.workspace.revision
        before = self.workspace.snapshot()
        results = await asyncio.gather(*(self.run(call) for call in calls))
        self.workspace.settle(before)
        return Batch(results=tuple(results), mutated=self.workspace.revision > before_revision)

    async def run(self, call: ToolCall) -> ToolResult:
        started = self.clock()
        try:
            content, is_error, timed_out = await self._dispatch(call)
        except (ToolError, PathEscape) as exc:
            content, is_error, timed_out = str(exc), True, False
        except OSError as exc:
            content, is_error, timed_out = f"{call.name} failed: {exc.strerror or exc}", True, False
        return ToolResult.of(
            content,
            call_id=call.id,
            is_error=is_error,
            timed_out=timed_out,
            duration_s=round(self.clock() - started, 6),
        )

    async def _dispatch(self, call: ToolCall) -> tuple[str, bool, bool]:
        if call.name == "sh":
            args = _arguments(call, ["command"])
            return await self._sh(args["command"], args.get("timeout_seconds"))
        if call.name == "read":
            path = self.workspace.resolve(_arguments(call, ["path"])["path"])
            if not path.is_file():
                raise ToolError(f"no such file: {os.path.relpath(path, self.workspace.root)}")
            return bound(path.read_text("utf-8", errors="replace"), keep_tail=False), False, False
        if call.name == "write":
            args = _arguments(call, ["path", "content"])
            path = self.workspace.resolve(args["path"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(args["content"], "utf-8")
            self.workspace.wrote()
            return f"wrote {len(args['content'].encode())} bytes to {args['path']}", False, False
        if call.name == "edit":
            args = _arguments(call, ["path", "old", "new"])
            path = self.workspace.resolve(args["path"])
            if not path.is_file():
                raise ToolError(f"no such file: {args['path']}")
            text = path.read_text("utf-8")
            found = text.count(args["old"]) if args["old"] else 0
            if found != 1:
                raise ToolError(f"`old` occurs {found} times in {args['path']}; it must occur exactly once")
            path.write_text(text.replace(args["old"], args["new"], 1), "utf-8")
            self.workspace.wrote()
            return f"edited {args['path']}", False, False
        raise ToolError(f"unknown tool {call.name!r}; the tools are sh, read, write, edit")

    async def _sh(self, command: str, timeout: Any) -> tuple[str, bool, bool]:
        seconds = SH_DEFAULT_TIMEOUT_S
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            seconds = max(1, min(int(timeout), SH_MAX_TIMEOUT_S))
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=self.workspace.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a timeout stops the children too
            env={k: v for k, v in os.environ.items() if k not in self.hidden_env},
        )
        chunks: list[bytes] = []

        async def drain() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                chunks.append(chunk)

        reader = asyncio.create_task(drain())
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), timeout=seconds)
        except TimeoutError:
            timed_out = True
        finally:
            if proc.returncode is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(reader, timeout=2)
        output = b"".join(chunks).decode("utf-8", errors="replace")
        if timed_out:
            return _with_status(output, f"[timed out after {seconds}s; the command was stopped]"), True, True
        code = proc.returncode
        return _with_status(output, f"[exit code {code}]"), code != 0, False
