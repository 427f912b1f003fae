"""OpenHands evaluation output (``output.jsonl``): one run a line; also its 2024 histories, resolver output and V1
harness lines (:mod:`workbench.importers.openhands_v1`). ``metadata.max_iterations`` and ``agent_class`` become the
recorded policy; the request messages carry each observation as CodeActAgent sent it, cut to
``llm_config.max_message_chars`` (:mod:`workbench.importers.openhands_render`). The shapes and their mapping:
docs/importers/openhands.md."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from workbench import labels as labels_mod
from workbench.importers import (
    mutation,
    openhands_completions,
    openhands_labels,
    openhands_legacy,
    openhands_render,
    openhands_v1,
)
from workbench.importers._common import NAIVE_TIMES, Fields, function_calls, iter_json_lines, require_runs
from workbench.importers.contract import HASHED, NO_TOOL_USAGE, declare, inferred, recorded
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.route import stamp
from workbench.trace.schema import EventKind, Message, Meter, Outcome, RecordedPolicy, Run, Turn, Usage

NAME = "openhands"
VERSION = "2"  # 2: requests carry observations as sent (rendered, cut); v0.35 tool schemas
CACHEABLE = False  # reads files beside its own, named by dependencies(path) (workbench.scale.cache)

# The evaluation harness answers a reply without a tool call with this (evaluation/utils/shared.py
# codeact_user_response, every version): the run goes on, so the reply is a retry, not a final answer.
RETRY_OPENING = "Please continue working on the task on whatever approach you think is suitable"

# The roles of OpenHands' tools (CodeActAgent function calling, and the legacy action names).
TOOLS = mutation.Tools(
    shell={"execute_bash": "command", "run": "command", "bash": "command", "execute_powershell": "command"},
    editors={"str_replace_editor": "command"},
    python={"execute_ipython_cell": "code", "run_ipython": "code"},
    writes=frozenset({"edit_file", "edit", "write", "apply_patch"}),
    reads=frozenset(
        {"think", "finish", "browse", "browse_interactive", "browser", "web_read", "fetch", "read"}
    ),
)

FACTS = declare(
    mutated=inferred(
        "edit observations; else the calls: CmdRunAction/execute_bash commands parsed (workbench.importers.shell), "
        "str_replace_editor by sub-command, IPython code by its syntax tree; else unknown"
    ),
    new_info=HASHED,
    tool_error=recorded("error observations, exit codes"),
    tool_timeout=inferred("the command's timeout text"),
    ending=recorded(
        "AgentFinishAction; a text reply the harness answered with its retry message is not final"
    ),
    tool_usage=NO_TOOL_USAGE,
    cache_read=recorded(
        "usage.prompt_tokens_details.cached_tokens, cache_read_tokens; unknown where the response's "
        "prompt_tokens_details is null (OpenHands' metrics then write a default 0)"
    ),
    cache_write=recorded("cache_creation_input_tokens, cache_write_tokens where reported"),
    route=recorded(
        "llm_config custom_llm_provider and base_url; the gateway inferred from an OpenRouter gen- response id, "
        "the provider from the served model's vendor (workbench.trace.route); the LiteLLM prefix is not read"
    ),
)


_MAX_ITER = re.compile(r"maximum iteration.*?Current iteration:\s*(\d+),\s*max iteration:\s*(\d+)", re.S)
_TIMED_OUT = ("timed out", "no new output after")
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
            run = run_from_line(path, line, obj, f)
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


def run_from_line(path: Path, line: int, d: dict[str, Any], f: Fields) -> Run:
    """One run from one output line (or a history given as one), V0, 2024, resolver or V1."""
    resolver, instance = instance_of(path, line, d, f)
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
    history, shape = openhands_legacy.flatten(raw_history, line, f)
    counted = not any(isinstance(e.get("tool_call_metadata"), dict) for _, e in history)
    max_chars = _max_message_chars(llm.get("max_message_chars"), line, f, llm_key)
    h = _History(f, line, counted, max_chars, usages_by_id)
    naive_before = f.naive_times
    for where, e in history:
        try:
            h.feed(where, e)
        except Exception as exc:  # an unforeseen shape loses this event only
            f.bad(line, where, f"unreadable event ({type(exc).__name__}: {exc})")
    h.infer_mutations()
    costs = [
        c if isinstance(c, dict) else {"cost": c}  # 2024 outputs: a bare list of floats
        for c in f.items(metrics.get("costs"), line, "metrics.costs")
        if isinstance(c, dict | int | float) and not isinstance(c, bool)
    ]
    openhands_v1.apply_costs(h, costs, f, line, "metrics.costs")  # no turn has a cost yet
    if f.naive_times > naive_before:
        h.on_utc()
    h.say_what_is_lost(completions, d.get("llm_completions"), shape)

    outcome = _outcome(d, h.finish)
    openhands_labels.set_label(outcome, d, resolver, h.lossy, path, instance)
    max_iter = f.tokens(meta.get("max_iterations"), line, "metadata.max_iterations")
    max_input = f.tokens(llm.get("max_input_tokens"), line, f"metadata.{llm_key}.max_input_tokens")
    agent_class = f.text(meta.get("agent_class"), line, "metadata.agent_class")
    params = _params(meta, llm, llm_key, agent_class, line, f)
    _routes(h.turns, llm, llm_key)
    return h.run(
        run_id=instance,
        **origin(NAME, VERSION, path),
        model=f.text(llm.get("model"), line, f"metadata.{llm_key}.model"),
        context_length=max_input,
        output_cap=f.tokens(llm.get("max_output_tokens"), line, f"metadata.{llm_key}.max_output_tokens"),
        policy=RecordedPolicy(rules="openhands", max_turns=max_iter, context_length=max_input, params=params),
        task=h.task if h.task is not None else f.text(d.get("instruction"), line, "instruction"),
        tool_schemas=h.tool_schemas,
        started_at=h.started,
        outcome=outcome,
        recorded_cost_usd=openhands_v1.recorded_total(
            f.number(metrics.get("accumulated_cost"), line, "metrics.accumulated_cost"), h.turns, h.lossy
        ),
        metadata={
            "line": line,
            "instance_id": instance,
            "agent_class": agent_class,
            "dataset": f.plain(meta.get("dataset"), line, "metadata.dataset"),
            "history_shape": shape,
            **({"issue": f.plain(d.get("issue"), line, "issue")} if resolver else {}),
        },
    )


LLM_PARAMS = ("max_message_chars", "temperature", "caching_prompt", "native_tool_calling", "reasoning_effort")


def _params(
    meta: dict[str, Any], llm: dict[str, Any], llm_key: str, agent_class: str | None, line: int, f: Fields
) -> dict[str, Any]:
    """The recorded policy's parameters: the agent class, the budget and condenser, the LLM's settings."""
    return {
        "agent_class": agent_class,
        **f.plain_fields(meta, ("max_budget_per_task", "condenser_config"), line, "metadata."),
        **f.plain_fields(llm, LLM_PARAMS, line, f"metadata.{llm_key}."),
    }


class _History(TranscriptBuilder):
    """One V0 (or 2024) history as it is read, one handler per event type. ``counted``: the history carries no
    model responses (every agent action is one call, :mod:`workbench.importers.openhands_legacy`)."""

    def __init__(
        self, f: Fields, line: int, counted: bool, max_chars: int | None, usages: dict[str, dict[str, Any]]
    ) -> None:
        super().__init__()
        self.f, self.line, self.counted, self.max_chars, self.usages = f, line, counted, max_chars, usages
        self.note(*LOSSY_ALWAYS)
        self.renderings: list[tuple[str, openhands_render.Rendering]] = []
        self.by_response: dict[str, Turn] = {}
        self.task: str | None = None
        self.finish: dict[str, Any] | None = None
        self.started: datetime | None = None
        self.has_system = False
        self.tool_schemas: list[dict[str, Any]] | None = None
        self.uncounted = 0
        self.errors_without_call = 0
        # agent messages without a model response (function calling, text replies)
        self.text_only: list[Turn] = []
        # counted mode: calls awaiting their observation (call id, turn)
        self.pending: list[tuple[str, Turn]] = []

    def feed(self, where: str, e: dict[str, Any]) -> None:
        f, line = self.f, self.line
        when = f.time(e.get("timestamp"), line, f"{where}.timestamp")
        self.started = self.started or when
        action, observation = _kind(e, "action", line, where, f), _kind(e, "observation", line, where, f)
        args = e.get("args") if isinstance(e.get("args"), dict) else {}
        tcm = e.get("tool_call_metadata") if isinstance(e.get("tool_call_metadata"), dict) else None
        if action == "system":
            self._system(where, e, args)
        elif action == "message" and (
            e.get("source") == "user" or (e.get("source") is None and self.task is None and not self.turns)
        ):
            self._user(where, e, args)
        elif action == "recall" or observation == "recall":
            return
        elif action is not None and self.counted:
            self._counted_action(e, args, action, when)
        elif action is not None and tcm is None:
            self._action_without_response(e, args, action, when)
        elif action is not None and tcm is not None:
            self._action(where, e, action, tcm, when)
        elif observation is not None:
            self._observation(where, e, observation, tcm, when)

    # -- actions --------------------------------------------------------------------------------------

    def _system(self, where: str, e: dict[str, Any], args: dict[str, Any]) -> None:
        self.has_system = True
        text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
        self.message("system", self.f.text(text, self.line, f"{where}.args.content"))
        tools = self.f.items(args.get("tools"), self.line, f"{where}.args.tools")
        if tools and self.tool_schemas is None:  # v0.35 records the tools it sent beside the system prompt
            self.tool_schemas = self.f.plain(
                [t for t in tools if isinstance(t, dict)], self.line, f"{where}.args.tools"
            )

    def _user(self, where: str, e: dict[str, Any], args: dict[str, Any]) -> None:
        text = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
        text = self.f.text(text, self.line, f"{where}.args.content")
        if self.turns and not self.turns[-1].tool_calls and (text or "").lstrip().startswith(RETRY_OPENING):
            # the evaluation's fake user answered a reply without a tool call: a retry, not an ending
            self.turns[-1].format_error = (text or "").strip().splitlines()[0][:200]
        self.task = self.task or text
        self.message("user", text)

    def _counted_action(
        self, e: dict[str, Any], args: dict[str, Any], action: str, when: datetime | None
    ) -> None:
        if e.get("source") in ("agent", None) and action not in openhands_legacy.NOT_MODEL_ACTIONS:
            turn = openhands_legacy.counted_call(e, args, action, when, self)
            if turn.tool_calls:
                self.pending.append((turn.tool_calls[0].id or "", turn))
            if action == "finish":
                self.finish = e

    def _action_without_response(
        self, e: dict[str, Any], args: dict[str, Any], action: str, when: datetime | None
    ) -> None:
        if e.get("source") == "agent" and action == "message":
            # With function calling, a response without a tool call becomes a message action that carries no
            # tool_call_metadata: still one model call.
            said = args.get("content") if isinstance(args.get("content"), str) else e.get("message")
            said = said if isinstance(said, str) else None
            turn = self.turn(
                reply=Message(role="assistant", content=said), ended_at=when, text=said, mutated=False
            )
            self.text_only.append(turn)
        elif e.get("source") == "agent":
            self.uncounted += 1
            if action == "finish":
                self.finish = e
            text = e.get("message") if isinstance(e.get("message"), str) else None
            self.message("assistant", text, kind=f"action:{action}")

    def _action(
        self, where: str, e: dict[str, Any], action: str, tcm: dict[str, Any], when: datetime | None
    ) -> None:
        turn = self._call(where, tcm, when)
        call_id = tcm.get("tool_call_id")
        if isinstance(call_id, str) and turn is not None:
            self.expect(call_id, turn, when)
        if action == "finish":
            self.finish = e

    def _call(self, where: str, tcm: dict[str, Any], when: datetime | None) -> Turn | None:
        """The call an action's ``model_response`` records: one turn per response id (parallel tool calls repeat
        it)."""
        f, line = self.f, self.line
        mr = tcm.get("model_response")
        if not isinstance(mr, dict) or not isinstance(mr.get("id"), str):
            f.bad(line, f"{where}.tool_call_metadata.model_response.id", "action without a model response id")
            return None
        rid = mr["id"]
        if rid in self.by_response:
            return self.by_response[rid]
        choices = mr.get("choices") if isinstance(mr.get("choices"), list) else []
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        msg = choice.get("message") if isinstance(choice.get("message"), dict) else {}
        at = f"{where}.model_response.choices[0].message.tool_calls"
        calls = function_calls(
            f.items(msg.get("tool_calls"), line, at),
            lambda j: f.bad(line, f"{at}[{j}]", "no function"),
            loose=False,
        )
        text = msg.get("content") if isinstance(msg.get("content"), str) else None
        turn = self.reply(
            response_id=rid,
            started_at=f.time(mr.get("created"), line, f"{where}.model_response.created"),
            ended_at=when,
            finish_reason=choice.get("finish_reason")
            if isinstance(choice.get("finish_reason"), str)
            else None,
            text=text or None,
            tool_calls=calls,
            model=mr.get("model") if isinstance(mr.get("model"), str) else None,
            usage=_usage(line, where, mr.get("usage"), self.usages.get(rid), f),
            mutated=False,
        )
        self.by_response[rid] = turn
        return turn

    # -- observations ---------------------------------------------------------------------------------

    def _observation(
        self,
        where: str,
        e: dict[str, Any],
        observation: str,
        tcm: dict[str, Any] | None,
        when: datetime | None,
    ) -> None:
        f, line = self.f, self.line
        content = e.get("content")
        content = content if isinstance(content, str) else (f.text(content, line, f"{where}.content") or "")
        extras = e.get("extras") if isinstance(e.get("extras"), dict) else {}
        call_id = tcm.get("tool_call_id") if tcm else None
        by_tool = tcm is not None and isinstance(call_id, str)
        if self.counted:
            if observation != "null":  # NullObservation: nothing was observed or sent
                openhands_legacy.counted_result(e, observation, content, extras, when, self.pending)
                self._sent_as_user(observation, content, extras, by_tool=False)
            return
        if not by_tool:
            self._sent_as_user(observation, content, extras, by_tool=False, event_id=e.get("id"))
            return
        sent = self._rendered(observation, content, extras, by_tool=True)
        name = tcm.get("function_name") if tcm and isinstance(tcm.get("function_name"), str) else None
        self.message("tool", sent.text, tool_call_id=call_id, name=name)
        turn = self.owner(call_id)
        if turn is None:
            f.bad(
                line, f"{where}.tool_call_metadata.tool_call_id", f"observation of unknown call {call_id!r}"
            )
            return
        emeta = extras.get("metadata") if isinstance(extras.get("metadata"), dict) else {}
        exit_code = emeta.get("exit_code")
        suffix = emeta.get("suffix") if isinstance(emeta.get("suffix"), str) else ""
        is_error = (
            observation == "error"
            or content.startswith("ERROR:")
            or (isinstance(exit_code, int) and not isinstance(exit_code, bool) and exit_code != 0)
        )
        timed_out = any(s in suffix.lower() for s in _TIMED_OUT)
        self.result(call_id, content, when=when, is_error=is_error, timed_out=timed_out)
        if observation == "edit" and not is_error:
            turn.mutated = True

    def _rendered(
        self, observation: str, content: str, extras: dict[str, Any], by_tool: bool
    ) -> openhands_render.Rendering:
        sent = openhands_render.render(
            observation, content, extras, by_tool=by_tool, max_chars=self.max_chars
        )
        self.renderings.append((observation, sent))
        return sent

    def _sent_as_user(
        self, observation: str, content: str, extras: dict[str, Any], by_tool: bool, event_id: Any = None
    ) -> None:
        """An observation no tool call answers, sent as a user message (an error one also kept as an event)."""
        sent = self._rendered(observation, content, extras, by_tool)
        if not self.counted and observation == "error":
            self.errors_without_call += 1
            self.event(EventKind.ERROR_OBSERVATION, content[:500], {"event_id": event_id})
        self.message("user", sent.text, kind=f"observation:{observation}")

    # -- after the history ----------------------------------------------------------------------------

    def infer_mutations(self) -> None:
        """An edit observation is the recorded fact; other turns' is read from their calls."""
        for t in self.turns:
            if t.tool_calls and t.mutated is not True:
                t.mutated, t.mutated_rule = mutation.infer(t.tool_calls, TOOLS)

    def on_utc(self) -> None:
        """Event timestamps without a zone: shifted by the zone the calls show, else read as UTC."""
        offset = _zone_offset(self.turns)
        if not offset:
            self.note(NAIVE_TIMES)
            return
        # Event timestamps are local time without a zone; model_response.created is a UTC epoch. Shift the event
        # times so a call's start (created) and end (its action event) are on one clock.
        # In place: the text-only responses and the by-response index hold these same Turn objects.
        for t in self.turns:
            if t.ended_at is not None:
                t.ended_at = t.ended_at - offset
        self.started = self.started - offset if self.started is not None else None
        hours = offset.total_seconds() / 3600
        self.note(
            f"event timestamps carry no zone and run {hours:+g} h from model_response.created (a UTC epoch): "
            "shifted to UTC by that offset, inferred from the calls"
        )

    def say_what_is_lost(self, completions: openhands_completions.Found, inline: Any, shape: str) -> None:
        """The notes on what the history does not record, and the usage joined from completion logs."""
        f, line, turns = self.f, self.line, self.turns
        if not self.has_system:
            self.note("system prompt is not in the history: requests start at the task message")
        if self.tool_schemas is None:
            self.note("tool schemas are not recorded (no system action with tools in the history)")
        self.note(*_rendering_notes(self.renderings, self.max_chars))
        self.count_note(
            self.uncounted, "{n} agent action(s) without a model_response are not counted as calls"
        )
        if self.text_only:
            _text_only_usage(self.text_only, self.by_response, self.usages, line, f, self.lossy)
        _join_completions(turns, completions, self.lossy)
        _inline_completions(
            turns, f.items(inline, line, "llm_completions"), self.counted, f, line, self.lossy
        )
        if self.counted and turns:
            unknown = sum(not t.usage.known for t in turns)
            self.note(
                f"no model responses recorded ({shape}): each of the {len(turns)} agent action(s) counted as one "
                f"call, usage unknown for {unknown}; the action is kept as a tool call named after it with its "
                "arguments"
            )
        self.count_note(
            self.errors_without_call,
            "{n} error observation(s) carry no tool call id (e.g. a tool call that failed validation): the "
            "response that caused them is not in the history, kept as events",
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
        # OpenHands' metrics write cache_read_tokens = 0 when the response carried no prompt_tokens_details (its
        # own default, not the provider's report): a response usage without the details leaves the read unknown;
        # the metrics are read only where the response's usage was not kept
        if cached is None and not u:
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


def _outcome(d: dict[str, Any], finish: dict[str, Any] | None) -> Outcome:
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


def instance_of(path: Path, line: int, d: dict[str, Any], f: Fields) -> tuple[bool, str]:
    """Whether a line is resolver output, and the instance id its run is named by (and its labels and
    completion logs looked up by)."""
    resolver = isinstance(d.get("issue"), dict) and not any(k in d for k in openhands_completions.ID_KEYS)
    instance = _resolver_id(d["issue"]) if resolver else _instance_id(d, line, f)
    return resolver, instance or f"{path.stem}:{line}"


def _instance_id(d: dict[str, Any], line: int, f: Fields) -> str | None:
    """The run's id: ``instance_id``, or 2024's ``question_id`` / ``id``; text or an integer (its type is no
    signal: an integer id is named by its digits)."""
    for key in openhands_completions.ID_KEYS:
        v = d.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        if v is not None:
            return f.text(v, line, key)
    return None


def _resolver_id(issue: dict[str, Any]) -> str | None:
    owner, repo, number = issue.get("owner"), issue.get("repo"), issue.get("number")
    if isinstance(owner, str) and isinstance(repo, str) and isinstance(number, int | str):
        return f"{owner}/{repo}#{number}"
    return None


def _join_completions(turns: list[Turn], completions: openhands_completions.Found, lossy: list[str]) -> None:
    """Cost, latency (and usage a response left unsaid) from the completion logs beside the run, by response id."""
    if not completions.by_id:
        return
    joined = [(t, log) for t in turns if (log := completions.by_id.get(t.response_id or "")) is not None]
    for t, log in joined:
        if not t.usage.known:
            t.usage = log.usage.model_copy(update={"cost": t.usage.cost})
        if log.cost is not None:
            t.usage.cost = log.cost
        if log.latency is not None and t.ended_at is not None and t.started_at is None:
            t.started_at = t.ended_at - timedelta(seconds=log.latency)
    lossy.append(
        f"{len(joined)} of {len(turns)} call(s) joined to the completion logs in {completions.folder} by response id "
        f"({len(completions.by_id)} logs): cost from the log's cost"
    )


def _text_only_usage(
    text_only: list[Turn],
    by_response: dict[str, Turn],
    usages_by_id: dict[str, dict[str, Any]],
    line: int,
    f: Fields,
    lossy: list[str],
) -> None:
    """Usage of the text-only responses: the ``metrics.token_usages[]`` entries no action's response claims, in
    order, when there is exactly one per text-only response (else unknown, and said)."""
    spare = [rid for rid in usages_by_id if rid not in by_response]
    if spare and len(spare) == len(text_only):
        for t, rid in zip(text_only, spare, strict=True):
            rec = usages_by_id[rid]
            at = "metrics.token_usages[]"
            t.response_id = rid
            t.usage = Usage(
                prompt=f.tokens(rec.get("prompt_tokens"), line, f"{at}.prompt_tokens"),
                completion=f.tokens(rec.get("completion_tokens"), line, f"{at}.completion_tokens"),
                cached=f.tokens(rec.get("cache_read_tokens"), line, f"{at}.cache_read_tokens"),
                cache_write=f.tokens(rec.get("cache_write_tokens"), line, f"{at}.cache_write_tokens"),
            )
        lossy.append(
            f"{len(text_only)} text-only response(s) (agent messages without tool_call_metadata) counted as calls, "
            "their usage the metrics.token_usages entries no action claims, in order"
        )
    else:
        lossy.append(
            f"{len(text_only)} text-only response(s) (agent messages without tool_call_metadata) counted as calls "
            f"with usage unknown ({len(spare)} unclaimed metrics.token_usages entries)"
        )


def _inline_completions(
    turns: list[Turn], records: list[Any], counted: bool, f: Fields, line: int, lossy: list[str]
) -> None:
    """``llm_completions`` kept inside the output line (the evaluation harness of Sept-Oct 2024): one record
    ``{messages, response, timestamp, cost}`` per call. Joined by response id where the calls have one; in a
    history without model responses (one call per action), by order when there is exactly one per call."""
    logs = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            f.bad(line, f"llm_completions[{i}]", f"a completion is an object, got {type(rec).__name__}")
            continue
        rid = openhands_v1.completion_response_id(rec)
        logs.append((rid, openhands_v1.read_completion(rec, f, line, f"llm_completions[{i}]")))
    if not logs:
        return
    if counted:
        if len(logs) != len(turns):
            lossy.append(
                f"llm_completions has {len(logs)} records for {len(turns)} counted call(s): not joined "
                "(their order cannot be matched to the actions)"
            )
            return
        pairs = list(zip(turns, [log for _, log in logs], strict=True))
        how = "by order (one record per agent action)"
    else:
        by_id = {rid: log for rid, log in logs if rid}
        pairs = [(t, by_id[t.response_id]) for t in turns if t.response_id in by_id]
        how = "by response id"
    for t, log in pairs:
        if not t.usage.known:
            t.usage = log.usage.model_copy(update={"cost": t.usage.cost})
        if log.cost is not None:
            t.usage.cost = log.cost
        t.model = t.model or log.model
    lossy.append(f"{len(pairs)} of {len(turns)} call(s) joined to the line's llm_completions {how}")


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
    lossy = openhands_v1.lossy_of(
        built, completions.folder if completions.by_id else None, bool(f.naive_times)
    )
    openhands_labels.set_label(outcome, d, False, lossy, path, instance)
    _routes(built.turns, llm, llm_key)
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
            # The run's own totals as the SDK accumulated them (every LLM of the run), for comparison.
            "accumulated_token_usage": f.plain(
                metrics.get("accumulated_token_usage"), line, "metrics.accumulated_token_usage"
            ),
        },
        accumulated_cost=f.number(metrics.get("accumulated_cost"), line, "metrics.accumulated_cost"),
    )


def _routes(turns: list[Turn], llm: dict[str, Any], llm_key: str) -> None:
    """Each call's provider route from the run's LLM settings (LiteLLM's ``custom_llm_provider``, the
    ``base_url``) and its response (an OpenRouter generation id, the served model): never from the configured
    model name's LiteLLM prefix (``openai/openrouter-llama-4-maverick`` is an OpenAI-compatible client)."""

    def text(key: str) -> str | None:
        v = llm.get(key)
        return v if isinstance(v, str) and v else None

    stamp(
        turns,
        provider=text("custom_llm_provider"),
        provider_field=f"metadata.{llm_key}.custom_llm_provider",
        base_url=text("base_url"),
        model=text("model"),
        configured=True,
    )


def _kind(e: dict[str, Any], key: str, line: int, where: str, f: Fields) -> str | None:
    """An event's ``action`` / ``observation`` name (text), or ``None`` with a diagnostic when it is not text."""
    value = e.get(key)
    if value is None or isinstance(value, str):
        return value
    f.bad(line, f"{where}.{key}", f"expected text, got {type(value).__name__}")
    return None


def dependencies(path: Path) -> list[Path]:
    """The other files ``load(path)`` may read or look for, present or absent (docs/importers/README.md, "What
    each importer reads, for the corpus cache"); each completion-log folder is named too (its time changes when a
    run's logs are added), and an output file is parsed to know its instances."""
    path = Path(path)
    roots = openhands_completions.candidate_folders(path, "")  # beside an output file: every run's folder
    deps: list[Path] = []
    for root in roots:
        deps.append(root)
        if root.is_dir():
            deps.extend(sorted(root.rglob("*.json")))
            deps.extend(sorted(d for d in root.iterdir() if d.is_dir()))
    if not path.is_dir():
        quiet = Fields(path)
        try:
            instances = [
                instance_of(path, line, d, quiet)[1] for line, d in iter_json_lines(path, quiet.diagnostics)
            ]
        except TraceError:
            instances = []  # load refuses the file: nothing is cached for it
        deps.extend(labels_mod.looked_at(path, sorted(set(instances))))
    return deps
