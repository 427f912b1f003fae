"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``), one handler per line type.
The shape (2.1.x) and its mapping (usage, compactions, segments, Task subagents in ``subagents/`` or inline as
sidechains): docs/importers/claude-code.md."""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson

from workbench.importers import mutation
from workbench.importers._common import Fields, dumps_args, iter_json_lines, parse_head, require_runs, words
from workbench.importers.contract import HASHED, declare, inferred, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.limits import TooLong, bounded_lines, open_bytes
from workbench.trace.schema import Event, EventKind, Message, Run, ToolCall, ToolResult, Turn, Usage

NAME = "claude-code"
VERSION = "1"
CACHEABLE = False  # reads files beside its own, named by dependencies(path) (workbench.scale.cache)

FACTS = declare(
    mutated=inferred(
        "Write/Edit/MultiEdit/NotebookEdit write; Bash commands parsed (workbench.importers.shell); Read/Grep/"
        "Glob/LS/Web*/Todo* read; else unknown"
    ),
    new_info=HASHED,
    tool_error=recorded("tool_result is_error"),
    tool_timeout=inferred("retrieval_status timeout or 'Command timed out' text"),
    ending=recorded("stop_reason; tool use is native, no format-error replies"),
    tool_usage=recorded("Task subagents: sessions of their own"),
    cache_read=recorded("usage.cache_read_input_tokens"),
    cache_write=recorded("usage.cache_creation_input_tokens"),
    route=unknown("Anthropic's API is assumed, not recorded"),
)


_LINE_TYPES = set(words("user assistant progress system file-history-snapshot queue-operation summary"))
# Tools whose successful call changes files (the rest are read-only or opaque, e.g. Bash).
EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
# Claude Code 2.0.x pre-warmed subagents with this prompt, unasked: real calls, but no Task call started them.
WARMUP_PROMPT = "Warmup"
# The tool that starts a subagent ("Task"; "Agent" in versions that renamed it).
TASK_TOOLS = frozenset({"Task", "Agent"})
# The roles of Claude Code's tools for the workspace fact (workbench.importers.mutation): its edit tools always
# mutate (the seed counts a call named write/edit whatever it returned), Bash commands are parsed, and the tools
# below only read. A subagent's tools are its own run's.
TOOLS = mutation.Tools(
    shell={"Bash": "command"},
    writes=EDIT_TOOLS,
    reads=words("""
        Read Grep Glob LS WebFetch WebSearch TodoWrite TodoRead BashOutput KillShell KillBash ExitPlanMode
        ListMcpResourcesTool ReadMcpResourceTool
    """),
)
# The usage fields whose sum is the whole prompt (Anthropic reports the cache reads and writes apart).
PROMPT_PARTS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
_NOT_PROMPTS = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<task-notification>",
    "[Request interrupted",
)

LOSSY_ALWAYS = (
    "system prompt and tool schemas are not recorded: run.request(i) rebuilds the transcript only",
    "completion = max output_tokens over the lines of one message.id (a streaming placeholder on early "
    "lines): a lower bound",
    "reasoning tokens are not reported apart (Anthropic counts thinking in output_tokens)",
    "tool-call arguments are re-serialised from the parsed input (the exact streamed text is not recorded)",
    "mutated is inferred from the calls: Write/Edit/MultiEdit/NotebookEdit write, Bash commands are parsed "
    "(workbench.importers.shell), unknown where a command's effect is",
    "turn started_at is the time of the line that triggered the call (prompt or last tool result), "
    "ended_at that of its last content block",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    for obj in parse_head(head):
        kind = obj.get("type")
        if not isinstance(kind, str) or kind not in _LINE_TYPES:  # a garbage `type` (a list) is no signal
            continue
        if "sessionId" in obj or "uuid" in obj or kind in {"file-history-snapshot", "queue-operation"}:
            return True
        if kind == "summary" and "leafUuid" in obj:  # older sessions open with summary lines
            return True
    return False


class _Call:
    """One model call (one message.id) as its lines arrive."""

    def __init__(self, turn: Turn, message: Message) -> None:
        self.turn = turn
        self.message = message
        self.text: list[str] = []
        self.thinking: list[str] = []
        self.usage: dict[str, int] = {}
        self.finish: str | None = None


class _Session(TranscriptBuilder):
    """One session file (or one inline sidechain of it) as its lines arrive: a handler per line type."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.subagent_file = path.name.startswith("agent-") or path.parent.name == "subagents"
        self.f = Fields(path)
        self.calls: dict[str, _Call] = {}
        self.prompts: list[tuple[int, str]] = []  # (turns so far, prompt text)
        self.session_id: str | None = None
        self.agent_id: str | None = None
        self.sidechain = False
        self.side_known: bool | None = None
        self.first_time: datetime | None = None
        self.last_input_time: datetime | None = None
        self.subagent_calls: dict[str, str] = {}  # agentId -> Task tool_use id
        self.ignored: Counter[str] = Counter()
        self.images = 0
        self.lines = 0
        self.parents: set[str] = set()  # uuids that already have a child in the conversation
        self.rewinds: list[tuple[int, int | None]] = []  # (line, turn before it)
        self.other_side = 0  # main-conversation lines inside a subagent file
        # Older Claude Code wrote Task subagents inline (isSidechain lines in the session file): one child
        # session per sidechain root, found by following parentUuid.
        self.inline = False
        self.children: list[_Session] = []
        self.side_of: dict[str, _Session] = {}  # sidechain line uuid -> its sidechain
        self.task_inputs: dict[str, dict[str, Any]] = {}  # Task tool_use id -> its input
        self.task_results: dict[str, tuple[dict[str, Any], datetime | None]] = {}  # id -> toolUseResult, time
        self.first_line: int | None = None
        self.last_line: int | None = None
        self.last_time: datetime | None = None

    # -- line handlers --------------------------------------------------------------------------------

    def feed(self, line: int, d: dict[str, Any]) -> None:
        self.lines += 1
        kind = d.get("type")
        if self.inline:
            self.first_line = self.first_line or line
            self.last_line = line
            self.last_time = _quiet_time(d.get("timestamp")) or self.last_time
        if self.session_id is None and isinstance(d.get("sessionId"), str):
            self.session_id = d["sessionId"]
        if self.agent_id is None and isinstance(d.get("agentId"), str):
            self.agent_id = d["agentId"]
        if kind in ("user", "assistant"):
            side = d.get("isSidechain") is True
            if self.side_known is None:
                # A session file is the main conversation even when a sidechain line (a warmup) comes first;
                # only a subagent's own file (agent-*.jsonl, or in subagents/) is a sidechain throughout.
                self.side_known = True
                self.sidechain = side and self.subagent_file
            if side != self.sidechain:
                if not self.sidechain:  # a subagent written inline (older Claude Code): its own run
                    self._sidechain(line, d)
                else:  # a main-conversation line inside a subagent file: not this conversation
                    self.other_side += 1
                return
            if self.first_time is None:
                self.first_time = self.f.time(d.get("timestamp"), line, "timestamp")
        elif kind == "system" and d.get("isSidechain") is True and self.side_known and not self.sidechain:
            parent = d.get("parentUuid")
            if isinstance(parent, str) and parent in self.side_of:
                self._sidechain(line, d)
                return
        parent = d.get("parentUuid")
        if kind in ("user", "assistant", "system") and isinstance(parent, str):
            if kind == "user" and parent in self.parents and _is_prompt(d):
                self.rewinds.append((line, self.last_turn))
            self.parents.add(parent)
        if kind == "assistant":
            self._assistant(line, d)
        elif kind == "user":
            self._user(line, d)
        elif kind == "system":
            self._system(line, d)
        elif kind == "progress":
            data = d.get("data")
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                agent, tool = data.get("agentId"), d.get("parentToolUseID")
                if isinstance(agent, str) and isinstance(tool, str):
                    self.subagent_calls.setdefault(agent, tool)
        elif kind == "queue-operation":
            text = d.get("content")
            if d.get("operation") == "enqueue" and isinstance(text, str):
                self.event(
                    EventKind.QUEUED_PROMPT,
                    "typed while the agent worked; delivered inside the running loop",
                    {"text": text, "at": d.get("timestamp")},
                )
        elif kind in ("file-history-snapshot", "summary"):
            self.ignored[str(kind)] += 1
        else:
            self.f.bad(line, "type", f"unknown line type {kind!r}")

    def _sidechain(self, line: int, d: dict[str, Any]) -> None:
        """Route an inline sidechain line to its sidechain: the one its parentUuid chains to, else a new one
        (a root: parentUuid null or pointing at no sidechain line)."""
        parent = d.get("parentUuid")
        child = self.side_of.get(parent) if isinstance(parent, str) else None
        if child is None:
            child = _Session(self.path)
            child.inline = True
            child.side_known = child.sidechain = True
            child.session_id = self.session_id
            self.children.append(child)
        uuid = d.get("uuid")
        if isinstance(uuid, str):
            self.side_of[uuid] = child
        child.feed(line, d)

    def _assistant(self, line: int, d: dict[str, Any]) -> None:
        msg = self.f.obj(d.get("message"), line, "message")
        if msg is None:
            self.f.bad(line, "message", "assistant line without a message")
            return
        mid = msg.get("id")
        if not isinstance(mid, str) or not mid:
            self.f.bad(line, "message.id", "assistant message without an id (not counted as a call)")
            return
        when = self.f.time(d.get("timestamp"), line, "timestamp")
        call = self.calls.get(mid)
        if call is None:
            message = Message(role="assistant")
            turn = self.turn(
                reply=message,
                response_id=mid,
                started_at=self.last_input_time or when,
                model=self.f.text(msg.get("model"), line, "message.model"),
                mutated=False,
            )
            call = self.calls[mid] = _Call(turn, message)
        call.turn.ended_at = when or call.turn.ended_at
        stop = msg.get("stop_reason")
        if isinstance(stop, str):
            call.finish = stop
        usage = self.f.obj(msg.get("usage"), line, "message.usage") or {}
        for key in (*PROMPT_PARTS, "output_tokens"):
            value = self.f.tokens(usage.get(key), line, f"message.usage.{key}")
            if value is not None:
                call.usage[key] = max(value, call.usage.get(key, 0))
        split = self.f.obj(usage.get("cache_creation"), line, "message.usage.cache_creation")
        if split:
            value = self.f.tokens(
                split.get("ephemeral_1h_input_tokens"),
                line,
                "message.usage.cache_creation.ephemeral_1h_input_tokens",
            )
            if value is not None:
                call.usage["ephemeral_1h"] = max(value, call.usage.get("ephemeral_1h", 0))
        for i, block in enumerate(self.f.items(msg.get("content"), line, "message.content")):
            self._assistant_block(line, f"message.content[{i}]", block, call, when)

    def _assistant_block(self, line: int, where: str, block: Any, call: _Call, when: datetime | None) -> None:
        if isinstance(block, str):
            call.text.append(block)
            return
        if not isinstance(block, dict):
            self.f.bad(line, where, f"content block is {type(block).__name__}")
            return
        kind = block.get("type")
        if kind == "text":
            text = self.f.text(block.get("text"), line, f"{where}.text")
            if text:
                call.text.append(text)
        elif kind in ("thinking", "redacted_thinking"):
            text = self.f.text(block.get("thinking"), line, f"{where}.thinking")
            if text:
                call.thinking.append(text)
        elif kind in ("tool_use", "server_tool_use"):
            name = self.f.text(block.get("name"), line, f"{where}.name") or "?"
            tid = self.f.text(block.get("id"), line, f"{where}.id")
            tc = ToolCall(id=tid, name=name, arguments=dumps_args(block.get("input", {})))
            if name in TASK_TOOLS and tid and isinstance(block.get("input"), dict):
                self.task_inputs[tid] = block["input"]
            call.turn.tool_calls.append(tc)
            call.message.tool_calls.append(tc)
            if tid:
                self.expect(tid, call.turn, when, tc)
        else:
            self.ignored[f"assistant block {kind}"] += 1

    def _user(self, line: int, d: dict[str, Any]) -> None:
        msg = self.f.obj(d.get("message"), line, "message")
        if msg is None:
            self.f.bad(line, "message", "user line without a message")
            return
        content = msg.get("content")
        when = self.f.time(d.get("timestamp"), line, "timestamp")
        self.last_input_time = when or self.last_input_time
        if isinstance(content, str):
            self._user_text(d, content)
            return
        texts: list[str] = []
        for i, block in enumerate(self.f.items(content, line, "message.content")):
            where = f"message.content[{i}]"
            if isinstance(block, str):
                texts.append(block)
            elif not isinstance(block, dict):
                self.f.bad(line, where, f"content block is {type(block).__name__}")
            elif block.get("type") == "tool_result":
                self._tool_result(line, where, block, when, d.get("toolUseResult"))
            elif block.get("type") == "text":
                text = self.f.text(block.get("text"), line, f"{where}.text")
                if text is not None:
                    texts.append(text)
            elif block.get("type") == "image":
                self.images += 1
                texts.append("[image]")
            else:
                self.ignored[f"user block {block.get('type')}"] += 1
        if texts:
            self._user_text(d, "\n".join(texts))

    def _user_text(self, d: dict[str, Any], text: str) -> None:
        kind: str | None = None
        stripped = text.lstrip()
        if d.get("isCompactSummary") is True:
            kind = "compact-summary"
        elif d.get("isMeta") is True:
            kind = "meta"
        elif stripped.startswith("<command-name>") or stripped.startswith("<command-message>"):
            kind = "command"
        elif stripped.startswith(_NOT_PROMPTS):
            kind = "notification" if stripped.startswith("<task-notification>") else "command-output"
            if stripped.startswith("[Request interrupted"):
                kind = "interrupt"
        index = len(self.messages)
        self.messages.append(Message(role="user", content=text, kind=kind))
        if kind == "compact-summary":
            self.context_start = index
        elif kind in (None, "command"):
            self.prompts.append((len(self.turns), text))

    def _tool_result(
        self, line: int, where: str, block: dict[str, Any], when: datetime | None, extra: Any
    ) -> None:
        tid = self.f.text(block.get("tool_use_id"), line, f"{where}.tool_use_id")
        raw = block.get("content")
        if isinstance(raw, list):
            parts = []
            for part in raw:
                if (
                    isinstance(part, dict)
                    and part.get("type") == "text"
                    and isinstance(part.get("text"), str)
                ):
                    parts.append(part["text"])
                elif isinstance(part, dict) and part.get("type") == "image":
                    self.images += 1
                    parts.append("[image]")
                elif isinstance(part, str):
                    parts.append(part)
            text = "\n".join(parts)
        elif isinstance(raw, str):
            text = raw
        elif raw is None:
            text = ""
        else:
            self.f.bad(line, f"{where}.content", f"tool result content is {type(raw).__name__}")
            text = dumps_args(raw)
        is_error = block.get("is_error") is True
        self.messages.append(Message(role="tool", tool_call_id=tid, content=text))
        owner = self.called(tid)
        if owner is None:
            self.f.bad(line, f"{where}.tool_use_id", f"result for unknown tool call {tid!r}")
            return
        turn, tc, called_at = owner
        extra = extra if isinstance(extra, dict) else {}
        if tc.name in TASK_TOOLS and tid:
            self.task_results[tid] = (extra, when)
        ms = extra.get("durationMs")
        if isinstance(ms, int | float) and not isinstance(ms, bool) and ms >= 0:
            duration: float | None = ms / 1000
        else:  # the time between the tool_use line and its result line
            duration = (when - called_at).total_seconds() if when and called_at else None
        timed_out = extra.get("retrieval_status") == "timeout" or text.startswith("Command timed out")
        turn.tool_results.append(
            ToolResult.of(text, call_id=tid, is_error=is_error, timed_out=timed_out, duration_s=duration)
        )

    def _system(self, line: int, d: dict[str, Any]) -> None:
        subtype = d.get("subtype")
        if subtype == "compact_boundary":
            meta = self.f.obj(d.get("compactMetadata"), line, "compactMetadata") or {}
            pre = self.f.tokens(meta.get("preTokens"), line, "compactMetadata.preTokens")
            trigger = self.f.text(meta.get("trigger"), line, "compactMetadata.trigger")
            self.event(
                EventKind.COMPACTION,
                trigger,
                {"pre_tokens": pre, "trigger": trigger, "at": d.get("timestamp"), "line": line},
            )
            self.context_start = len(self.messages)
        elif subtype == "api_error":
            self.event(EventKind.API_ERROR, data={"at": d.get("timestamp"), "line": line})
        else:
            self.ignored[f"system {subtype}"] += 1

    # -- result ---------------------------------------------------------------------------------------

    def finish(self) -> Run | None:
        if not self.turns and not self.messages and not self.children:
            return None
        for call in self.calls.values():
            u = call.usage
            known = [u[k] for k in PROMPT_PARTS if u.get(k) is not None]
            call.turn.usage = Usage(
                prompt=sum(known) if known else None,
                cached=u.get("cache_read_input_tokens"),
                cache_write=u.get("cache_creation_input_tokens"),
                cache_write_1h=u.get("ephemeral_1h"),
                completion=u.get("output_tokens"),
            )
            call.turn.text = "\n".join(call.text) or None
            call.turn.finish_reason = call.finish
            call.message.content = call.turn.text
            call.message.reasoning = "\n".join(call.thinking) or None
        self.note(*LOSSY_ALWAYS)
        if self.turns and all(c.finish is None for c in self.calls.values()):
            self.note("finish_reason is not recorded (stop_reason is null on every line)")
        if self.images:
            self.note(f"{self.images} image(s) replaced by the text [image]")
        if any(e.kind == EventKind.QUEUED_PROMPT for e in self.events):
            self.note(
                "prompts queued while the agent worked are delivered inside a tool result the transcript "
                "does not show: kept as queued-prompt events, not as messages"
            )
        if self.other_side:
            self.note(f"{self.other_side} lines of another conversation (isSidechain differs) were skipped")
        if self.children:
            lines = sum(c.lines for c in self.children)
            self.note(
                f"{len(self.children)} Task subagent(s) written inline ({lines} isSidechain lines) are child "
                "runs of their own (role subagent), not turns of this session"
            )
        if self.inline:
            self.note(
                f"a Task subagent written inline in the session file (isSidechain lines {self.first_line}-"
                f"{self.last_line}); its system prompt and tools are not recorded either"
            )
        if self.rewinds:
            at = ", ".join(str(n) for n, _ in self.rewinds[:5])
            self.note(
                f"the session was rewound (a prompt answers an earlier message) at line(s) {at}: file order is "
                "kept, so requests after a rewind still include the abandoned branch"
            )
            self.events.extend(
                Event(turn=t, kind=EventKind.REWIND, data={"line": n}) for n, t in self.rewinds
            )
        if self.ignored:
            kinds = ", ".join(sorted(self.ignored))
            self.note(
                f"lines with no place in the schema were skipped ({kinds}; counts in metadata['skipped'])"
            )
        models = Counter(t.model for t in self.turns if t.model)
        role = "main"
        run_id = self.session_id or self.path.stem
        if self.sidechain and self.agent_id:
            role = "compaction" if self.agent_id.startswith("acompact") else "subagent"
            run_id = f"{self.session_id or self.path.parent.parent.name}/agent-{self.agent_id}"
        outcome = self.ending("the model ended its turn")
        mutation.apply(self.turns, TOOLS)
        return self.run(
            run_id=run_id,
            **origin(NAME, VERSION, self.path),
            model=models.most_common(1)[0][0] if models else None,
            task=self.prompts[0][1] if self.prompts else None,
            started_at=self.first_time,
            parent_run_id=self.session_id if role != "main" else None,
            role=role,  # type: ignore[arg-type]
            segments=self.prompt_segments(self.prompts),
            outcome=outcome,
            metadata={
                "session_id": self.session_id,
                "agent_id": self.agent_id,
                "models": dict(models.most_common()),
                "skipped": dict(sorted(self.ignored.items())),
            },
        )


def _is_prompt(d: dict[str, Any]) -> bool:
    """A user line that is typed text, not tool results (cheap check used for rewind detection)."""
    msg = d.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, str):
        return not d.get("isMeta") and not d.get("isCompactSummary")
    return isinstance(content, list) and not any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def load(path: Path) -> list[Run]:
    path = Path(path)
    session = _Session(path)
    diags = session.f.diagnostics
    for line, obj in iter_json_lines(path, diags):
        try:
            session.feed(line, obj)
        except Exception as exc:  # a line of an unforeseen shape must not lose the rest of the file
            session.f.bad(line, str(obj.get("type")), f"unreadable line ({type(exc).__name__}: {exc})")
    run = session.finish()
    runs = require_runs(path, [run] if run else [], diags, "Claude Code events")
    run = runs[0]
    if run.role == "main":
        _link_compactions(run, path)
        if session.subagent_calls:
            run.metadata["subagents"] = dict(sorted(session.subagent_calls.items()))
        runs.extend(_inline_subagents(session, run, path))
    elif run.role == "subagent":
        run.parent_tool_call_id = _find_parent_tool_call(path, session.agent_id, session.session_id)
    run.diagnostics = diags
    return runs


def _inline_subagents(session: _Session, parent: Run, path: Path) -> list[Run]:
    """The Task subagents an older Claude Code wrote inline: one child run per sidechain root, each linked to
    the Task call that started it (see :func:`_match_task`)."""
    runs: list[Run] = []
    used: set[str] = set()
    filed = session_dir(path)
    for n, child in enumerate(session.children, start=1):
        run = child.finish()
        if run is None:
            continue
        if child.agent_id and any(
            (folder / f"agent-{child.agent_id}.jsonl").is_file() for folder in (filed, path.parent)
        ):
            # Written both inline and to its own file: the file is the run (loaded from there), not this copy.
            parent.lossy.append(
                f"inline sidechain of agent {child.agent_id} skipped: its subagents/ file holds the same run"
            )
            continue
        tool, how = _match_task(session, child, used)
        if tool:
            used.add(tool)
        role = "compaction" if (child.agent_id or "").startswith("acompact") else "subagent"
        suffix = f"agent-{child.agent_id}" if child.agent_id else f"sidechain-{n}"
        run.run_id = f"{parent.run_id}/{suffix}"
        run.role = role  # type: ignore[assignment]
        run.parent_run_id = parent.run_id
        run.parent_tool_call_id = tool
        run.diagnostics = child.f.diagnostics
        run.metadata.update(
            {"inline": True, "lines": [child.first_line, child.last_line], "parent_match": how}
        )
        if tool and tool in session.task_inputs:
            kind = session.task_inputs[tool].get("subagent_type")
            if isinstance(kind, str):
                run.metadata["subagent_type"] = kind
        if tool and tool in session.task_results:
            extra = session.task_results[tool][0]
            recorded = {k: extra[k] for k in _TASK_TOTALS if k in extra}
            if recorded:
                run.metadata["task_result"] = recorded
        warmup = run.task is not None and run.task.strip() == WARMUP_PROMPT
        if warmup:
            run.metadata["warmup"] = True
        if tool is None and warmup:
            run.lossy.append(
                "a warmup sidechain (prompt 'Warmup') that Claude Code starts on its own: no Task call started it"
            )
        elif tool is None:
            run.lossy.append(
                "the Task call that started this subagent was not found (no agentId, prompt or time match)"
            )
        elif how != "agentId":
            run.lossy.append(
                f"linked to its Task call by {how} (the lines carry no agentId the result names)"
            )
        runs.append(run)
    return runs


# What a Task result records about its subagent (kept on the child run for comparison).
_TASK_TOTALS = ("totalTokens", "totalToolUseCount", "totalDurationMs", "status", "agentId")


def _match_task(session: _Session, child: _Session, used: set[str]) -> tuple[str | None, str | None]:
    """The Task tool_use id that started an inline sidechain, and how it was found: by ``agentId``, prompt or time,
    skipping calls already taken (docs/importers/claude-code.md, "Inline in the session file")."""
    free = [t for t in session.task_inputs if t not in used]
    if child.agent_id:
        for tool, (extra, _) in session.task_results.items():
            if extra.get("agentId") == child.agent_id and tool not in used:
                return tool, "agentId"
        tool = session.subagent_calls.get(child.agent_id)
        if tool and tool not in used:
            return tool, "agentId"
    called = {t: c[2] for t in free if (c := session.called(t))}
    start, end = child.first_time, child.last_time

    def before(t: str) -> bool:
        at = called.get(t)
        return at is None or start is None or at <= start

    prompt = child.prompts[0][1].strip() if child.prompts else None
    if prompt:
        same = [t for t in free if str(session.task_inputs[t].get("prompt", "")).strip() == prompt]
        if same:
            fits = [t for t in same if before(t)] or same
            return fits[-1], "prompt"
    if prompt == WARMUP_PROMPT:
        return None, None  # a warmup is started by Claude Code itself, never by a Task call
    fits = []
    for t in free:
        at = called.get(t)
        done = session.task_results.get(t, (None, None))[1]
        if at is None or start is None or at > start:
            continue
        if done is not None and end is not None and done < end:
            continue
        fits.append(t)
    if fits:
        return max(fits, key=lambda t: called[t]), "time"  # type: ignore[arg-type,return-value]
    return None, None


def _quiet_time(value: Any) -> datetime | None:
    """A timestamp for ordering only (a bad one is already reported where the line is read)."""
    if not isinstance(value, str):
        return None
    try:
        dt = datetime.fromisoformat(value)
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def dependencies(path: Path) -> list[Path]:
    """Every other file ``load(path)`` may read or look for, present or absent (docs/importers/README.md, "What
    each importer reads, for the corpus cache")."""
    path = Path(path)
    deps = [path.with_name(f"{path.stem}.meta.json")]
    if path.parent.name == "subagents":
        deps.append(path.parent.parent.with_suffix(".jsonl"))
    elif path.name.startswith("agent-"):
        deps.extend(p for p in sorted(path.parent.glob("*.jsonl")) if p != path)
    else:
        folder = session_dir(path)
        deps.extend(sorted(folder.glob("*.jsonl")) if folder.is_dir() else [folder])
        deps.extend(p for p in sorted(path.parent.glob("agent-*.jsonl")) if p != path)
    return deps


def session_dir(path: Path) -> Path:
    """Where a session keeps its subagent files: ``<session>/subagents``."""
    return path.with_suffix("") / "subagents"


def _link_compactions(run: Run, path: Path) -> None:
    """Name, on each compaction event, the compaction call's file (matched by time: the last one that
    ended at or before the boundary)."""
    folder = session_dir(path)
    compactions = [e for e in run.events if e.kind == EventKind.COMPACTION]
    if not compactions or not folder.is_dir():
        return
    ends = [
        (last, f.stem) for f in sorted(folder.glob("agent-acompact-*.jsonl")) if (last := _last_timestamp(f))
    ]
    used: set[str] = set()
    for e in compactions:
        at = e.data.get("at")
        if not isinstance(at, str):
            continue
        before = [(t, s) for t, s in ends if t <= at and s not in used]
        if before:
            stem = max(before)[1]
            used.add(stem)
            e.data["compaction_run_id"] = f"{run.run_id}/{stem}"


def _objects(path: Path, needle: bytes = b"") -> list[dict[str, Any]]:
    """The JSON objects of another file's lines that hold ``needle`` (its bad lines are its own problem)."""
    with open_bytes(path) as fh:
        held = [raw for _, raw in bounded_lines(fh) if not isinstance(raw, TooLong) and needle in raw]
    return parse_head(held)


def _last_timestamp(path: Path) -> str | None:
    try:
        stamps = [obj["timestamp"] for obj in _objects(path) if isinstance(obj.get("timestamp"), str)]
    except (OSError, TraceError):
        return None
    return stamps[-1] if stamps else None


def _find_parent_tool_call(path: Path, agent_id: str | None, session_id: str | None = None) -> str | None:
    """The Task tool call in the parent session that started this subagent, in the places
    docs/importers/claude-code.md, "In their own file", lists."""
    if not agent_id:
        return None
    meta = path.with_name(f"{path.stem}.meta.json")
    if meta.is_file():
        try:
            with open_bytes(meta) as fh:
                info = orjson.loads(fh.read(1 << 20))
        except (OSError, TraceError, orjson.JSONDecodeError):
            info = None
        if isinstance(info, dict) and isinstance(info.get("toolUseId"), str):
            return info["toolUseId"]
    if path.parent.name == "subagents":
        parent = path.parent.parent.with_suffix(".jsonl")
    elif session_id:
        parent = path.parent / f"{session_id}.jsonl"
    else:
        return None
    if not parent.is_file():
        return None
    needle = f'"{agent_id}"'.encode()  # a cheap filter before parsing (spacing of the key varies by writer)
    try:
        return next((tool for obj in _objects(parent, needle) if (tool := _task_of(obj, agent_id))), None)
    except (OSError, TraceError):
        return None


def _task_of(obj: dict[str, Any], agent_id: str) -> str | None:
    """The Task tool_use id a session line names for ``agent_id``: an ``agent_progress`` line's
    ``parentToolUseID``, or the ``tool_use_id`` of a result whose ``toolUseResult.agentId`` is the agent."""
    data = obj.get("data")
    tool = obj.get("parentToolUseID")
    if isinstance(tool, str) and isinstance(data, dict) and data.get("agentId") == agent_id:
        return tool
    extra = obj.get("toolUseResult")
    msg = obj.get("message")
    if isinstance(extra, dict) and extra.get("agentId") == agent_id and isinstance(msg, dict):
        for block in msg.get("content") if isinstance(msg.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tid = block.get("tool_use_id")
                if isinstance(tid, str):
                    return tid
    return None
