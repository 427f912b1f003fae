"""OpenHands V1 events (the software-agent SDK's ``kind``-tagged pydantic dumps) into turns, messages and an
outcome, one handler per event kind; usage comes from the metrics by response id, never from the events. Which
events matter and how each maps: docs/importers/openhands.md, "V1 events"."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from workbench.importers._common import NAIVE_TIMES, Fields, dumps_args
from workbench.importers._common import text_of as _text_of
from workbench.importers.transcript import TranscriptBuilder
from workbench.trace.schema import (
    EventKind,
    Message,
    Meter,
    Outcome,
    RecordedPolicy,
    Run,
    ToolCall,
    Turn,
    Usage,
)

TOKEN_KEYS = (
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)
FINISH_TOOLS = frozenset({"finish", "FinishTool"})
_RESULT_KINDS = frozenset({"ObservationEvent", "AgentErrorEvent", "UserRejectObservation"})


@dataclass
class Ev:
    """One event and where it was read: its file's Fields, the line and the field path to it."""

    f: Fields
    line: int | None
    at: str
    d: dict[str, Any]

    def where(self, name: str) -> str:
        return f"{self.at}.{name}" if self.at else name


@dataclass
class Completion:
    """One completion log (what ``log_completions`` writes per call), read and checked."""

    usage: Usage
    cost: float | None
    zero_cost: bool
    latency: float | None
    model: str | None


@dataclass
class Usages:
    """Per-call usage the run recorded, by response id: metrics token usages, latencies, completion logs."""

    tokens: dict[str, dict[str, Any]] = field(default_factory=dict)
    latency: dict[str, float] = field(default_factory=dict)
    completions: dict[str, Completion] = field(default_factory=dict)
    """response id -> its completion log (``response``, ``cost``, ``latency_sec``), as ``log_completions`` wrote."""
    recorded: bool = False
    """Whether any metrics were recorded at all (else every call's usage is unknown)."""


class Built(TranscriptBuilder):
    """A V1 event stream as it is read (:func:`build`), one handler per event kind; what it found beside the
    transcript: the task, the tool schemas, how it ended (a finish action, a conversation error, the execution
    status) and the kinds it skipped."""

    def __init__(self, usages: Usages | None = None) -> None:
        super().__init__()
        self.usages = usages or Usages()
        self.task: str | None = None
        self.started: datetime | None = None
        self.tool_schemas: list[dict[str, Any]] | None = None
        self.finish_text: str | None = None
        self.finished = False
        self.error: tuple[str, str] | None = None  # (code, detail) of a ConversationErrorEvent
        self.status: str | None = None
        self.skipped: dict[str, int] = {}
        self._skipped: Counter[str] = Counter()
        self._by_response: dict[str, Turn] = {}
        self._reply_of: dict[int, Message] = {}
        self._no_response_id = 0
        self._condensed: list[str] = []
        self._last_action_rid: str | None = None
        self._children: Counter[str] = Counter()  # parent_id -> events naming it (two or more: a branch)

    def feed(self, ev: Ev) -> None:
        d = ev.d
        kind = d.get("kind") if isinstance(d.get("kind"), str) else None
        if kind != "ActionEvent":
            self._last_action_rid = None
        parent = d.get("parent_id")
        if isinstance(parent, str):
            self._children[parent] += 1
        when = ev.f.time(d.get("timestamp"), ev.line, ev.where("timestamp"))
        self.started = self.started or when
        _HANDLERS.get(kind or "", Built._skip)(self, ev, kind, when)

    # -- one handler per kind -------------------------------------------------------------------------

    def _skip(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        self._skipped[str(kind)] += 1

    def _system_prompt(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        self.message("system", text_of(ev.d.get("system_prompt")))
        tools = ev.d.get("tools")
        if isinstance(tools, list) and self.tool_schemas is None:
            self.tool_schemas = ev.f.plain(
                [t for t in tools if isinstance(t, dict)], ev.line, ev.where("tools")
            )

    def _message_event(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        d = ev.d
        msg = ev.f.obj(d.get("llm_message"), ev.line, ev.where("llm_message")) or {}
        text = text_of(msg.get("content"))
        if d.get("source") == "agent" or msg.get("role") == "assistant":
            rid = d.get("llm_response_id")
            if not isinstance(rid, str):
                self._no_response_id += 1
                rid = f"message-event:{d.get('id')}"
            turn, reply = self._call(rid, when)
            _add_text(turn, reply, text)
            reasoning = msg.get("reasoning_content")
            if isinstance(reasoning, str) and reasoning:
                reply.reasoning = reasoning
        else:
            self.task = self.task if self.task is not None else text
            self.message("user", text)

    def _action(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        d = ev.d
        rid = d.get("llm_response_id")
        thought = text_of(d.get("thought")) or None
        if not isinstance(rid, str):
            # SDKs before llm_response_id (Sept 2025): a parallel call's later actions follow the first with no
            # thought of their own, so they join it; otherwise each action is its own call.
            self._no_response_id += 1
            last = self._last_action_rid
            rid = last if last and thought is None else f"action-event:{d.get('id')}"
        turn, reply = self._call(rid, when)
        self._last_action_rid = rid if rid.startswith("action-event:") else None
        _add_text(turn, reply, thought)
        reasoning = d.get("reasoning_content")
        if not (isinstance(reasoning, str) and reasoning):
            reasoning = _thinking(d.get("thinking_blocks"))
        if reasoning:
            reply.reasoning = reasoning
        tc = ev.f.obj(d.get("tool_call"), ev.line, ev.where("tool_call")) or {}
        call_id = d.get("tool_call_id") if isinstance(d.get("tool_call_id"), str) else tc.get("id")
        name = d.get("tool_name") if isinstance(d.get("tool_name"), str) else tc.get("name")
        call = ToolCall(
            id=call_id if isinstance(call_id, str) else None,
            name=name if isinstance(name, str) else "?",
            arguments=dumps_args(tc.get("arguments", "")),
        )
        turn.tool_calls.append(call)
        reply.tool_calls.append(call)
        if call.id:
            self.expect(call.id, turn, when)
        action = d.get("action") if isinstance(d.get("action"), dict) else {}
        if call.name in FINISH_TOOLS or action.get("kind") == "FinishAction":
            self.finished = True
            fin = action.get("message")
            self.finish_text = fin if isinstance(fin, str) and fin else self.finish_text

    def _call(self, rid: str, when: datetime | None) -> tuple[Turn, Message]:
        """The turn of a response id (its message and actions arrive as several events) and its reply."""
        turn = self._by_response.get(rid)
        if turn is None:
            reply = Message(role="assistant")
            turn = self.turn(reply=reply, response_id=rid, ended_at=when, mutated=None)
            self._by_response[rid] = turn
            self._reply_of[turn.index] = reply
        return turn, self._reply_of[turn.index]

    def _tool_result(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        d = ev.d
        call_id = d.get("tool_call_id") if isinstance(d.get("tool_call_id"), str) else None
        timed_out = False
        if kind == "AgentErrorEvent":
            content, is_error = text_of(d.get("error")) or "", True
        elif kind == "UserRejectObservation":
            content, is_error = text_of(d.get("rejection_reason")) or "", True
        else:
            obs = ev.f.obj(d.get("observation"), ev.line, ev.where("observation")) or {}
            content = text_of(obs.get("content"))
            if content is None:  # SDK 1.0: output / error fields
                content = text_of(obs.get("output")) or text_of(obs.get("text")) or ""
            code = obs.get("exit_code")
            failed = isinstance(code, int) and not isinstance(code, bool) and code not in (0, -1)
            is_error = obs.get("is_error") is True or obs.get("error") is True or failed
            timed_out = obs.get("timeout") is True
        name = d.get("tool_name") if isinstance(d.get("tool_name"), str) else None
        self.message("tool", content, tool_call_id=call_id, name=name)
        if self.result(call_id, content, when=when, is_error=is_error, timed_out=timed_out) is None:
            ev.f.bad(ev.line, ev.where("tool_call_id"), f"result of unknown tool call {call_id!r}")

    def _condensation(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        d = ev.d
        rid = d.get("llm_response_id")
        tokens = self.usages.tokens.get(rid) if isinstance(rid, str) else None
        if isinstance(rid, str):
            self._condensed.append(rid)
        forgotten = d.get("forgotten_event_ids")
        self.event(
            EventKind.COMPACTION,
            "condenser",
            {
                "response_id": rid if isinstance(rid, str) else None,
                "forgotten_events": len(forgotten) if isinstance(forgotten, list) else None,
                "prompt_tokens": tokens.get("prompt_tokens") if tokens else None,
                "completion_tokens": tokens.get("completion_tokens") if tokens else None,
                "at": d.get("timestamp") if isinstance(d.get("timestamp"), str) else None,
            },
        )

    def _summary(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        self.message("user", text_of(ev.d.get("summary")), kind="compact-summary")

    def _conversation_error(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        code = ev.d.get("code") if isinstance(ev.d.get("code"), str) else "error"
        detail = ev.d.get("detail") if isinstance(ev.d.get("detail"), str) else ""
        self.error = (code, detail)

    def _state_update(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        if ev.d.get("key") == "execution_status" and isinstance(ev.d.get("value"), str):
            self.status = ev.d["value"]

    def _completion_log(self, ev: Ev, kind: str | None, when: datetime | None) -> None:
        log = ev.d.get("log_data")
        try:
            record = orjson.loads(log) if isinstance(log, str) else None
        except orjson.JSONDecodeError:
            ev.f.bad(ev.line, ev.where("log_data"), "completion log is not JSON")
            record = None
        rid = completion_response_id(record)
        if rid:
            self.usages.completions.setdefault(
                rid, read_completion(record, ev.f, ev.line, ev.where("log_data"))
            )

    # -- after the events -----------------------------------------------------------------------------

    def close(self) -> None:
        self.skipped = dict(sorted(self._skipped.items()))
        _apply_usage(self, self.usages, set(self._condensed))
        self.count_note(
            self._no_response_id,
            "{n} agent event(s) carry no llm_response_id: each message or first action counted as its own call "
            "(an action with no thought joins the action before it)",
        )
        branched = sorted(p for p, n in self._children.items() if n > 1)
        if branched:
            self.note(
                f"the conversation branched (events share a parent_id at {len(branched)} point(s)): every branch's "
                "calls are kept in file order, so requests after a branch still include the abandoned one"
            )
            self.event(EventKind.BRANCHES, data={"parents": branched[:20]}, turn=None)
        self.count_note(
            len(self._condensed),
            "{n} condenser call(s) are compaction events, not turns (their usage is on the event)",
        )


_HANDLERS: dict[str, Callable[[Built, Ev, str | None, datetime | None], None]] = {
    "SystemPromptEvent": Built._system_prompt,
    "MessageEvent": Built._message_event,
    "ActionEvent": Built._action,
    **dict.fromkeys(_RESULT_KINDS, Built._tool_result),
    "Condensation": Built._condensation,
    "CondensationSummaryEvent": Built._summary,
    "ConversationErrorEvent": Built._conversation_error,
    "ConversationStateUpdateEvent": Built._state_update,
    "LLMCompletionLogEvent": Built._completion_log,
}


def is_v1(history: list[Any]) -> bool:
    """A history of V1 events (``kind``-tagged) rather than V0 ``action``/``observation`` dicts."""
    return any(isinstance(e, dict) and isinstance(e.get("kind"), str) for e in history[:20])


def text_of(value: Any) -> str | None:
    """The text of a V1 content value: a string, a text block, or a list of text blocks (an ``image`` block as a
    marker)."""
    return _text_of(value, ("image",))


def build(events: list[Ev], usages: Usages) -> Built:
    """The turns, messages and events of a V1 event stream, with usage from ``usages`` by response id."""
    out = Built(usages)
    for ev in events:
        try:
            out.feed(ev)
        except Exception as exc:  # an unforeseen shape loses this event only
            ev.f.bad(ev.line, ev.at or "event", f"unreadable event ({type(exc).__name__}: {exc})")
    out.close()
    return out


def _thinking(blocks: Any) -> str | None:
    """The text of Anthropic thinking blocks (``thinking_blocks``), when a response recorded them."""
    if not isinstance(blocks, list):
        return None
    parts = [b["thinking"] for b in blocks if isinstance(b, dict) and isinstance(b.get("thinking"), str)]
    return "\n".join(parts) or None


def _add_text(turn: Turn, message: Message, text: str | None) -> None:
    if not text:
        return
    turn.text = f"{turn.text}\n{text}" if turn.text else text
    message.content = turn.text


def completion_response_id(record: Any) -> str | None:
    """The response id of a completion log record (``response.id``), or ``None``."""
    if not isinstance(record, dict):
        return None
    resp = record.get("response")
    rid = resp.get("id") if isinstance(resp, dict) else None
    return rid if isinstance(rid, str) and rid else None


def usage_from_response(usage: Any, f: Fields, line: int | None, at: str) -> Usage:
    """A chat-completions or Responses API ``usage`` object as recorded in a response."""
    u = usage if isinstance(usage, dict) else {}
    pd = u.get("prompt_tokens_details") or u.get("input_tokens_details")
    cd = u.get("completion_tokens_details") or u.get("output_tokens_details")
    pd = pd if isinstance(pd, dict) else {}
    cd = cd if isinstance(cd, dict) else {}
    p_key = "prompt_tokens" if "prompt_tokens" in u else "input_tokens"
    c_key = "completion_tokens" if "completion_tokens" in u else "output_tokens"
    write = u.get("cache_creation_input_tokens")
    return Usage(
        prompt=f.tokens(u.get(p_key), line, f"{at}.{p_key}"),
        completion=f.tokens(u.get(c_key), line, f"{at}.{c_key}"),
        cached=f.tokens(pd.get("cached_tokens"), line, f"{at}.prompt_tokens_details.cached_tokens"),
        cache_write=f.tokens(write, line, f"{at}.cache_creation_input_tokens"),
        reasoning=f.tokens(
            cd.get("reasoning_tokens"), line, f"{at}.completion_tokens_details.reasoning_tokens"
        ),
    )


# Workbench choice: no model call lasts longer (115 days). A larger latency is corruption, and one past ~10^13 s
# would not fit a time difference at all (it crashed the start-time arithmetic).
MAX_LATENCY_S = 10**7


def read_completion(record: dict[str, Any], f: Fields, line: int | None, at: str = "") -> Completion:
    """A completion log record: ``response.usage``, ``cost`` (USD, as OpenHands priced it), ``latency_sec``."""
    pre = f"{at}." if at else ""
    resp = record.get("response") if isinstance(record.get("response"), dict) else {}
    cost = f.number(record.get("cost"), line, f"{pre}cost")
    latency = f.number(record.get("latency_sec"), line, f"{pre}latency_sec")
    if latency is not None and latency > MAX_LATENCY_S:
        f.bad(
            line,
            f"{pre}latency_sec",
            f"implausible latency {latency!r} s (more than {MAX_LATENCY_S:,}); dropped",
        )
        latency = None
    model = resp.get("model")
    return Completion(
        usage=usage_from_response(resp.get("usage"), f, line, f"{pre}response.usage"),
        cost=cost if cost is not None and cost > 0 else None,
        zero_cost=cost == 0,
        latency=latency if latency is not None and latency >= 0 else None,
        model=model if isinstance(model, str) else None,
    )


def read_token_usages(items: list[Any], f: Fields, line: int | None, at: str) -> dict[str, dict[str, Any]]:
    """``metrics.token_usages[]`` by ``response_id``, each count checked (a bad one is a diagnostic)."""
    out: dict[str, dict[str, Any]] = {}
    for i, u in enumerate(items):
        if not isinstance(u, dict):
            f.bad(line, f"{at}[{i}]", f"token usage is {type(u).__name__}")
            continue
        rid = u.get("response_id")
        if not isinstance(rid, str) or not rid:
            continue
        model = u.get("model")
        out[rid] = {"model": model if isinstance(model, str) and model else None} | {
            k: f.tokens(u.get(k), line, f"{at}[{i}].{k}") for k in TOKEN_KEYS
        }
    return out


def _apply_usage(out: Built, usages: Usages, condensed: set[str]) -> None:
    from_logs = 0
    zero_cost = 0
    for t in out.turns:
        rid = t.response_id or ""
        rec = usages.tokens.get(rid)
        if rec is not None:
            t.usage = Usage(
                prompt=rec.get("prompt_tokens"),
                completion=rec.get("completion_tokens"),
                cached=rec.get("cache_read_tokens"),
                cache_write=rec.get("cache_write_tokens"),
                reasoning=rec.get("reasoning_tokens"),
            )
            t.model = t.model or rec.get("model")
        log = usages.completions.get(rid)
        if log is not None:
            if rec is None:
                t.usage = log.usage.model_copy()
                from_logs += 1
            t.usage.cost = log.cost
            zero_cost += log.zero_cost
            if log.latency is not None:
                usages.latency.setdefault(rid, log.latency)
            t.model = t.model or log.model
        latency = usages.latency.get(rid)
        if latency is not None and t.ended_at is not None:
            t.started_at = t.ended_at - timedelta(seconds=latency)
    unknown = sum(not t.usage.known for t in out.turns)
    if out.turns and not usages.recorded and not usages.completions:
        out.lossy.append(
            f"no metrics recorded: {len(out.turns)} call(s) counted from the events' llm_response_id, "
            "usage unknown for every call"
        )
    elif unknown:
        out.lossy.append(
            f"{unknown} of {len(out.turns)} call(s) have no token usage recorded under their response id: "
            "usage unknown for those"
        )
    if from_logs:
        out.lossy.append(f"usage of {from_logs} call(s) read from their completion logs (response.usage)")
    if zero_cost:
        out.lossy.append(
            f"{zero_cost} completion log(s) record cost 0.0, which OpenHands writes when it could not price "
            "the call: read as not recorded"
        )
    matched = {t.response_id for t in out.turns} | condensed
    spare = [r for r in usages.tokens if r and r not in matched]
    if spare:
        out.lossy.append(
            f"{len(spare)} recorded token usage(s) match no event's response id (another LLM of the run, "
            "e.g. a title or condenser model): not turns"
        )


_MAX_ITER_TEXT = re.compile(r"maximum iterations? (?:limit )?\(?(\d+)\)?", re.I)


def outcome(built: Built, error: str | None, max_iterations: int | None) -> Outcome:
    """How a V1 run ended: a run-limit error (``MaxIterationsReached``, ``MaxBudgetReached``), another error,
    a finish action (or ``execution_status`` finished), or unknown."""
    code, detail = built.error or (None, None)
    text = error or detail
    m = _MAX_ITER_TEXT.search(text or "")
    if code == "MaxIterationsReached" or (m and "iteration" in (text or "").lower()):
        allowed = max_iterations or (int(m.group(1)) if m else 0)
        return Outcome(
            stop_reason="max-iterations",
            exhausted="max_iterations",
            meter=Meter(name="max_iterations", reached=len(built.turns), allowed=allowed, unit="iterations"),
            detail=text,
        )
    if code == "MaxBudgetReached":
        return Outcome(stop_reason="max-budget", exhausted="max_budget_per_task", detail=text)
    if text:
        return Outcome(stop_reason="error", detail=f"{code}: {text}" if code and code not in text else text)
    if built.finished or built.status == "finished":
        last = built.turns[-1].text if built.turns else None
        return Outcome(stop_reason="done", text=built.finish_text or last, detail="finish")
    return Outcome(stop_reason=None, detail="the events end without a finish action or an error")


def apply_costs(built: TranscriptBuilder, costs: list[Any], f: Fields, line: int | None, at: str) -> None:
    """``metrics.costs[]`` carry no response id: assigned in call order only when there is one per call (the
    SDK skips zero-cost calls, so a shorter list cannot be placed)."""
    entries = [c for c in costs if isinstance(c, dict)]
    if not entries:
        return
    if len(entries) == len(built.turns) and all(t.usage.cost is None for t in built.turns):
        for t, c in zip(built.turns, entries, strict=True):
            t.usage.cost = f.number(c.get("cost"), line, f"{at}[].cost")
        built.lossy.append(
            "per-call cost taken from metrics.costs in call order (the entries carry no response id)"
        )
    elif all(t.usage.cost is None for t in built.turns):
        built.lossy.append(
            f"metrics.costs has {len(entries)} entries for {len(built.turns)} calls: per-call cost left unset"
        )


def latencies(items: list[Any]) -> dict[str, float]:
    """``metrics.response_latencies[]`` by ``response_id`` (seconds)."""
    out: dict[str, float] = {}
    for u in items:
        if isinstance(u, dict) and isinstance(u.get("response_id"), str):
            v = u.get("latency")
            if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e6:
                out[u["response_id"]] = float(v)
    return out


def metrics_usages(metrics: list[tuple[dict[str, Any], str]], f: Fields, line: int | None) -> Usages:
    """Token usages and latencies of one or more ``Metrics`` dumps (``(metrics, field path)``)."""
    usages = Usages()
    for m, at in metrics:
        usages.recorded = usages.recorded or bool(m.get("token_usages") or m.get("accumulated_token_usage"))
        usages.tokens.update(
            read_token_usages(
                f.items(m.get("token_usages"), line, f"{at}.token_usages"), f, line, f"{at}.token_usages"
            )
        )
        usages.latency.update(
            latencies(f.items(m.get("response_latencies"), line, f"{at}.response_latencies"))
        )
    return usages


LOSSY_ALWAYS = (
    "requests are rebuilt from the events in order (system prompt, messages, each response with its tool "
    "results); condensation and dynamic context are not reproduced",
    "mutated is not recorded (V1 events do not say whether a tool changed the workspace)",
)


def lossy_of(built: Built, joined_from: Path | None, naive_times: bool) -> list[str]:
    """A V1 run's notes: what V1 events never record, what the reading found, the completion logs joined (from
    this folder), timestamps without a zone read as UTC."""
    lossy = [*LOSSY_ALWAYS, *built.lossy]
    if joined_from is not None:
        lossy.append(f"completion logs joined by response id from {joined_from}")
    if naive_times:
        lossy.append(NAIVE_TIMES)
    return lossy


def to_run(
    built: Built,
    *,
    run_id: str,
    path: Path,
    importer: str,
    lossy: list[str],
    outcome: Outcome,
    llm: dict[str, Any],
    f: Fields,
    metadata: dict[str, Any],
    llm_at: str = "",
    max_iterations: int | None = None,
    line: int | None = None,
    accumulated_cost: float | None = None,
) -> Run:
    """The run of a V1 conversation, from its events and the LLM settings it recorded (never the api_key);
    ``accumulated_cost`` is read by :func:`recorded_total`."""
    recorded_cost_usd = recorded_total(accumulated_cost, built.turns, lossy)
    max_input = f.tokens(llm.get("max_input_tokens"), line, f"{llm_at}.max_input_tokens")
    keys = ("temperature", "reasoning_effort", "caching_prompt", "native_tool_calling", "usage_id")
    params = f.plain_fields(llm, keys, line, f"{llm_at}.")
    models = Counter(t.model for t in built.turns if t.model)
    model = f.text(llm.get("model"), line, f"{llm_at}.model") or (
        models.most_common(1)[0][0] if models else None
    )
    if built.tool_schemas is None:
        lossy.append("tool schemas are not recorded (no SystemPromptEvent with tools)")
    if not any(m.role == "system" for m in built.messages):
        lossy.append("system prompt is not in the events: requests start at the task message")
    return built.run(
        run_id=run_id,
        source="openhands",
        source_file=str(path),
        importer=importer,
        lossy=lossy,
        model=model,
        context_length=max_input,
        output_cap=f.tokens(llm.get("max_output_tokens"), line, f"{llm_at}.max_output_tokens"),
        policy=RecordedPolicy(
            rules="openhands", max_turns=max_iterations, context_length=max_input, params=params
        ),
        task=built.task,
        tool_schemas=built.tool_schemas,
        started_at=built.started,
        outcome=outcome,
        metadata={**metadata, "skipped": built.skipped, "execution_status": built.status},
        recorded_cost_usd=recorded_cost_usd,
    )


def recorded_total(total: float | None, turns: list[Turn], lossy: list[str]) -> float | None:
    """``accumulated_cost`` as the run's recorded cost. OpenHands records 0.0 when LiteLLM could not price the
    model, so a zero total over calls that used tokens is not a recorded cost (said in ``lossy``)."""
    if total == 0 and any((t.usage.prompt or 0) + (t.usage.completion or 0) > 0 for t in turns):
        lossy.append(
            "metrics.accumulated_cost is 0.0 over calls that used tokens (OpenHands could not price the model): "
            "read as not recorded"
        )
        return None
    return total
