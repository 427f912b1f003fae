"""The live loop's tools: ``sh``, ``read``, ``write`` and ``edit`` in a workspace folder (schemas:
:data:`TOOL_SCHEMAS`). A turn's calls run concurrently, at most :data:`MAX_CONCURRENT_CALLS` at a time;
:meth:`Toolbox.run_batch` returns their results in request order and whether the workspace changed, and stops every
call still running when the run's lease ends. Every resource a call can take is bounded and every result redacted:
docs/loop.md (the limits table) and docs/sandbox.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import signal
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from workbench.context.spill import DirectorySpill
from workbench.estimate import ctxbudget
from workbench.loop import beneath
from workbench.loop import sandbox as sb
from workbench.loop.reaper import reap_orphans
from workbench.loop.workspace import PathEscape, Workspace
from workbench.trace.limits import nesting
from workbench.trace.schema import ToolCall, ToolResult

# docs/governors.md §2 (seed 001 toolbox): `sh` default timeout 60 s, never more than maxCommandSeconds 120 s.
SH_DEFAULT_TIMEOUT_S = 60
SH_MAX_TIMEOUT_S = 120
# The result caps are the context law's (docs/governors.md §5.16): the line cap, and the single-result byte bound for
# an unknown window.
MAX_RESULT_LINES = ctxbudget.MAX_RESULT_LINES
MAX_RESULT_BYTES = ctxbudget.UNKNOWN_RESULT_CAP
# How much of a command's output is kept while it streams: the head (how it started) and the tail (how it ended),
# together one result's worth; what lies between is counted, not kept.
SH_HEAD_BYTES = MAX_RESULT_BYTES // 4
SH_TAIL_BYTES = MAX_RESULT_BYTES - SH_HEAD_BYTES
# The most of a file `read` reads: the result keeps far less, and a larger file is read no further.
READ_MAX_BYTES = 4 * MAX_RESULT_BYTES
# The largest file `edit` rewrites (it is held in memory twice while it is edited).
EDIT_MAX_BYTES = 8 * 1024 * 1024
# A tool call's argument text at most (a `write` of a large file included), and its JSON nesting at most: the
# tools take flat objects, so anything deeper is malformed.
MAX_ARGUMENT_BYTES = 4 * 1024 * 1024
MAX_ARGUMENT_DEPTH = 16
# Calls of one turn running at once; the rest wait their turn (a thousand `sh` calls in one reply would otherwise
# start a thousand processes).
MAX_CONCURRENT_CALLS = 8
# Calls of one reply that run at all: models issue a few to a few dozen parallel calls; past this each is answered
# with a short error result unrun (100,000 `read` calls in one reply would otherwise all run and all be recorded).
MAX_CALLS_PER_REPLY = 64
# Result bytes one turn may add to the transcript, all calls together (each result is also capped on its own):
# past this, a later result (request order) is replaced by an error saying how large it was.
MAX_TURN_OUTPUT_BYTES = 256 * 1024


def _tool(name: str, description: str, properties: dict[str, Any]) -> dict[str, Any]:
    """A function tool's schema; every property is required except ``sh``'s timeout."""
    required = [k for k in properties if k != "timeout_seconds"]
    parameters = {"type": "object", "properties": properties, "required": required}
    return {
        "type": "function",
        "function": {"name": name, "description": description, "parameters": parameters},
    }


_TEXT = {"type": "string"}
TOOL_SCHEMAS: tuple[dict[str, Any], ...] = (
    _tool(
        "sh",
        "Run a shell command in the workspace folder; returns its output and exit code.",
        {
            "command": {"type": "string", "description": "The command line, run by /bin/sh -c."},
            "timeout_seconds": {
                "type": "integer",
                "description": f"Stop the command after this many seconds (default {SH_DEFAULT_TIMEOUT_S}, "
                f"at most {SH_MAX_TIMEOUT_S}).",
                "minimum": 1,
                "maximum": SH_MAX_TIMEOUT_S,
            },
        },
    ),
    _tool(
        "read",
        "Read a text file of the workspace.",
        {"path": {"type": "string", "description": "Path relative to the workspace."}},
    ),
    _tool(
        "write",
        "Create or replace a file of the workspace with the given content.",
        {"path": _TEXT, "content": _TEXT},
    ),
    _tool(
        "edit",
        "Replace the one occurrence of `old` in a file with `new`.",
        {"path": _TEXT, "old": _TEXT, "new": _TEXT},
    ),
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


class OutputCap:
    """A command's output as it streams: the first ``head`` bytes, the last ``tail`` bytes, and the total."""

    def __init__(self, head: int = SH_HEAD_BYTES, tail: int = SH_TAIL_BYTES) -> None:
        self.head_cap, self.tail_cap = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.tail_cap:
                del self.tail[: len(self.tail) - self.tail_cap]

    @property
    def cut(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    def text(self) -> str:
        """The kept output; when bytes were dropped, a notice between head and tail gives the full size."""
        head = self.head.decode("utf-8", "replace")
        tail = self.tail.decode("utf-8", "replace")
        if not self.cut:
            return _clip_lines(head + tail)
        notice = (
            f"\n[output was {self.total:,} bytes: the first {len(self.head):,} and the last {len(self.tail):,} "
            f"are kept, {self.cut:,} cut between them]\n"
        )
        return _clip_lines(head) + notice + _clip_lines(tail, keep_tail=True)


def _clip_lines(text: str, keep_tail: bool = False) -> str:
    """At most MAX_RESULT_LINES lines (a quarter from the head, the rest from the tail, or just the tail)."""
    lines = text.splitlines(keepends=True)
    if len(lines) <= MAX_RESULT_LINES:
        return text
    if keep_tail:
        return f"[{len(lines) - MAX_RESULT_LINES:,} lines cut]\n" + "".join(lines[-MAX_RESULT_LINES:])
    first = MAX_RESULT_LINES // 4
    last = MAX_RESULT_LINES - first
    return "".join(lines[:first]) + f"[{len(lines) - first - last:,} lines cut]\n" + "".join(lines[-last:])


def _with_status(output: str, status: str) -> str:
    """Command output followed by its status line."""
    return f"{output}{'' if not output or output.endswith(chr(10)) else chr(10)}{status}"


def _arguments(
    call: ToolCall, required: Sequence[str], redact: Callable[[str], str] = lambda t: t
) -> dict[str, Any]:
    """The call's arguments, checked, with every string value redacted before the tool sees it: a key the model
    echoes into a command or a file never reaches the command, the file or the workspace (the model never needs
    the key)."""
    text = call.arguments or "{}"
    if len(text) > MAX_ARGUMENT_BYTES:
        raise ToolError(
            f"arguments of {call.name} are {len(text):,} characters; at most {MAX_ARGUMENT_BYTES:,} are accepted"
        )
    try:
        args = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise ToolError(f"arguments of {call.name} are not valid JSON ({exc}): {text[:200]!r}") from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments of {call.name} must be a JSON object")
    if nesting(args, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH:
        raise ToolError(f"arguments of {call.name} are nested deeper than {MAX_ARGUMENT_DEPTH} levels")
    missing = [name for name in required if not isinstance(args.get(name), str)]
    if missing:
        raise ToolError(f"{call.name} needs string argument(s): {', '.join(missing)}")
    return {key: redact(value) if isinstance(value, str) else value for key, value in args.items()}


_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
}


def _check_regular(st: os.stat_result, shown: str) -> None:
    """Only a regular file with one link is read or written: a FIFO or device would block or never end, and a
    second hard link may be a file outside the workspace (the link's target cannot be told)."""
    if not stat.S_ISREG(st.st_mode):
        kind = _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")
        raise ToolError(f"{shown} is {kind}; only regular files can be read, written or edited")
    if st.st_nlink > 1:
        raise ToolError(
            f"{shown} has {st.st_nlink} hard links; a file linked elsewhere is not read, written or edited "
            "(its other name may be outside the workspace)"
        )


def _open_regular(workspace: Workspace, components: tuple[str, ...], shown: str) -> int:
    """A read-only descriptor of the regular, single-link file at ``components``, resolved beneath the workspace's
    held descriptor by the kernel (no link followed anywhere on the way; never blocking on a FIFO). The checks
    are on the descriptor, not the name."""
    try:
        fd = workspace.open(components, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise ToolError(f"no such file: {shown}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ToolError(f"{shown} is {_KINDS[stat.S_IFLNK]}; links are not followed") from None
        raise
    try:
        _check_regular(os.fstat(fd), shown)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_head(
    workspace: Workspace, components: tuple[str, ...], shown: str, limit: int
) -> tuple[bytes, int]:
    """At most ``limit`` bytes from the start of the file, and its full size (read through its descriptor)."""
    fd = _open_regular(workspace, components, shown)
    try:
        size = os.fstat(fd).st_size
        chunks, got = [], 0
        while got < limit and (chunk := os.read(fd, min(65536, limit - got))):
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks), size
    finally:
        os.close(fd)


def _replace(workspace: Workspace, components: tuple[str, ...], shown: str, data: bytes) -> None:
    """Write ``data`` as the file at ``components`` atomically: a new file beside it in the same held folder
    descriptor, renamed over the name there (``renameat`` inside that folder: nothing is re-resolved from the
    root). An existing name must be a regular single-link file; its mode is kept."""
    if not components:
        raise ToolError(f"{shown} is {_KINDS[stat.S_IFDIR]}; only regular files can be written")
    folder = workspace.folder(components[:-1], create=True)
    name = components[-1]
    try:
        mode = 0o644
        try:
            st = os.stat(name, dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            _check_regular(st, shown)
            mode = stat.S_IMODE(st.st_mode)
        temp = f".wb-{secrets.token_hex(8)}.tmp"
        fd = os.open(
            temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder
        )
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                os.fchmod(fh.fileno(), mode)
                if workspace.owner is not None:
                    os.fchown(fh.fileno(), *workspace.owner)
            os.rename(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def within_turn_output(results: Sequence[ToolResult], limit: int) -> list[ToolResult]:
    """``results`` (request order) with the turn's output bound: once their bytes together pass ``limit``, each
    later result is replaced by an error result saying what it held."""
    out: list[ToolResult] = []
    total = 0
    for result in results:
        size = len((result.content or "").encode("utf-8", "surrogatepass"))
        if total + size > limit and size > 0:
            text = (
                f"[result withheld: {size:,} bytes, and this turn's results already hold {total:,} of the "
                f"{limit:,} bytes one turn may add]"
            )
            kept = result.model_dump(exclude={"content", "size", "sha256", "is_error"})
            out.append(ToolResult.of(text, **kept, is_error=True))
            continue
        total += size
        out.append(result)
    return out


def _same(text: str) -> str:
    return text


@dataclass
class Toolbox:
    """Runs tool calls in ``workspace``. ``clock`` (seconds, monotonic) times each call. ``sandbox`` confines
    ``sh`` (bubblewrap, on by default); ``None`` runs commands unconfined, as the user (docs/sandbox.md)."""

    workspace: Workspace
    clock: Callable[[], float] = time.monotonic
    schemas: tuple[dict[str, Any], ...] = field(default=TOOL_SCHEMAS)
    hidden_env: tuple[str, ...] = ()
    """Without a sandbox: environment variables withheld from ``sh`` (the API key's variable). In the sandbox no
    variable of the loop's environment is passed at all."""
    sandbox: sb.Sandbox | None = field(default_factory=sb.Sandbox)
    redact: Callable[[str], str] = _same
    """Applied to every result and to every text written to a file (the API key's redactor)."""
    max_concurrent: int = MAX_CONCURRENT_CALLS
    max_calls: int = MAX_CALLS_PER_REPLY
    max_turn_output: int = MAX_TURN_OUTPUT_BYTES
    reap_orphans: bool = False
    """Unconfined only: when no command is running, kill the children this process adopted as a subreaper (a
    command's ``setsid`` children; ``workbench.loop.reaper``). The CLI turns it on with ``--no-sandbox``."""
    spill: DirectorySpill | None = None
    """The loop's spill folder: ``read`` of a path a pointer or stub names there is served from its held
    descriptor (the folder lies outside the workspace, where ``sh`` cannot reach it)."""
    _running: set[int] = field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.sandbox is not None and (user := self.sandbox.host_user()) is not None:
            # root starts bwrap as nobody: the workspace becomes nobody's, so commands can change what is in it
            self.workspace.hand_to(user)

    async def run_batch(
        self, calls: Sequence[ToolCall], turn: int = 0, *, budget_s: float | None = None
    ) -> Batch:
        """Run one turn's calls concurrently (``turn`` is for recorded tool modes; live tools ignore it). A call
        still running ``budget_s`` seconds from now (the run's lease) is stopped, its processes killed."""
        before_revision = self.workspace.revision
        before = self.workspace.snapshot()
        gate = asyncio.Semaphore(max(1, self.max_concurrent))
        ends = None if budget_s is None else self.clock() + max(0.0, budget_s)

        async def one(call: ToolCall) -> ToolResult:
            async with gate:
                return await self.run(call, ends)

        ran = list(await asyncio.gather(*(one(call) for call in calls[: self.max_calls])))
        refused = [
            ToolResult.of(
                f"not run: the reply has {len(calls):,} tool calls; at most {self.max_calls:,} run per reply",
                call_id=call.id,
                is_error=True,
            )
            for call in calls[self.max_calls :]
        ]
        self.workspace.settle(before)
        results = within_turn_output([*ran, *refused], self.max_turn_output)
        return Batch(results=tuple(results), mutated=self.workspace.revision > before_revision)

    async def run(self, call: ToolCall, ends: float | None = None) -> ToolResult:
        started = self.clock()
        timed_out = False
        try:
            if ends is not None and ends - started <= 0:
                raise TimeoutError
            content, is_error, timed_out = await asyncio.wait_for(
                self._dispatch(call), None if ends is None else ends - started
            )
        except TimeoutError:
            content, is_error, timed_out = (
                f"[{call.name} stopped: the run's time ran out while it ran]",
                True,
                True,
            )
        except (ToolError, PathEscape) as exc:
            content, is_error = str(exc), True
        except OSError as exc:
            content, is_error = f"{call.name} failed: {exc.strerror or exc}", True
        return ToolResult.of(
            self.redact(content),
            call_id=call.id,
            is_error=is_error,
            timed_out=timed_out,
            duration_s=round(self.clock() - started, 6),
        )

    def _spilled(self, path: str) -> str | None:
        """A pointer's file in the loop's spill folder (outside the workspace, where only ``read`` reaches it,
        through the folder's held descriptor), or None when ``path`` does not name one."""
        spill = self.spill
        prefix = None if spill is None else str(spill.root) + "/"
        if spill is None or prefix is None or not path.startswith(prefix):
            return None
        name = path[len(prefix) :]
        if "/" in name or name in ("", ".", ".."):
            raise ToolError(f"{path[:200]!r} is not a spilled result")
        try:
            fd = beneath.open_beneath(spill.fd, (name,), os.O_RDONLY | os.O_NONBLOCK)
        except (OSError, beneath.Escape):
            raise ToolError(f"no spilled result {name!r}") from None
        try:
            _check_regular(os.fstat(fd), name)
            data = os.read(fd, READ_MAX_BYTES)
        finally:
            os.close(fd)
        return bound(data.decode("utf-8", errors="replace"), keep_tail=False)

    def _where(self, path: str) -> tuple[tuple[str, ...], str]:
        """The normal components of a tool's path beneath the workspace, and how it is shown in results."""
        components = self.workspace.parts(path)
        return components, "/".join(components) or "."

    async def _dispatch(self, call: ToolCall) -> tuple[str, bool, bool]:
        if call.name == "sh":
            args = _arguments(call, ["command"], self.redact)
            return await self._sh(args["command"], args.get("timeout_seconds"))
        if call.name == "read":
            asked = _arguments(call, ["path"], self.redact)["path"]
            if (spilled := self._spilled(asked)) is not None:
                return spilled, False, False
            components, shown = self._where(asked)
            data, size = _read_head(self.workspace, components, shown, READ_MAX_BYTES)
            text = bound(data.decode("utf-8", errors="replace"), keep_tail=False)
            if size > len(data):
                text += f"\n[the file is {size:,} bytes; only its first {len(data):,} were read]"
            return text, False, False
        if call.name == "write":
            args = _arguments(call, ["path", "content"], self.redact)
            components, shown = self._where(args["path"])
            data = self.redact(args["content"]).encode("utf-8", "surrogatepass")
            _replace(self.workspace, components, shown, data)
            self.workspace.wrote()
            return f"wrote {len(data)} bytes to {args['path']}", False, False
        if call.name == "edit":
            args = _arguments(call, ["path", "old", "new"], self.redact)
            components, shown = self._where(args["path"])
            raw, size = _read_head(self.workspace, components, shown, EDIT_MAX_BYTES + 1)
            if size > EDIT_MAX_BYTES:
                raise ToolError(
                    f"{shown} is {size:,} bytes; edit rewrites files of at most {EDIT_MAX_BYTES:,}"
                )
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ToolError(
                    f"{shown} is not UTF-8 text (byte {exc.start}); edit changes text files only"
                ) from None
            found = text.count(args["old"]) if args["old"] else 0
            if found != 1:
                raise ToolError(f"`old` occurs {found} times in {args['path']}; it must occur exactly once")
            edited = text.replace(args["old"], self.redact(args["new"]), 1)
            _replace(self.workspace, components, shown, edited.encode("utf-8", "surrogatepass"))
            self.workspace.wrote()
            return f"edited {args['path']}", False, False
        raise ToolError(f"unknown tool {call.name!r}; the tools are sh, read, write, edit")

    async def _start(self, command: str, data: sb.DataFiles | None) -> asyncio.subprocess.Process:
        """The command's process: bwrap around /bin/sh in the sandbox, or /bin/sh itself."""
        if self.sandbox is not None and data is not None:
            argv = self.sandbox.argv(self.workspace.root, ["/bin/sh", "-c", command], data)
            env, fds = dict(sb.ENV), data.passed
        else:
            argv = ["/bin/sh", "-c", command]
            env = {k: v for k, v in os.environ.items() if k not in self.hidden_env}
            fds = ()
        return await asyncio.create_subprocess_exec(
            *argv,
            cwd=self.workspace.root,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a stop reaches the children too
            env=env,
            pass_fds=fds,
        )

    async def _sh(self, command: str, timeout: Any) -> tuple[str, bool, bool]:
        seconds = SH_DEFAULT_TIMEOUT_S
        if isinstance(timeout, int | float) and not isinstance(timeout, bool):
            seconds = max(1, min(int(timeout), SH_MAX_TIMEOUT_S))
        try:
            if self.sandbox is not None:
                self.sandbox.bwrap()  # raises SandboxUnavailable before anything starts
                self.sandbox.prlimit()
                if self.sandbox.host_user() is not None:
                    self.sandbox.setpriv()
            data = self.sandbox.data(self.workspace.root) if self.sandbox is not None else None
        except sb.SandboxUnavailable as exc:
            raise ToolError(f"sh refused: {exc}") from None
        try:
            proc = await self._start(command, data)
        finally:
            if data is not None:
                data.close()  # the child holds its own copies
        self._running.add(proc.pid)
        output = OutputCap()

        async def drain() -> None:
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(65536):
                output.add(chunk)

        reader = asyncio.create_task(drain())
        timed_out = False
        try:
            await asyncio.wait_for(proc.wait(), timeout=seconds)
        except TimeoutError:
            timed_out = True
        finally:
            # Killing the process group ends bwrap, whose namespace init then dies and takes every process of the
            # sandbox with it; unconfined, it ends the command's group (a child that left the group is not reached)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
            if proc.returncode is None:
                await asyncio.shield(proc.wait())
            with contextlib.suppress(asyncio.CancelledError, TimeoutError):
                await asyncio.wait_for(reader, timeout=2)
            self._running.discard(proc.pid)
            if self.reap_orphans and self.sandbox is None and not self._running:
                reap_orphans(set())
        if timed_out:
            return (
                _with_status(output.text(), f"[timed out after {seconds}s; the command was stopped]"),
                True,
                True,
            )
        code = proc.returncode
        return _with_status(output.text(), f"[exit code {code}]"), code != 0, False
