"""OpenHands evaluation output (``output.jsonl``): one run a line.

Each line holds ``instance_id``, ``instruction``, ``metadata`` (``agent_class``, ``max_iterations``,
``llm_config``), ``history`` (the event stream), ``metrics``, ``error`` and ``test_result``.

* A model call is one ``tool_call_metadata.model_response.id``: several action events (parallel tool calls)
  and their observations repeat the same response, so calls are deduplicated by that id. Usage comes from
  the response (``usage.prompt_tokens``, ``prompt_tokens_details.cached_tokens``,
  ``completion_tokens_details.reasoning_tokens``); where the response leaves the cache unsaid,
  ``metrics.token_usages[]`` (matched by ``response_id``) supplies ``cache_read_tokens`` /
  ``cache_write_tokens``.
* Tool results are the observation events (paired by ``tool_call_id``); an ``edit`` observation without an
  error marks the turn as having changed the workspace. ``ToolResult.content`` is the observation as the tool
  produced it; the request messages carry it as CodeActAgent sent it — rendered per observation type and cut
  to ``llm_config.max_message_chars`` (:mod:`workbench.importers.openhands_render`).
* ``metadata.max_iterations`` and ``agent_class`` become the recorded policy; the recorded stop becomes the
  outcome: ``error`` "Agent reached maximum iteration … Current iteration: N, max iteration: M" is a
  ``max-iterations`` stop with its meter; a ``finish`` action is ``done``; any other error is ``error``.
* ``test_result.resolved`` (or ``test_result.report.resolved``, ``report.resolved``) becomes
  ``Outcome.label`` when present.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from workbench.importers import openhands_render
from workbench.importers._common import (
    NAIVE_TIMES,
    Fields,
    in_turn_order,
    iter_json_lines,
    parse_head,
    require_runs,
)
from workbench.trace.schema import (
    Event,
    Message,
    Meter,
    Outcome,
    RecordedPolicy,
    Run,
    ToolCall,
    ToolResult,
    Turn,
    Usage,
)

NAME = "openhands"
CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.trace.cache)
VERSION = "2"  # 2: requests carry observations as sent (rendered, cut); v0.35 tool schemas

_MAX_ITER = re.compile(r"maximum iteration.*?Current iteration:\s*(\d+),\s*max iteration:\s*(\d+)", re.S)
_TIMED_OUT = ("timed out", "no new output after")

LOSSY_ALWAYS = (
    "requests are rebuilt from the history the way CodeActAgent assembles them (system, task, then each "
    "response with its observations); workspace-context recall and condensation are not reproduced",
    "mutated is inferred from edit observations; files changed by shell commands are not detected",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    return any("instance_id" in o and ("history" in o or "metadata" in o) for o in parse_head(head))


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    runs: list[Run] = []
    seen: dict[str, int] = {}
    for line, obj in iter_json_lines(path, f.diagnostics):
        start = len(f.diagnostics)
        try:
            run = _run(path, line, obj, f)
        except Exception as exc:  # an unforeseen shape loses this line only
            f.bad(line, "", f"unreadable run ({type(exc).__name__}: {exc})")
            continue
        n = seen.get(run.run_id, 0)
        seen[run.run_id] = n + 1
        if n:
            run.run_id = f"{run.run_id}#{n}"
        run.diagnostics = f.diagnostics[start:]
        runs.append(run)
    runs = require_runs(path, runs, f.diagnostics, "OpenHands runs")
    early = [d for d in f.diagnostics if not any(d in r.diagnostics for r in runs)]
    if early:
        runs[0].diagnostics = early + runs[0].diagnostics
    return runs


def _run(path: Path, line: int, d: dict[str, Any], f: Fields) -> Run:
    instance = f.text(d.get("instance_id"), line, "instance_id") or f"{path.stem}:{line}"
    meta = f.obj(d.get("metadata"), line, "metadata") or {}
    llm = f.obj(meta.get("llm_config"), line, "metadata.llm_config") or {}
    metrics = f.obj(d.get("metrics"), line, "metrics") or {}
    usages_by_id: dict[str, dict[str, Any]] = {}
    for u in f.items(metrics.get("token_usages"), line, "metrics.token_usages"):
        if isinstance(u, dict) and isinstance(u.get("response_id"), str):
            usages_by_id[u["response_id"]] = u

    max_chars = _max_message_chars(llm.get("max_message_chars"), line, f)
    renderings: list[tuple[str, openhands_render.Rendering]] = []
    naive_before = f.naive_times
    messages: list[Message] = []
    turns: list[Turn] = []
    events: list[Event] = []
    by_response: dict[str, Turn] = {}
    by_call: dict[str, Turn] = {}
    called_at: dict[str, Any] = {}
    lossy = list(LOSSY_ALWAYS)
    task: str | None = None
    finish: dict[str, Any] | None = None
    started = None
    has_system = False
    tool_schemas: list[dict[str, Any]] | None = None
    uncounted = 0
    errors_without_call = 0
    history = f.items(d.get("history"), line, "history")
    for i, e in enumerate(history):
        where = f"history[{i}]"
        if not isinstance(e, dict):
            f.bad(line, where, f"event is {type(e).__name__}")
            continue
        when = f.time(e.get("timestamp"), line, f"{where}.timestamp")
        started = started or when
        action, observation = e.get("action"), e.get("observation")
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        if action == "system":
            has_system = True
            text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
            messages.append(Message(role="system", content=f.text(text, line, f"{where}.args.content")))
            tools = f.items(args.get("tools"), line, f"{where}.args.tools")
            if tools and tool_schemas is None:  # v0.35 records the tools it sent beside the system prompt
                tool_schemas = f.plain([t for t in tools if isinstance(t, dict)], line, f"{where}.args.tools")
            continue
        if action == "message" and e.get("source") == "user":
            text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
            text = f.text(text, line, f"{where}.args.content")
            task = task or text
            messages.append(Message(role="user", content=text))
            continue
        if action == "recall" or observation == "recall":
            continue
        if action is not None:
            if tcm is None:
                if e.get("source") == "agent":
                    uncounted += 1
                    if action == "finish":
                        finish = e
                    text = e.get("message") if isinstance(e.get("message"), str) else None
                    messages.append(Message(role="assistant", content=text, kind=f"action:{action}"))
                continue
            turn = _call(line, where, tcm, by_response, turns, messages, usages_by_id, when, f)
            call_id = tcm.get("tool_call_id")
            if isinstance(call_id, str) and turn is not None:
                by_call[call_id] = turn
                called_at[call_id] = when
            if action == "finish":
                finish = e
            continue
        if observation is not None:
            content = e.get("content")
            content = (
                content if isinstance(content, str) else (f.text(content, line, f"{where}.content") or "")
            )
            extras = e.get("extras") if isinstance(e.get("extras"), dict) else {}
            call_id = tcm.get("tool_call_id") if tcm else None
            by_tool = tcm is not None and isinstance(call_id, str)
            sent = openhands_render.render(
                str(observation), content, extras, by_tool=by_tool, max_chars=max_chars
            )
            renderings.append((str(observation), sent))
            if not by_tool:
                if observation == "error":
                    errors_without_call += 1
                    events.append(
                        Event(
                            turn=len(turns) - 1 if turns else None,
                            kind="error-observation",
                            reason=content[:500],
                            data={"event_id": e.get("id")},
                        )
                    )
                messages.append(Message(role="user", content=sent.text, kind=f"observation:{observation}"))
                continue
            name = tcm.get("function_name") if isinstance(tcm.get("function_name"), str) else None
            messages.append(Message(role="tool", tool_call_id=call_id, name=name, content=sent.text))
            turn = by_call.get(call_id)
            if turn is None:
                f.bad(
                    line,
                    f"{where}.tool_call_metadata.tool_call_id",
                    f"observation of unknown call {call_id!r}",
                )
                continue
            emeta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
            exit_code = emeta.get("exit_code")
            suffix = emeta.get("suffix") if isinstance(emeta.get("suffix"), str) else ""
            is_error = (
                observation == "error"
                or content.startswith("ERROR:")
                or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)
            )
            timed_out = any(s in suffix.lower() for s in _TIMED_OUT)
            start = called_at.get(call_id)
            turn.tool_results.append(
                ToolResult.of(
                    content,
                    call_id=call_id,
                    is_error=is_error,
                    timed_out=timed_out,
                    duration_s=(when - start).total_seconds() if when and start else None,
                )
            )
            if observation == "edit" and not is_error:
                turn.mutated = True

    costs = [c for c in f.items(metrics.get("costs"), line, "metrics.costs") if isinstance(c, dict)]
    if costs and len(costs) == len(turns):
        for t, c in zip(turns, costs, strict=True):
            t.usage.cost = f.number(c.get("cost"), line, "metrics.costs[].cost")
        lossy.append(
            "per-call cost taken from metrics.costs in call order (the entries carry no response id)"
        )
    elif costs:
        lossy.append(
            f"metrics.costs has {len(costs)} entries for {len(turns)} calls: per-call cost left unset"
        )
    if f.naive_times > naive_before:
        offset = _zone_offset(turns)
        if offset:
            # Event timestamps are local time without a zone; model_response.created is a UTC epoch. Shift the
            # event times so a call's start (created) and end (its action event) are on one clock.
            turns = [
                t.model_copy(update={"ended_at": t.ended_at - offset}) if t.ended_at is not None else t
                for t in turns
            ]
            started = started - offset if started is not None else None
            hours = offset.total_seconds() / 3600
            lossy.append(
                f"event timestamps carry no zone and run {hours:+g} h from model_response.created (a UTC epoch): "
                "shifted to UTC by that offset, inferred from the calls"
            )
        else:
            lossy.append(NAIVE_TIMES)
    if not has_system:
        lossy.append("system prompt is not in the history: requests start at the task message")
    if tool_schemas is None:
        lossy.append("tool schemas are not recorded (no system action with tools in the history)")
    lossy.extend(_rendering_notes(renderings, max_chars))
    if uncounted:
        lossy.append(f"{uncounted} agent action(s) without a model_response are not counted as calls")
    if errors_without_call:
        lossy.append(
            f"{errors_without_call} error observation(s) carry no tool call id (e.g. a tool call that "
            "failed validation): the response that caused them is not in the history, kept as events"
        )

    outcome = _outcome(d, line, finish, turns, meta, f)
    label = _label(d.get("test_result"), d.get("report"))
    if label is None:
        lossy.append("no resolved/unresolved label recorded (test_result has no resolved field)")
    outcome.label = label
    max_iter = f.tokens(meta.get("max_iterations"), line, "metadata.max_iterations")
    max_input = f.tokens(llm.get("max_input_tokens"), line, "metadata.llm_config.max_input_tokens")
    agent_class = f.text(meta.get("agent_class"), line, "metadata.agent_class")
    params: dict[str, Any] = {"agent_class": agent_class}
    for key in ("max_budget_per_task", "condenser_config"):
        if meta.get(key) is not None:
            params[key] = f.plain(meta[key], line, f"metadata.{key}")
    for key in (
        "max_message_chars",
        "temperature",
        "caching_prompt",
        "native_tool_calling",
        "reasoning_effort",
    ):
        if llm.get(key) is not None:
            params[key] = f.plain(llm[key], line, f"metadata.llm_config.{key}")
    return Run(
        run_id=instance,
        source=NAME,
        source_file=str(path),
        importer=f"{NAME} {VERSION}",
        lossy=lossy,
        model=f.text(llm.get("model"), line, "metadata.llm_config.model"),
        context_length=max_input,
        output_cap=f.tokens(llm.get("max_output_tokens"), line, "metadata.llm_config.max_output_tokens"),
        policy=RecordedPolicy(rules="openhands", max_turns=max_iter, context_length=max_input, params=params),
        task=task if task is not None else f.text(d.get("instruction"), line, "instruction"),
        tool_schemas=tool_schemas,
        started_at=started,
        messages=messages,
        turns=turns,
        events=in_turn_order(events),
        outcome=outcome,
        metadata={
            "line": line,
            "agent_class": agent_class,
            "dataset": f.plain(meta.get("dataset"), line, "metadata.dataset"),
        },
    )


ZONE_STEP = timedelta(minutes=15)
"""Time zones are whole multiples of 15 minutes; a model call lasts seconds, so the rounded gap is the zone."""


def _zone_offset(turns: list[Turn]) -> timedelta:
    """The zone of naive event timestamps: the median gap between a call's end (its action event, naive local
    time) and its start (``model_response.created``, UTC), rounded to 15 minutes. Zero when it cannot be told."""
    gaps = sorted(
        (t.ended_at - t.started_at).total_seconds()
        for t in turns
        if t.ended_at is not None and t.started_at is not None
    )
    if not gaps:
        return timedelta(0)
    median = gaps[len(gaps) // 2]
    step = ZONE_STEP.total_seconds()
    return timedelta(seconds=round(median / step) * step)


def _max_message_chars(value: Any, line: int, f: Fields) -> int | None:
    """``llm_config.max_message_chars`` as OpenHands reads it (an integer; negative means no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        f.bad(line, "metadata.llm_config.max_message_chars", f"expected an integer, got {value!r}")
        return None
    return value


def _rendering_notes(
    renderings: list[tuple[str, openhands_render.Rendering]], max_chars: int | None
) -> list[str]:
    """What the request messages carry instead of the tools' own output, and where that is not exact."""
    if not renderings:
        return []
    notes = []
    cut = sum(r.truncated for _, r in renderings)
    if max_chars is None:
        notes.append(
            "metadata.llm_config.max_message_chars is not recorded: observations are sent uncut here "
            "(OpenHands cuts them to that limit when it is set)"
        )
    elif max_chars >= 0:
        notes.append(
            f"observations in the requests are cut as OpenHands sent them (ToolResult.content keeps the tool's "
            f"output): longer than metadata.llm_config.max_message_chars={max_chars:,}, the first and last "
            f"{max_chars // 2:,} characters are kept around {openhands_render.TRUNCATION_NOTICE!r} "
            f"(truncate_content, openhands/events/serialization/event.py); file reads are sent whole; "
            f"{cut} observation(s) cut"
        )
    notes.append(
        "observations are rendered as CodeActAgent sends them (conversation_memory.py _process_observation): "
        "command output with its metadata lines (to_agent_observation), errors with "
        f"{openhands_render.ERROR_SUFFIX.strip()!r}"
    )
    loose = sorted({kind for kind, r in renderings if not r.exact})
    if loose:
        notes.append(
            f"observation type(s) {', '.join(loose)}: OpenHands' own formatting is not reproduced; "
            "the (cut) content stands in for it"
        )
    return notes


def _call(
    line: int,
    where: str,
    tcm: dict[str, Any],
    by_response: dict[str, Turn],
    turns: list[Turn],
    messages: list[Message],
    usages_by_id: dict[str, dict[str, Any]],
    when: Any,
    f: Fields,
) -> Turn | None:
    mr = tcm.get("model_response")
    if not isinstance(mr, dict) or not isinstance(mr.get("id"), str):
        f.bad(line, f"{where}.tool_call_metadata.model_response.id", "action without a model response id")
        return None
    rid = mr["id"]
    if rid in by_response:
        return by_response[rid]
    choices = mr.get("choices") if isinstance(mr.get("choices"), list) else []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    msg = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    calls = []
    for j, tc in enumerate(msg.get("tool_calls") or []):
        fn = tc.get("function") if isinstance(tc, dict) and isinstance(tc.get("function"), dict) else None
        if fn is None:
            f.bad(line, f"{where}.model_response.choices[0].message.tool_calls[{j}]", "no function")
            continue
        args = fn.get("arguments")
        calls.append(
            ToolCall(
                id=tc.get("id") if isinstance(tc.get("id"), str) else None,
                name=fn.get("name") if isinstance(fn.get("name"), str) else "?",
                arguments=args if isinstance(args, str) else "",
            )
        )
    text = msg.get("content") if isinstance(msg.get("content"), str) else None
    turn = Turn(
        index=len(turns),
        sent=[(0, len(messages))],
        response_id=rid,
        started_at=f.time(mr.get("created"), line, f"{where}.model_response.created"),
        ended_at=when,
        finish_reason=choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None,
        text=text or None,
        tool_calls=calls,
        model=mr.get("model") if isinstance(mr.get("model"), str) else None,
        usage=_usage(line, where, mr.get("usage"), usages_by_id.get(rid), f),
        mutated=False,
    )
    messages.append(Message(role="assistant", content=text or None, tool_calls=list(calls)))
    turns.append(turn)
    by_response[rid] = turn
    return turn


def _usage(line: int, where: str, usage: Any, recorded: dict[str, Any] | None, f: Fields) -> Usage:
    u = usage if isinstance(usage, dict) else {}
    at = f"{where}.model_response.usage"
    pd = u.get("prompt_tokens_details") if isinstance(u.get("prompt_tokens_details"), dict) else {}
    cd = u.get("completion_tokens_details") if isinstance(u.get("completion_tokens_details"), dict) else {}
    prompt = f.tokens(u.get("prompt_tokens"), line, f"{at}.prompt_tokens")
    completion = f.tokens(u.get("completion_tokens"), line, f"{at}.completion_tokens")
    cached = f.tokens(pd.get("cached_tokens"), line, f"{at}.prompt_tokens_details.cached_tokens")
    reasoning = f.tokens(cd.get("reasoning_tokens"), line, f"{at}.completion_tokens_details.reasoning_tokens")
    cache_write = None
    if recorded:
        if prompt is None:
            prompt = f.tokens(recorded.get("prompt_tokens"), line, "metrics.token_usages[].prompt_tokens")
        if completion is None:
            completion = f.tokens(
                recorded.get("completion_tokens"), line, "metrics.token_usages[].completion_tokens"
            )
        if cached is None:
            cached = f.tokens(
                recorded.get("cache_read_tokens"), line, "metrics.token_usages[].cache_read_tokens"
            )
        cache_write = f.tokens(
            recorded.get("cache_write_tokens"), line, "metrics.token_usages[].cache_write_tokens"
        )
    if prompt is not None and cached is not None and cached > prompt:
        f.bad(line, f"{at}.prompt_tokens_details.cached_tokens", f"cached {cached} exceeds prompt {prompt}")
    return Usage(
        prompt=prompt, cached=cached, cache_write=cache_write, completion=completion, reasoning=reasoning
    )


def _outcome(
    d: dict[str, Any],
    line: int,
    finish: dict[str, Any] | None,
    turns: list[Turn],
    meta: dict[str, Any],
    f: Fields,
) -> Outcome:
    error = d.get("error")
    error = error if isinstance(error, str) else (None if error is None else str(error))
    if error:
        m = _MAX_ITER.search(error)
        if m:
            reached, allowed = int(m.group(1)), int(m.group(2))
            return Outcome(
                stop_reason="max-iterations",
                exhausted="max_iterations",
                meter=Meter(name="max_iterations", reached=reached, allowed=allowed, unit="iterations"),
                detail=error,
            )
        return Outcome(stop_reason="error", detail=error)
    if finish is not None:
        args = finish.get("args") if isinstance(finish.get("args"), dict) else {}
        text = args.get("final_thought") or args.get("thought") or finish.get("message")
        return Outcome(
            stop_reason="done", text=text if isinstance(text, str) and text else None, detail="finish"
        )
    return Outcome(stop_reason=None, detail="history ends without a finish action or an error")


def _label(test_result: Any, report: Any) -> str | None:
    for holder in (
        test_result,
        (test_result or {}).get("report") if isinstance(test_result, dict) else None,
        report,
    ):
        if isinstance(holder, dict) and isinstance(holder.get("resolved"), bool):
            return "resolved" if holder["resolved"] else "unresolved"
    return None
