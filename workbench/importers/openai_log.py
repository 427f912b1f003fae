"""OpenAI-style request/response logs (JSONL, one model call a line): the generic way to bring any agent's runs
in. The format and its mapping: docs/importers/openai-log.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from workbench.importers._common import (
    NAIVE_TIMES,
    Fields,
    chat_text,
    function_calls,
    iter_json_lines,
    parse_head,
    require_runs,
)
from workbench.importers._pool import RequestPool
from workbench.importers.contract import (
    FINAL_WITHOUT_CALLS,
    NO_ROUTE,
    NOT_RECORDED,
    declare,
    recorded,
    unknown,
)
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.schema import Message, RecordedPolicy, Run, ToolResult, Turn, Usage

NAME = "openai-log"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)
VERSION = "1"

FACTS = declare(
    mutated=unknown("request/response logs do not record tool effects"),
    new_info=recorded("tool messages of the next request, hashed"),
    tool_error=NOT_RECORDED,
    tool_timeout=NOT_RECORDED,
    ending=FINAL_WITHOUT_CALLS,
    tool_usage=NOT_RECORDED,
    cache_read=recorded("usage.prompt_tokens_details.cached_tokens"),
    cache_write=recorded("cache_creation_input_tokens / cache_write_tokens where reported"),
    route=NO_ROUTE,
)


_POLICY_FIELDS = ("rules", "grant", "max_turns", "deadline_s", "context_length")

LOSSY_ALWAYS = ("mutated is not recorded in request/response logs (None)",)


def sniff(path: Path, head: list[bytes]) -> bool:
    for o in parse_head(head):
        if isinstance(o.get("request"), dict) and "response" in o:
            return True
        if isinstance(o.get("run"), dict) and "schema" not in o:
            return True
    return False


def _message(raw: Any) -> Message | None:
    if not isinstance(raw, dict):
        return None
    role = raw.get("role")
    if role == "developer":
        role = "system"
    if role not in ("system", "user", "assistant", "tool"):
        return None
    return Message(
        role=role,
        content=chat_text(raw.get("content")),
        tool_calls=function_calls(raw["tool_calls"] if isinstance(raw.get("tool_calls"), list) else []),
        tool_call_id=raw.get("tool_call_id") if isinstance(raw.get("tool_call_id"), str) else None,
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
    )


class _Log(TranscriptBuilder):
    """One log as its lines arrive: a run header, then a call a line (its request pooled, its answer the reply)."""

    def __init__(self, f: Fields) -> None:
        super().__init__()
        self.f = f
        self.pool = RequestPool()
        self.messages = self.pool.messages
        self.header: dict[str, Any] = {}
        self.requests: list[list[Message]] = []
        self.tool_schemas: list[dict[str, Any]] | None = None

    def feed(self, line: int, obj: dict[str, Any]) -> None:
        f = self.f
        if "run" in obj and "request" not in obj:
            if self.turns or self.header:
                f.bad(line, "run", "a run header after the first line is ignored")
            else:
                self.header = f.obj(obj.get("run"), line, "run") or {}
            return
        request = f.obj(obj.get("request"), line, "request")
        response = f.obj(obj.get("response"), line, "response")
        if request is None or response is None:
            f.bad(line, "request" if request is None else "response", "missing: the line is not a call")
            return
        msgs: list[Message] = []
        for j, raw in enumerate(f.items(request.get("messages"), line, "request.messages")):
            m = _message(raw)
            if m is None:
                f.bad(line, f"request.messages[{j}]", "not a chat message (role and content)")
            else:
                msgs.append(m)
        if self.tool_schemas is None and isinstance(request.get("tools"), list):
            self.tool_schemas = f.plain(
                [t for t in request["tools"] if isinstance(t, dict)], line, "request.tools"
            )
        sent = self.pool.request(msgs)
        turn = _turn(len(self.turns), line, response, obj, f)
        turn.sent = sent
        choices = response.get("choices") if isinstance(response.get("choices"), list) else []
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        answer = _message(choice.get("message")) or Message(role="assistant")
        turn.text = answer.content or None
        turn.tool_calls = list(answer.tool_calls)
        turn.finish_reason = (
            choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
        )
        self.pool.answer(answer)
        self.requests.append(msgs)
        self.turns.append(turn)

    def pair_results(self) -> None:
        """Tool results: the tool messages of the next request that answer this call's tool calls."""
        for i, turn in enumerate(self.turns[:-1]):
            ids = {c.id for c in turn.tool_calls if c.id}
            for m in self.requests[i + 1]:
                if m.role == "tool" and m.tool_call_id in ids:
                    turn.tool_results.append(ToolResult.of(m.content or "", call_id=m.tool_call_id))
                    ids.discard(m.tool_call_id)


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    log = _Log(f)
    for line, obj in iter_json_lines(path, f.diagnostics):
        try:
            log.feed(line, obj)
        except Exception as exc:  # an unforeseen shape loses this line only
            f.bad(line, "", f"unreadable line ({type(exc).__name__}: {exc})")
    log.pair_results()
    if not log.turns and not log.header:
        require_runs(path, [], f.diagnostics, "request/response calls")
    run = _run(path, log, f)
    run.diagnostics = f.diagnostics
    return [run]


def _turn(index: int, line: int, response: dict[str, Any], obj: dict[str, Any], f: Fields) -> Turn:
    at = "response.usage"
    u = f.obj(response.get("usage"), line, at) or {}
    pd = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
    cd = u.get("completion_tokens_details") if isinstance(u.get("completion_tokens_details"), dict) else {}
    prompt = f.tokens(u.get("prompt_tokens"), line, f"{at}.prompt_tokens")
    cached = f.tokens(pd.get("cached_tokens"), line, f"{at}.prompt_tokens_details.cached_tokens")
    if prompt is not None and cached is not None and cached > prompt:
        f.bad(line, f"{at}.prompt_tokens_details.cached_tokens", f"cached {cached} exceeds prompt {prompt}")
    usage = Usage(
        prompt=prompt,
        cached=cached,
        cache_write=f.tokens(u.get("cache_creation_input_tokens"), line, f"{at}.cache_creation_input_tokens"),
        completion=f.tokens(u.get("completion_tokens"), line, f"{at}.completion_tokens"),
        reasoning=f.tokens(
            cd.get("reasoning_tokens"), line, f"{at}.completion_tokens_details.reasoning_tokens"
        ),
        cost=f.number(u.get("cost"), line, f"{at}.cost"),
    )
    return Turn(
        index=index,
        usage=usage,
        started_at=f.time(obj.get("started_at"), line, "started_at"),
        ended_at=f.time(obj.get("ended_at"), line, "ended_at"),
        response_id=response.get("id") if isinstance(response.get("id"), str) else None,
        model=response.get("model") if isinstance(response.get("model"), str) else None,
    )


def _run(path: Path, log: _Log, f: Fields) -> Run:
    header, turns = log.header, log.turns
    log.note(*LOSSY_ALWAYS)
    if turns and turns[-1].tool_calls:
        log.note("tool results are known only from the next request: the last call's results are missing")
    policy = None
    raw_policy = f.obj(header.get("policy"), 1, "run.policy")
    if raw_policy:
        known = {}
        for key in _POLICY_FIELDS:
            value = raw_policy.get(key)
            if key == "rules":
                known[key] = f.text(value, 1, f"run.policy.{key}")
            elif key == "deadline_s":
                known[key] = f.number(value, 1, f"run.policy.{key}")
            else:
                known[key] = f.tokens(value, 1, f"run.policy.{key}")
        params = (
            f.plain({k: v for k, v in raw_policy.items() if k not in _POLICY_FIELDS}, 1, "run.policy") or {}
        )
        policy = RecordedPolicy(**known, params=params)
    if f.naive_times:
        log.note(NAIVE_TIMES)
    if log.tool_schemas is None:
        log.note("no request carried tool schemas")
    first_user = next((m.content for m in log.messages if m.role == "user"), None)
    models = [t.model for t in turns if t.model]
    return log.run(
        run_id=f.text(header.get("run_id"), 1, "run.run_id") or path.stem,
        **origin(NAME, VERSION, path),
        model=f.text(header.get("model"), 1, "run.model") or (models[0] if models else None),
        context_length=f.tokens(header.get("context_length"), 1, "run.context_length"),
        policy=policy,
        task=f.text(header.get("task"), 1, "run.task") or first_user,
        tool_schemas=log.tool_schemas,
        started_at=turns[0].started_at if turns else None,
        outcome=log.ending("the model answered without tool calls"),
    )
