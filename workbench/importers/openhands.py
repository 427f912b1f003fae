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
* ``test_result.resolved`` (or ``test_result.report.resolved``, ``report.resolved`` …) becomes
  ``Outcome.label`` with ``Outcome.label_source`` naming the field.

Also read here: 2024 histories of ``[action, observation]`` pairs and flat events (one call per agent action,
usage unknown), resolver output keyed by ``issue``, ``metadata.llm`` beside ``metadata.llm_config``, and V1
harness lines (SDK events, :mod:`workbench.importers.openhands_v1`). The rules are in docs/importers/openhands.md.
"""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from workbench.importers import openhands_completions, openhands_render, openhands_v1
from workbench.importers._common import (
    NAIVE_TIMES,
    Fields,
    in_turn_order,
    iter_json_lines,
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
# V0 actions that no model call produced (state changes, memory recall, condensation, placeholders).
_NOT_MODEL_ACTIONS = frozenset(
    {
        "system",
        "recall",
        "change_agent_state",
        "null",
        "condensation",
        "condensation_request",
        "pause",
        "resume",
    }
)
# Top-level keys of a V0 event (openhands/events/serialization/event.py TOP_KEYS); in 2024's flat events every
# other key is an argument (of an action) or an extra (of an observation).
_TOP_KEYS = frozenset(
    {
        "id",
        "timestamp",
        "source",
        "message",
        "cause",
        "action",
        "observation",
        "tool_call_metadata",
        "llm_metrics",
    }
)

LOSSY_ALWAYS = (
    "requests are rebuilt from the history the way CodeActAgent assembles them (system, task, then each "
    "response with its observations); workspace-context recall and condensation are not reproduced",
    "mutated is inferred from edit observations; files changed by shell commands are not detected",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    return openhands_completions.looks_like_output(head)


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
    resolver = isinstance(d.get("issue"), dict) and "instance_id" not in d
    instance = _resolver_id(d["issue"]) if resolver else f.text(d.get("instance_id"), line, "instance_id")
    instance = instance or f"{path.stem}:{line}"
    meta = f.obj(d.get("metadata"), line, "metadata") or {}
    llm_key = "llm_config" if meta.get("llm_config") is not None else "llm"  # V1 harness: metadata.llm
    llm = f.obj(meta.get(llm_key), line, f"metadata.{llm_key}") or {}
    metrics = f.obj(d.get("metrics"), line, "metrics") or {}
    raw_history = f.items(d.get("history"), line, "history")
    completions = openhands_completions.beside(path, instance)
    f.diagnostics.extend(completions.diagnostics)
    if openhands_v1.is_v1(raw_history):
        return _v1_run(path, line, d, f, instance, meta, llm, llm_key, metrics, raw_history, completions)
    usages_by_id: dict[str, dict[str, Any]] = {}
    for u in f.items(metrics.get("token_usages"), line, "metrics.token_usages"):
        if isinstance(u, dict) and isinstance(u.get("response_id"), str):
            usages_by_id[u["response_id"]] = u
    history, shape = _flatten(raw_history, line, f)
    counted = not any(isinstance(e.get("tool_call_metadata"), dict) for _, e in history)

    max_chars = _max_message_chars(llm.get("max_message_chars"), line, f, llm_key)
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
    pending: list[tuple[str, Turn]] = []  # counted mode: calls awaiting their observation (call id, turn)
    for where, e in history:
        try:
            when = f.time(e.get("timestamp"), line, f"{where}.timestamp")
            started = started or when
            action, observation = _kind(e, "action", line, where, f), _kind(e, "observation", line, where, f)
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
            if action == "system":
                has_system = True
                text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
                messages.append(Message(role="system", content=f.text(text, line, f"{where}.args.content")))
                tools = f.items(args.get("tools"), line, f"{where}.args.tools")
                if tools and tool_schemas is None:  # v0.35 records the tools it sent beside the system prompt
                    tool_schemas = f.plain(
                        [t for t in tools if isinstance(t, dict)], line, f"{where}.args.tools"
                    )
                continue
            if action == "message" and (
                e.get("source") == "user" or (e.get("source") is None and task is None and not turns)
            ):
                text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
                text = f.text(text, line, f"{where}.args.content")
                task = task or text
                messages.append(Message(role="user", content=text))
                continue
            if action == "recall" or observation == "recall":
                continue
            if action is not None and counted:
                if e.get("source") in ("agent", None) and action not in _NOT_MODEL_ACTIONS:
                    turn = _counted_call(e, args, action, when, turns, messages, f)
                    if turn.tool_calls:
                        pending.append((turn.tool_calls[0].id or "", turn))
                    if action == "finish":
                        finish = e
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
                if counted and observation == "null":  # NullObservation: nothing was observed or sent
                    continue
                if counted:
                    _counted_result(e, str(observation), content, extras, when, pending, f, where, line)
                    sent = openhands_render.render(
                        str(observation), content, extras, by_tool=False, max_chars=max_chars
                    )
                    renderings.append((str(observation), sent))
                    messages.append(
                        Message(role="user", content=sent.text, kind=f"observation:{observation}")
                    )
                    continue
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
                    messages.append(
                        Message(role="user", content=sent.text, kind=f"observation:{observation}")
                    )
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
        except Exception as exc:  # an unforeseen shape loses this event only
            f.bad(line, where, f"unreadable event ({type(exc).__name__}: {exc})")

    costs = [
        c if isinstance(c, dict) else {"cost": c}  # 2024 outputs: a bare list of floats
        for c in f.items(metrics.get("costs"), line, "metrics.costs")
        if isinstance(c, dict | int | float) and not isinstance(c, bool)
    ]
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
    if counted and turns:
        lossy.append(
            f"no model responses recorded ({shape}): each of the {len(turns)} agent action(s) counted as one "
            "call, usage unknown; the action is kept as a tool call named after it with its arguments"
        )
    _join_completions(turns, completions, lossy)
    if errors_without_call:
        lossy.append(
            f"{errors_without_call} error observation(s) carry no tool call id (e.g. a tool call that "
            "failed validation): the response that caused them is not in the history, kept as events"
        )

    outcome = _outcome(d, line, finish, turns, meta, f)
    _set_label(outcome, d, resolver, lossy)
    max_iter = f.tokens(meta.get("max_iterations"), line, "metadata.max_iterations")
    max_input = f.tokens(llm.get("max_input_tokens"), line, f"metadata.{llm_key}.max_input_tokens")
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
            params[key] = f.plain(llm[key], line, f"metadata.{llm_key}.{key}")
    return Run(
        run_id=instance,
        source=NAME,
        source_file=str(path),
        importer=f"{NAME} {VERSION}",
        lossy=lossy,
        model=f.text(llm.get("model"), line, f"metadata.{llm_key}.model"),
        context_length=max_input,
        output_cap=f.tokens(llm.get("max_output_tokens"), line, f"metadata.{llm_key}.max_output_tokens"),
        policy=RecordedPolicy(rules="openhands", max_turns=max_iter, context_length=max_input, params=params),
        task=task if task is not None else f.text(d.get("instruction"), line, "instruction"),
        tool_schemas=tool_schemas,
        started_at=started,
        messages=messages,
        turns=turns,
        events=in_turn_order(events),
        outcome=outcome,
        recorded_cost_usd=f.number(metrics.get("accumulated_cost"), line, "metrics.accumulated_cost"),
        metadata={
            "line": line,
            "instance_id": instance,
            "agent_class": agent_class,
            "dataset": f.plain(meta.get("dataset"), line, "metadata.dataset"),
            "history_shape": shape,
            **({"issue": f.plain(d.get("issue"), line, "issue")} if resolver else {}),
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


def _max_message_chars(value: Any, line: int, f: Fields, llm_key: str = "llm_config") -> int | None:
    """``llm_config.max_message_chars`` as OpenHands reads it (an integer; negative means no limit)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        f.bad(line, f"metadata.{llm_key}.max_message_chars", f"expected an integer, got {value!r}")
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
    for j, tc in enumerate(
        f.items(msg.get("tool_calls"), line, f"{where}.model_response.choices[0].message.tool_calls")
    ):
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


def _flatten(history: list[Any], line: int, f: Fields) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The history as ``(field path, event)`` in order, whatever its shape: a list of events; 2024's list of
    ``[action, observation]`` pairs; or 2024's flat events (arguments and extras beside ``action``/``observation``,
    as the first resolver wrote them), normalised to ``args`` / ``content`` + ``extras``."""
    out: list[tuple[str, dict[str, Any]]] = []
    shapes: set[str] = set()
    for i, e in enumerate(history):
        where = f"history[{i}]"
        if isinstance(e, list):
            shapes.add("[action, observation] pairs")
            for j, part in enumerate(e[:2]):
                if isinstance(part, dict):
                    out.append((f"{where}[{j}]", _normalise(part, shapes)))
                else:
                    f.bad(line, f"{where}[{j}]", f"event is {type(part).__name__}")
            continue
        if not isinstance(e, dict):
            f.bad(line, where, f"event is {type(e).__name__}")
            continue
        out.append((where, _normalise(e, shapes)))
    shape = ", ".join(sorted(shapes)) or "an event list"
    return out, shape


def _normalise(e: dict[str, Any], shapes: set[str]) -> dict[str, Any]:
    if "action" in e and not isinstance(e.get("args"), dict) and any(k not in _TOP_KEYS for k in e):
        shapes.add("flat events")
        return {
            **{k: v for k, v in e.items() if k in _TOP_KEYS},
            "args": {k: v for k, v in e.items() if k not in _TOP_KEYS},
        }
    if "observation" in e and "extras" not in e and any(k not in _TOP_KEYS and k != "content" for k in e):
        shapes.add("flat events")
        rest = {k: v for k, v in e.items() if k not in _TOP_KEYS and k != "content"}
        return {**{k: v for k, v in e.items() if k in _TOP_KEYS or k == "content"}, "extras": rest}
    return e


def _counted_call(
    e: dict[str, Any],
    args: dict[str, Any],
    action: str,
    when: Any,
    turns: list[Turn],
    messages: list[Message],
    f: Fields,
) -> Turn:
    """One agent action of a history without model responses, as one call (usage unknown): its thought is the
    text; a tool action is a tool call named after the action with the remaining arguments."""
    thought = args.get("thought") if isinstance(args.get("thought"), str) else None
    text = thought
    if action in ("message", "finish"):
        said = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
        said = args.get("final_thought") if action == "finish" and args.get("final_thought") else said
        text = "\n".join(t for t in (thought, said if isinstance(said, str) else None) if t) or None
    calls = []
    if action not in ("message", "finish"):
        rest = {k: v for k, v in args.items() if k not in _ACTION_BOOKKEEPING}
        ident = e.get("id")
        calls.append(
            ToolCall(
                id=f"event-{ident}" if ident is not None else f"call-{len(turns)}",
                name=action,
                arguments=_dumps(rest),
            )
        )
    turn = Turn(
        index=len(turns),
        sent=[(0, len(messages))],
        ended_at=when,
        text=text,
        tool_calls=calls,
        mutated=False,
    )
    messages.append(Message(role="assistant", content=text, tool_calls=list(calls)))
    turns.append(turn)
    return turn


# Fields of a V0 action that are bookkeeping, not what the model asked for.
_ACTION_BOOKKEEPING = frozenset(
    {
        "thought",
        "is_confirmed",
        "action_risk",
        "security_risk",
        "keep_prompt",
        "kernel_init_code",
        "blocking",
        "hidden",
        "confirmation_state",
    }
)


def _dumps(value: Any) -> str:
    import orjson

    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return repr(value)


def _counted_result(
    e: dict[str, Any],
    observation: str,
    content: str,
    extras: dict[str, Any],
    when: Any,
    pending: list[tuple[str, Turn]],
    f: Fields,
    where: str,
    line: int,
) -> None:
    """Pair an observation with its action (``cause`` names the action's event id, else the oldest pending)."""
    cause = e.get("cause")
    index = next(
        (i for i, (cid, _) in enumerate(pending) if cause is not None and cid == f"event-{cause}"), None
    )
    if index is None and pending:
        index = 0
    if index is None:
        return  # an observation no action asked for (e.g. an environment message): kept in the messages only
    call_id, turn = pending.pop(index)
    meta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else extras
    exit_code = meta.get("exit_code")
    is_error = observation == "error" or (
        isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code not in (0, -1)
    )
    start = turn.ended_at
    turn.tool_results.append(
        ToolResult.of(
            content,
            call_id=call_id or None,
            is_error=is_error,
            duration_s=(when - start).total_seconds() if when and start else None,
        )
    )
    if observation == "edit" and not is_error:
        turn.mutated = True


def _resolver_id(issue: dict[str, Any]) -> str | None:
    owner, repo, number = issue.get("owner"), issue.get("repo"), issue.get("number")
    if isinstance(owner, str) and isinstance(repo, str) and isinstance(number, int | str):
        return f"{owner}/{repo}#{number}"
    return None


def _set_label(outcome: Outcome, d: dict[str, Any], resolver: bool, lossy: list[str]) -> None:
    """``Outcome.label`` and where it came from: the evaluation's ``test_result`` (or a resolver's own
    ``success``, which its LLM judged)."""
    found = label_of(d.get("test_result"), d.get("report"), d.get("instance_id"))
    if found is None and resolver and isinstance(d.get("success"), bool):
        found = (
            "resolved" if d["success"] else "unresolved",
            "openhands resolver success (judged by the resolver's own LLM, not by tests)",
        )
    if found is None:
        lossy.append("no resolved/unresolved label recorded (test_result has no resolved field)")
        return
    outcome.label, outcome.label_source = found
    outcome.score = score_of(d.get("test_result"))


def score_of(test_result: Any) -> float | None:
    """A numeric grade where the benchmark gives one: ``test_result.score`` (a number) or commit0's
    ``test_result.eval_result.passed`` (the fraction of tests passed)."""
    tr = test_result if isinstance(test_result, dict) else {}
    ev = tr.get("eval_result") if isinstance(tr.get("eval_result"), dict) else {}
    for value in (tr.get("score"), ev.get("passed")):
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return float(value)
    return None


def label_of(test_result: Any, report: Any, instance_id: Any = None) -> tuple[str, str] | None:
    """(label, source) from an OpenHands ``test_result``, in the places its evaluations write it:
    ``test_result.resolved``, ``test_result.report.resolved`` (SWE-bench eval_infer), a SWE-bench harness
    report keyed by instance id (``test_result.report.<id>.resolved``), ``test_result.result.resolved``
    (Multi-SWE-bench), a top-level ``report.resolved``; else a score (GAIA, commit0)."""
    tr = test_result if isinstance(test_result, dict) else {}
    rep = tr.get("report") if isinstance(tr.get("report"), dict) else {}
    places: list[tuple[Any, str]] = [
        (tr, "test_result.resolved"),
        (rep, "test_result.report.resolved"),
        (tr.get("result"), "test_result.result.resolved"),
        (report, "report.resolved"),
    ]
    if isinstance(instance_id, str) and isinstance(rep.get(instance_id), dict):
        places.insert(2, (rep[instance_id], f"test_result.report.{instance_id}.resolved"))
    for holder, name in places:
        if isinstance(holder, dict) and isinstance(holder.get("resolved"), bool):
            return ("resolved" if holder["resolved"] else "unresolved"), f"openhands {name}"
    # Benchmarks that grade by a score (the harness's eval_infer counts these as resolved): GAIA's boolean
    # test_result.score, commit0's test_result.eval_result.passed == 1.0, a numeric score of 1 or more.
    score = tr.get("score")
    if isinstance(score, bool):
        return ("resolved" if score else "unresolved"), "openhands test_result.score"
    ev = tr.get("eval_result") if isinstance(tr.get("eval_result"), dict) else {}
    for value, name in ((ev.get("passed"), "test_result.eval_result.passed"), (score, "test_result.score")):
        if isinstance(value, int | float) and not isinstance(value, bool) and value == value:
            return ("resolved" if value >= 1 else "unresolved"), f"openhands {name}"
    return None


def _join_completions(turns: list[Turn], completions: openhands_completions.Found, lossy: list[str]) -> None:
    """Cost, latency (and usage a response left unsaid) from the completion logs beside the run, by response id."""
    if not completions.by_id:
        return
    joined = 0
    for t in turns:
        log = completions.by_id.get(t.response_id or "")
        if log is None:
            continue
        joined += 1
        if not t.usage.known:
            cost = t.usage.cost
            t.usage = log.usage.model_copy(update={"cost": cost})
        if log.cost is not None:
            t.usage.cost = log.cost
        if log.latency is not None and t.ended_at is not None and t.started_at is None:
            t.started_at = t.ended_at - timedelta(seconds=log.latency)
    lossy.append(
        f"{joined} of {len(turns)} call(s) joined to the completion logs in {completions.folder} by response id "
        f"({len(completions.by_id)} logs): cost from the log's cost"
    )


def _v1_run(
    path: Path,
    line: int,
    d: dict[str, Any],
    f: Fields,
    instance: str,
    meta: dict[str, Any],
    llm: dict[str, Any],
    llm_key: str,
    metrics: dict[str, Any],
    history: list[Any],
    completions: openhands_completions.Found,
) -> Run:
    """A line of the V1 harness (OpenHands/benchmarks ``EvalOutput``): SDK events in ``history``, the combined
    ``metrics`` of the conversation, ``metadata.llm``."""
    events = []
    for i, e in enumerate(history):
        if isinstance(e, dict):
            events.append(openhands_v1.Ev(f, line, f"history[{i}]", e))
        else:
            f.bad(line, f"history[{i}]", f"event is {type(e).__name__}")
    usages = openhands_v1.metrics_usages([(metrics, "metrics")] if metrics else [], f, line)
    usages.completions.update(completions.by_id)
    built = openhands_v1.build(events, usages)
    openhands_v1.apply_costs(
        built, f.items(metrics.get("costs"), line, "metrics.costs"), f, line, "metrics.costs"
    )
    max_iter = f.tokens(meta.get("max_iterations"), line, "metadata.max_iterations")
    error = d.get("error")
    error = error if isinstance(error, str) else (None if error is None else str(error))
    outcome = openhands_v1.outcome(built, error, max_iter)
    lossy = [*openhands_v1.LOSSY_ALWAYS, *built.lossy]
    if completions.by_id:
        lossy.append(f"completion logs joined by response id from {completions.folder}")
    if f.naive_times:
        lossy.append(NAIVE_TIMES)
    _set_label(outcome, d, False, lossy)
    return openhands_v1.to_run(
        built,
        run_id=instance,
        path=path,
        importer=f"{NAME} {VERSION}",
        lossy=lossy,
        outcome=outcome,
        llm=llm,
        llm_at=f"metadata.{llm_key}",
        max_iterations=max_iter,
        f=f,
        line=line,
        metadata={
            "line": line,
            "instance_id": instance,
            "format": "openhands-v1 output",
            "dataset": f.plain(meta.get("dataset"), line, "metadata.dataset"),
            "sdk_version": f.plain(meta.get("openhands_sdk_version"), line, "metadata.openhands_sdk_version"),
        },
        recorded_cost_usd=f.number(metrics.get("accumulated_cost"), line, "metrics.accumulated_cost"),
    )


def _kind(e: dict[str, Any], key: str, line: int, where: str, f: Fields) -> str | None:
    """An event's ``action`` / ``observation`` name (text), or ``None`` with a diagnostic when it is not text."""
    value = e.get(key)
    if value is None or isinstance(value, str):
        return value
    f.bad(line, f"{where}.{key}", f"expected text, got {type(value).__name__}")
    return None
