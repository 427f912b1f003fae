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
from workbench.importers.contract import (
    FINAL_WITHOUT_CALLS,
    NO_ROUTE,
    NOT_RECORDED,
    declare,
    recorded,
    unknown,
)
from workbench.importers.transcript import ending
from workbench.trace.schema import Message, RecordedPolicy, Run, ToolCall, ToolResult, Turn, Usage

NAME = "openai-log"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)
VERSION = "1"

# The facts contract (workbench.importers.contract; the table in docs/importers/README.md).
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


def _tool_calls(raw: Any) -> list[ToolCall]:
    return function_calls(raw if isinstance(raw, list) else [])


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
        tool_calls=_tool_calls(raw.get("tool_calls")),
        tool_call_id=raw.get("tool_call_id") if isinstance(raw.get("tool_call_id"), str) else None,
        name=raw.get("name") if isinstance(raw.get("name"), str) else None,
    )


def _spans(indices: list[int]) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for i in indices:
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return spans


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    header: dict[str, Any] = {}
    pool: list[Message] = []
    turns: list[Turn] = []
    previous: list[tuple[Message, int]] = []  # the last request's messages and its answer, with pool indices
    requests: list[list[Message]] = []
    tool_schemas: list[dict[str, Any]] | None = None
    for line, obj in iter_json_lines(path, f.diagnostics):
        try:
            if "run" in obj and "request" not in obj:
                if turns or header:
                    f.bad(line, "run", "a run header after the first line is ignored")
                    continue
                header = f.obj(obj.get("run"), line, "run") or {}
                continue
            request = f.obj(obj.get("request"), line, "request")
            response = f.obj(obj.get("response"), line, "response")
            if request is None or response is None:
                f.bad(line, "request" if request is None else "response", "missing: the line is not a call")
                continue
            raw_msgs = f.items(request.get("messages"), line, "request.messages")
            msgs: list[Message] = []
            for j, raw in enumerate(raw_msgs):
                m = _message(raw)
                if m is None:
                    f.bad(line, f"request.messages[{j}]", "not a chat message (role and content)")
                    continue
                msgs.append(m)
            if tool_schemas is None and isinstance(request.get("tools"), list):
                tool_schemas = f.plain(
                    [t for t in request["tools"] if isinstance(t, dict)], line, "request.tools"
                )
            indices = []
            k = 0
            while k < len(msgs) and k < len(previous) and msgs[k] == previous[k][0]:
                indices.append(previous[k][1])
                k += 1
            seq = list(previous[:k])
            for m in msgs[k:]:
                pool.append(m)
                indices.append(len(pool) - 1)
                seq.append((m, len(pool) - 1))
            turn = _turn(len(turns), line, response, obj, f)
            turn.sent = _spans(indices)
            choices = response.get("choices") if isinstance(response.get("choices"), list) else []
            choice = choices[0] if choices and isinstance(choices[0], dict) else {}
            answer = _message(choice.get("message")) or Message(role="assistant")
            turn.text = answer.content or None
            turn.tool_calls = list(answer.tool_calls)
            turn.finish_reason = (
                choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
            )
            pool.append(answer)
            seq.append((answer, len(pool) - 1))
            previous = seq
            requests.append(msgs)
            turns.append(turn)
        except Exception as exc:  # an unforeseen shape loses this line only
            f.bad(line, "", f"unreadable line ({type(exc).__name__}: {exc})")
    # Tool results: the tool messages of the next request that answer this call's tool calls.
    for i, turn in enumerate(turns[:-1]):
        ids = {c.id for c in turn.tool_calls if c.id}
        for m in requests[i + 1]:
            if m.role == "tool" and m.tool_call_id in ids:
                turn.tool_results.append(ToolResult.of(m.content or "", call_id=m.tool_call_id))
                ids.discard(m.tool_call_id)
    if not turns and not header:
        require_runs(path, [], f.diagnostics, "request/response calls")
    run = _run(path, header, pool, turns, tool_schemas, f)
    run.diagnostics = f.diagnostics
    return [run]


def _turn(index: int, line: int, response: dict[str, Any], obj: dict[str, Any], f: Fields) -> Turn:
    u = f.obj(response.get("usage"), line, "response.usage") or {}
    pd = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
    cd = u.get("completion_tokens_details") if isinstance(u.get("completion_tokens_details"), dict) else {}
    prompt = f.tokens(u.get("prompt_tokens"), line, "response.usage.prompt_tokens")
    cached = f.tokens(pd.get("cached_tokens"), line, "response.usage.prompt_tokens_details.cached_tokens")
    if prompt is not None and cached is not None and cached > prompt:
        f.bad(
            line,
            "response.usage.prompt_tokens_details.cached_tokens",
            f"cached {cached} exceeds prompt {prompt}",
        )
    usage = Usage(
        prompt=prompt,
        cached=cached,
        cache_write=f.tokens(
            u.get("cache_creation_input_tokens"), line, "response.usage.cache_creation_input_tokens"
        ),
        completion=f.tokens(u.get("completion_tokens"), line, "response.usage.completion_tokens"),
        reasoning=f.tokens(
            cd.get("reasoning_tokens"), line, "response.usage.completion_tokens_details.reasoning_tokens"
        ),
        cost=f.number(u.get("cost"), line, "response.usage.cost"),
    )
    return Turn(
        index=index,
        usage=usage,
        started_at=f.time(obj.get("started_at"), line, "started_at"),
        ended_at=f.time(obj.get("ended_at"), line, "ended_at"),
        response_id=response.get("id") if isinstance(response.get("id"), str) else None,
        model=response.get("model") if isinstance(response.get("model"), str) else None,
    )


def _run(
    path: Path,
    header: dict[str, Any],
    pool: list[Message],
    turns: list[Turn],
    tool_schemas: list[dict[str, Any]] | None,
    f: Fields,
) -> Run:
    lossy = list(LOSSY_ALWAYS)
    if turns and turns[-1].tool_calls:
        lossy.append("tool results are known only from the next request: the last call's results are missing")
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
        lossy.append(NAIVE_TIMES)
    if tool_schemas is None:
        lossy.append("no request carried tool schemas")
    first_user = next((m.content for m in pool if m.role == "user"), None)
    models = [t.model for t in turns if t.model]
    outcome = ending(turns, "the model answered without tool calls")
    return Run(
        run_id=f.text(header.get("run_id"), 1, "run.run_id") or path.stem,
        source=NAME,
        source_file=str(path),
        importer=f"{NAME} {VERSION}",
        lossy=lossy,
        model=f.text(header.get("model"), 1, "run.model") or (models[0] if models else None),
        context_length=f.tokens(header.get("context_length"), 1, "run.context_length"),
        policy=policy,
        task=f.text(header.get("task"), 1, "run.task") or first_user,
        tool_schemas=tool_schemas,
        started_at=turns[0].started_at if turns else None,
        messages=pool,
        turns=turns,
        outcome=outcome,
    )
