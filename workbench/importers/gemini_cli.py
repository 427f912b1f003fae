"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-*.json`` / ``.jsonl``): one ``ConversationRecord``,
whole (JSON) or appended as it changes (JSONL, with ``$rewindTo`` and ``$set`` records); a call per ``gemini``
message. The shapes and their mapping: docs/importers/gemini-cli.md."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import orjson

from workbench.importers import mutation
from workbench.importers._common import (
    NAIVE_TIMES,
    Fields,
    iter_json_lines,
    load_document,
    read_prefix,
    require_runs,
    text_of,
    words,
)
from workbench.importers.contract import HASHED, NO_ROUTE, NOT_RECORDED, declare, inferred, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_DOCUMENT_BYTES, open_bytes
from workbench.trace.schema import Message, Run, Segment, ToolCall, ToolResult, Usage

NAME = "gemini-cli"
VERSION = "1"

# The roles of Gemini CLI's tools for the workspace fact (workbench.importers.mutation).
TOOLS = mutation.Tools(
    shell={"run_shell_command": "command"},
    writes=frozenset({"write_file", "replace", "edit"}),
    reads=words("""
        read_file read_many_files list_directory glob search_file_content web_fetch google_web_search
        save_memory write_todos
    """),
)

FACTS = declare(
    mutated=inferred(
        "write_file/replace write; run_shell_command commands parsed (workbench.importers.shell); read_file/"
        "list_directory/glob/search read; else unknown"
    ),
    new_info=HASHED,
    tool_error=recorded("toolCalls status error or cancelled"),
    tool_timeout=unknown("not recorded apart from errors"),
    ending=recorded("a reply without tool calls is final"),
    tool_usage=NOT_RECORDED,
    cache_read=recorded("tokens.cached"),
    cache_write=unknown("Gemini CLI reports no cache writes"),
    route=NO_ROUTE,
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

ALWAYS = (
    "requests not recorded: the system prompt, tool schemas and the exact contents sent are not in the session",
    "one timestamp per message (when it was recorded): calls are untimed",
    "prompt = input + tool-use prompt tokens; completion = output + thoughts (Gemini reports them apart)",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    prefix = read_prefix(path)
    return prefix.lstrip().startswith(b"{") and b'"sessionId"' in prefix and b'"projectHash"' in prefix


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    first = read_prefix(path, 4096).lstrip()
    meta: dict[str, Any] = {}
    # id -> (line, latest record), in first order
    records: dict[str, tuple[int | None, str, dict[str, Any]]] = {}
    rewound: set[str] = set()
    if first.startswith(b"{\n") or first.startswith(b"{\r\n") or _single_document(path):
        doc = load_document(path)
        if not isinstance(doc, dict):
            raise TraceError(str(path), f"not a Gemini CLI session (a JSON {type(doc).__name__})")
        meta = doc
        for i, m in enumerate(f.items(doc.get("messages"), None, "messages")):
            _keep(m, None, f"messages[{i}]", records, f)
        shape = "json"
    else:
        for line, obj in iter_json_lines(path, f.diagnostics):
            if "$rewindTo" in obj:
                to = obj.get("$rewindTo")
                if isinstance(to, str) and to in records:
                    at = list(records).index(to)
                    rewound.update(list(records)[at:])
                continue
            if "$set" in obj:
                upd = f.obj(obj.get("$set"), line, "$set") or {}
                for i, m in enumerate(f.items(upd.get("messages"), line, "$set.messages")):
                    _keep(m, line, f"$set.messages[{i}]", records, f)
                meta.update({k: v for k, v in upd.items() if k != "messages"})
                continue
            if "id" in obj and "type" in obj:
                _keep(obj, line, "message", records, f)
                continue
            if "sessionId" in obj:
                meta.update(obj)
                continue
            f.bad(line, "", "not a message, rewind, metadata or $set record")
        shape = "jsonl"
    if not records and not meta:
        require_runs(path, [], f.diagnostics, "Gemini CLI records")
    return [_run(path, meta, records, rewound, shape, f)]


def _single_document(path: Path) -> bool:
    """A one-line JSON file holding the whole record (``messages`` at the top level)."""
    try:
        with open_bytes(path) as fh:
            first = fh.readline(MAX_DOCUMENT_BYTES + 1)
            rest = fh.read(1).strip()
        return not rest and b'"messages"' in first and isinstance(orjson.loads(first), dict)
    except (OSError, orjson.JSONDecodeError, TraceError):
        return False


def _keep(
    m: Any,
    line: int | None,
    field: str,
    records: dict[str, tuple[int | None, str, dict[str, Any]]],
    f: Fields,
) -> None:
    if not isinstance(m, dict) or not isinstance(m.get("id"), str):
        f.bad(line, field, "not a message record (no id)")
        return
    records[m["id"]] = (line, field, m)  # a later write of the same id replaces it, in its first place


def _tool_output(result: Any) -> str | None:
    """The text a tool returned to the model, from its functionResponse parts."""
    if result is None or isinstance(result, str):
        return result
    parts = result if isinstance(result, list) else [result]
    out: list[str] = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        fr = p.get("functionResponse")
        if isinstance(fr, dict):
            resp = fr.get("response")
            if isinstance(resp, dict):
                value = resp.get("output", resp.get("error", resp))
                out.append(value if isinstance(value, str) else orjson.dumps(value).decode())
            elif resp is not None:
                out.append(str(resp))
        elif isinstance(p.get("text"), str):
            out.append(p["text"])
    return "\n".join(out) if out else None


def _usage(tok: dict[str, Any] | None, f: Fields, line: int | None, at: str) -> Usage:
    """A model message's ``tokens``: the prompt is fresh input plus tool-use input, the completion output plus
    thoughts."""
    if not tok:
        return Usage()
    fresh = f.tokens(tok.get("input"), line, f"{at}.input")
    tool = f.tokens(tok.get("tool"), line, f"{at}.tool")
    out = f.tokens(tok.get("output"), line, f"{at}.output")
    thoughts = f.tokens(tok.get("thoughts"), line, f"{at}.thoughts")
    return Usage(
        prompt=None if fresh is None else fresh + (tool or 0),
        cached=f.tokens(tok.get("cached"), line, f"{at}.cached"),
        completion=None if out is None else out + (thoughts or 0),
        reasoning=thoughts,
    )


def _run(
    path: Path,
    meta: dict[str, Any],
    records: dict[str, tuple[int | None, str, dict[str, Any]]],
    rewound: set[str],
    shape: str,
    f: Fields,
) -> Run:
    chat = _Chat(f)
    for mid, (line, field, m) in records.items():
        kind = m.get("type")
        if kind == "user":
            chat.user(text_of(m.get("content")))
        elif kind == "gemini":
            chat.reply(mid, line, field, m)
        else:
            chat.ui[str(kind)] += 1
    return chat.finish(path, meta, rewound, shape)


class _Chat(TranscriptBuilder):
    """One session's messages as they are read: a segment per user message, a turn per model message (its tool
    calls carry their results)."""

    def __init__(self, f: Fields) -> None:
        super().__init__()
        self.f = f
        self.ui: Counter[str] = Counter()
        self.models: Counter[str] = Counter()

    def user(self, text: str | None) -> None:
        self.message("user", text)
        if self.segments:
            self.segments[-1] = self.segments[-1].model_copy(update={"stop": len(self.turns)})
        n = len(self.turns)
        self.segments.append(Segment(index=len(self.segments), start=n, stop=n, prompt=text))

    def reply(self, mid: str, line: int | None, field: str, m: dict[str, Any]) -> None:
        f = self.f
        text = text_of(m.get("content"))
        usage = _usage(f.obj(m.get("tokens"), line, f"{field}.tokens"), f, line, f"{field}.tokens")
        calls: list[ToolCall] = []
        results: list[ToolResult] = []
        for j, tc in enumerate(f.items(m.get("toolCalls"), line, f"{field}.toolCalls")):
            if not isinstance(tc, dict) or not isinstance(tc.get("name"), str):
                f.bad(line, f"{field}.toolCalls[{j}]", "not a tool call (no name)")
                continue
            cid = tc.get("id") if isinstance(tc.get("id"), str) else None
            args = tc.get("args")
            calls.append(
                ToolCall(
                    id=cid, name=tc["name"], arguments=orjson.dumps(args).decode() if args is not None else ""
                )
            )
            output = _tool_output(tc.get("result"))
            if output is None and isinstance(tc.get("resultDisplay"), str):
                output = tc["resultDisplay"]
            status = tc.get("status")
            if output is not None or status is not None:
                results.append(
                    ToolResult.of(output or "", call_id=cid, is_error=status in ("error", "cancelled"))
                )
        model = m.get("model") if isinstance(m.get("model"), str) else None
        if model:
            self.models[model] += 1
        thoughts = [
            f"{t.get('subject', '')}: {t.get('description', '')}".strip(": ")
            for t in (m.get("thoughts") if isinstance(m.get("thoughts"), list) else [])
            if isinstance(t, dict)
        ]
        self.turn(
            reply=Message(
                role="assistant",
                content=text or None,
                tool_calls=calls,
                reasoning="\n".join(thoughts) or None,
            ),
            sent=None,
            ended_at=f.time(m.get("timestamp"), line, f"{field}.timestamp"),
            usage=usage,
            text=text or None,
            tool_calls=calls,
            tool_results=results,
            response_id=mid,
            model=model,
            segment=len(self.segments) - 1 if self.segments else None,
        )
        for r in results:
            self.message("tool", r.content, tool_call_id=r.call_id)

    def finish(self, path: Path, meta: dict[str, Any], rewound: set[str], shape: str) -> Run:
        f, turns, segments = self.f, self.turns, self.segments
        if segments:
            segments[-1] = segments[-1].model_copy(update={"stop": len(turns)})
        self.note(*ALWAYS)
        self.count_note(
            sum(1 for t in turns if not t.usage.known),
            "{n} model message(s) carry no tokens: their usage is unknown",
        )
        if rewound:
            n = sum(1 for t in turns if t.response_id in rewound)
            self.note(
                f"{len(rewound)} message(s) were rewound by the user ({n} model calls): kept, since they were sent "
                "and paid for, though the CLI no longer shows them"
            )
        if self.ui:
            self.note(
                f"CLI notices with no place in the schema were skipped ({dict(sorted(self.ui.items()))})"
            )
        if f.naive_times:
            self.note(NAIVE_TIMES)
        outcome = self.ending(
            "an interactive session: the last reply", after_call="the recording ends after a tool call"
        )
        session = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else path.stem
        mutation.apply(turns, TOOLS)
        return self.run(
            run_id=session,
            **origin(NAME, VERSION, path),
            diagnostics=sorted(f.diagnostics, key=lambda d: d.line or 0),
            role="subagent" if meta.get("kind") == "subagent" else "main",
            model=self.models.most_common(1)[0][0] if self.models else None,
            task=segments[0].prompt if segments else None,
            started_at=f.time(meta.get("startTime"), None, "startTime"),
            segments=segments if len(segments) > 1 else [],
            outcome=outcome,
            metadata={
                "project_hash": meta.get("projectHash") if isinstance(meta.get("projectHash"), str) else None,
                "summary": meta.get("summary") if isinstance(meta.get("summary"), str) else None,
                "shape": shape,
                "skipped": dict(sorted(self.ui.items())),
            },
        )
