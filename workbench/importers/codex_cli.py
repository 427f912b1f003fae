"""Codex CLI rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``). The shape and its mapping:
docs/importers/codex-cli.md."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from workbench.importers import mutation
from workbench.importers._common import NAIVE_TIMES, Fields, iter_json_lines, parse_head, require_runs
from workbench.importers.contract import HASHED, NO_TOOL_USAGE, declare, inferred, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.route import stamp
from workbench.trace.schema import EventKind, Message, RecordedPolicy, Run, ToolCall, ToolResult, Usage

NAME = "codex-cli"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)
VERSION = "1"

# The roles of Codex's tools for the workspace fact (workbench.importers.mutation).
TOOLS = mutation.Tools(
    shell={
        "shell": "command",
        "exec_command": "cmd",
        "local_shell_call": "command",
        "container.exec": "command",
    },
    writes=frozenset({"apply_patch"}),
    reads=frozenset({"update_plan", "view_image", "web_search", "web_search_call"}),
)

FACTS = declare(
    mutated=inferred(
        "apply_patch writes; shell / exec_command / local_shell commands parsed (workbench.importers.shell); "
        "update_plan reads; else unknown"
    ),
    new_info=HASHED,
    tool_error=recorded("exit_code non-zero"),
    tool_timeout=unknown("not recorded apart from errors"),
    ending=recorded("task_complete / a reply without calls"),
    tool_usage=NO_TOOL_USAGE,
    cache_read=recorded("token_count cached_input_tokens"),
    cache_write=unknown("Codex reports no cache writes"),
    route=recorded("session_meta.model_provider"),
)


_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_OUTPUT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_INPUT_ITEMS = {"function_call_output", "custom_tool_call_output"}

LOSSY_ALWAYS = (
    "tool schemas and the base instructions Codex sends are not recorded",
    "reasoning is encrypted: only its summaries are kept (Message.reasoning)",
    "mutated is inferred from apply_patch calls; files changed by other shell commands are not detected",
    "turn started_at is the time of the last input before the call, ended_at the time of its token count",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    return any(
        isinstance(o.get("type"), str) and o["type"] in _TYPES and isinstance(o.get("payload"), dict)
        for o in parse_head(head)
    )


class _Rollout(TranscriptBuilder):
    """One rollout as its lines arrive, a handler per line type; the turns are the response groups, paired with
    the token counts in order when the file ends (:meth:`finish`)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path
        self.f = Fields(path)
        self.groups: list[tuple[int, Message, list[ToolCall], datetime | None]] = []
        self.in_group = False
        self.usages: list[tuple[dict[str, Any], int, datetime | None]] = []
        self.last_total: int | None = None
        self.results: dict[str, tuple[ToolResult, int]] = {}  # call_id -> (result, group)
        self.call_group: dict[str, int] = {}
        self.prompts: list[tuple[int, str]] = []
        self.run_id: str | None = None
        self.started: datetime | None = None
        self.window: int | None = None
        self.model: str | None = None
        self.context: dict[str, Any] = {}
        self.meta: dict[str, Any] = {}
        self.last_input_time: datetime | None = None
        self.ignored: Counter[str] = Counter()

    def feed(self, line: int, d: dict[str, Any]) -> None:
        kind = d.get("type")
        payload = self.f.obj(d.get("payload"), line, "payload")
        when = self.f.time(d.get("timestamp"), line, "timestamp")
        if payload is None:
            self.f.bad(line, "payload", f"{kind} line without a payload")
            return
        ptype = payload.get("type")
        if kind == "session_meta":
            if self.run_id is not None and payload.get("id") != self.run_id:  # a fork's copy of its origin
                self.note(f"from line {line} the file repeats session {payload.get('id')}'s history, copied when "
                          "this one was forked from it; the copy's end is not marked, so its calls count here too")  # fmt: skip
                return
            self.run_id = self.f.text(payload.get("id"), line, "payload.id") or self.run_id
            self.started = self.f.time(payload.get("timestamp"), line, "payload.timestamp") or when
            keys = ("cli_version", "originator", "cwd", "model_provider", "source", "forked_from_id")
            self.meta.update(self.f.plain_fields(payload, keys, line, "payload."))
            instructions = payload.get("instructions")
            if isinstance(instructions, str) and instructions:
                self.messages.append(Message(role="system", content=instructions))
        elif kind == "turn_context":
            self.model = self.f.text(payload.get("model"), line, "payload.model") or self.model
            keys = ("approval_policy", "sandbox_policy", "effort", "summary")
            self.context.update(self.f.plain_fields(payload, keys, line, "payload."))
        elif kind == "response_item":
            self._item(line, ptype, payload, when)
        elif kind == "event_msg":
            if ptype == "token_count":
                self._token_count(line, payload, when)
            elif ptype == "user_message":
                text = self.f.text(payload.get("message"), line, "payload.message")
                if text is not None:
                    self.prompts.append((len(self.groups), text))
            elif ptype == "turn_aborted":
                self.event(EventKind.TURN_ABORTED, str(payload.get("reason")), turn=self._group_at())
            else:
                self.ignored[f"event_msg {ptype}"] += 1
        elif kind == "compacted":
            self.event(EventKind.COMPACTION, "codex", {"line": line}, turn=self._group_at())
        else:
            self.f.bad(line, "type", f"unknown line type {kind!r}")

    def _group_at(self) -> int | None:
        """The response group (the turn to be) the file has reached."""
        return len(self.groups) - 1 if self.groups else None

    def _group(self) -> tuple[int, Message, list[ToolCall], datetime | None]:
        if not self.in_group:
            message = Message(role="assistant")
            self.groups.append((len(self.messages), message, [], self.last_input_time))
            self.messages.append(message)
            self.in_group = True
        return self.groups[-1]

    def _item(self, line: int, ptype: Any, p: dict[str, Any], when: datetime | None) -> None:
        if ptype == "message":
            role = p.get("role")
            text = _content_text(p.get("content"))
            if role == "assistant":
                _, message, _, _ = self._group()
                message.content = (message.content + "\n" + text) if message.content else text
                return
            self.in_group = False
            self.last_input_time = when
            self.messages.append(
                Message(role="system" if role in ("developer", "system") else "user", content=text)
            )
        elif ptype in _OUTPUT_ITEMS:
            _, message, calls, _ = self._group()
            if ptype == "reasoning":
                summary = [s.get("text") for s in p.get("summary") or [] if isinstance(s, dict)]
                text = "\n".join(s for s in summary if isinstance(s, str))
                if text:
                    message.reasoning = (message.reasoning + "\n" + text) if message.reasoning else text
                return
            call_id = p.get("call_id") if isinstance(p.get("call_id"), str) else p.get("id")
            name = p.get("name") if isinstance(p.get("name"), str) else ptype
            args = p.get("arguments", p.get("input", p.get("action")))
            args = args if isinstance(args, str) else orjson.dumps(args).decode() if args is not None else ""
            tc = ToolCall(id=call_id if isinstance(call_id, str) else None, name=name, arguments=args)
            calls.append(tc)
            message.tool_calls.append(tc)
            if tc.id:
                self.call_group[tc.id] = len(self.groups) - 1
        elif ptype in _INPUT_ITEMS:
            self.in_group = False
            self.last_input_time = when
            call_id = self.f.text(p.get("call_id"), line, "payload.call_id")
            output = p.get("output")
            text, meta = _output_text(output)
            self.messages.append(Message(role="tool", tool_call_id=call_id, content=text))
            exit_code = meta.get("exit_code")
            is_error = isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0
            duration = meta.get("duration_seconds")
            result = ToolResult.of(
                text,
                call_id=call_id,
                is_error=is_error,
                duration_s=float(duration)
                if isinstance(duration, int | float) and not isinstance(duration, bool)
                else None,
            )
            group = self.call_group.get(call_id) if call_id else None
            if group is None:
                self.f.bad(line, "payload.call_id", f"output for unknown call {call_id!r}")
                return
            self.results[call_id] = (result, group)  # type: ignore[index]
        else:
            self.ignored[f"response_item {ptype}"] += 1

    def _token_count(self, line: int, p: dict[str, Any], when: datetime | None) -> None:
        info = self.f.obj(p.get("info"), line, "payload.info")  # null: no counts, and no diagnostic
        if not info:
            return
        total = self.f.obj(info.get("total_token_usage"), line, "payload.info.total_token_usage") or {}
        total_tokens = self.f.tokens(
            total.get("total_tokens"), line, "payload.info.total_token_usage.total_tokens"
        )
        window = self.f.tokens(info.get("model_context_window"), line, "payload.info.model_context_window")
        if window is not None:
            self.window = window
        if total_tokens is None or total_tokens == self.last_total:
            return
        self.last_total = total_tokens
        last = self.f.obj(info.get("last_token_usage"), line, "payload.info.last_token_usage") or {}
        self.usages.append((last, line, when))

    def finish(self) -> Run | None:
        if not self.usages and not self.groups and not self.messages:
            return None
        turns = self.turns
        n = max(len(self.usages), len(self.groups))
        for i in range(n):
            usage = Usage()
            ended = None
            if i < len(self.usages):
                last, line, ended = self.usages[i]
                usage = self._usage(last, line)
            if i < len(self.groups):
                start, message, calls, started = self.groups[i]
                sent = [(0, start)]
            else:
                message, calls, started, sent = None, [], None, None
            self.turn(  # turn i: finish() builds every turn
                usage=usage,
                started_at=started,
                ended_at=ended,
                text=message.content if message else None,
                tool_calls=list(calls),
                sent=sent,
                model=self.model,
                mutated=False,
            )
        for result, group in self.results.values():
            turns[group].tool_results.append(result)
        mutation.apply(turns, TOOLS)
        self.note(*LOSSY_ALWAYS)
        if self.f.naive_times:
            self.note(NAIVE_TIMES)
        if len(self.usages) != len(self.groups):
            self.note(
                f"{len(self.usages)} token counts for {len(self.groups)} response groups: the calls past the "
                "shorter list have no usage or no output"
            )
        if not any(m.role == "system" for m in self.messages):
            self.note("session_meta.instructions is empty: requests start at the first user message")
        if self.ignored:
            kinds = ", ".join(sorted(self.ignored))
            self.note(
                f"items with no place in the schema were skipped ({kinds}; counts in metadata['skipped'])"
            )
            self.meta["skipped"] = dict(sorted(self.ignored.items()))
        outcome = self.ending("the model ended its turn")
        provider = self.meta.get("model_provider")
        stamp(  # Codex names its configured provider (config.toml model_providers), not a base URL
            turns,
            provider=provider if isinstance(provider, str) else None,
            provider_field="session_meta.model_provider",
        )
        return self.run(
            run_id=self.run_id or self.path.stem,
            **origin(NAME, VERSION, self.path),
            model=self.model,
            context_length=self.window,
            policy=RecordedPolicy(context_length=self.window, params=self.context) if self.context else None,
            task=self.prompts[0][1] if self.prompts else None,
            started_at=self.started,
            segments=self.prompt_segments(self.prompts),
            outcome=outcome,
            metadata=self.meta,
        )

    def _usage(self, last: dict[str, Any], line: int) -> Usage:
        at = "payload.info.last_token_usage"
        prompt = self.f.tokens(last.get("input_tokens"), line, f"{at}.input_tokens")
        cached = self.f.tokens(last.get("cached_input_tokens"), line, f"{at}.cached_input_tokens")
        if prompt is not None and cached is not None and cached > prompt:
            self.f.bad(line, f"{at}.cached_input_tokens", f"cached {cached} exceeds input {prompt}")
        return Usage(
            prompt=prompt,
            cached=cached,
            completion=self.f.tokens(last.get("output_tokens"), line, f"{at}.output_tokens"),
            reasoning=self.f.tokens(
                last.get("reasoning_output_tokens"), line, f"{at}.reasoning_output_tokens"
            ),
        )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("input_image", "image"):
            parts.append("[image]")
    return "\n".join(parts)


def _output_text(output: Any) -> tuple[str, dict[str, Any]]:
    """A function output's text and metadata (Codex wraps shell output as JSON ``{output, metadata}``)."""
    if isinstance(output, dict):
        text = (
            output.get("content") if isinstance(output.get("content"), str) else orjson.dumps(output).decode()
        )
        return text, {}
    if not isinstance(output, str):
        return ("" if output is None else str(output)), {}
    if output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            return output, {}
        if isinstance(parsed, dict) and isinstance(parsed.get("output"), str):
            meta = parsed.get("metadata") if isinstance(parsed.get("metadata"), dict) else {}
            return output, meta
    return output, {}


def load(path: Path) -> list[Run]:
    path = Path(path)
    rollout = _Rollout(path)
    for line, obj in iter_json_lines(path, rollout.f.diagnostics):
        try:
            rollout.feed(line, obj)
        except Exception as exc:  # an unforeseen shape loses this line only
            rollout.f.bad(line, str(obj.get("type")), f"unreadable line ({type(exc).__name__}: {exc})")
    run = rollout.finish()
    runs = require_runs(path, [run] if run else [], rollout.f.diagnostics, "Codex CLI events")
    runs[0].diagnostics = rollout.f.diagnostics
    return runs
