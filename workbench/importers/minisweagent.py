"""mini-swe-agent trajectories (``*.traj.json``): what SWE-bench leaderboard submissions ship; both trajectory
formats. The shapes and their mapping: docs/importers/mini-swe-agent.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from workbench import labels as labels_mod
from workbench.importers import mutation
from workbench.importers._common import NAIVE_TIMES, Fields, chat_text, dumps_args
from workbench.importers.contract import HASHED, SHELL_RULE, declare, inferred, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_DOCUMENT_BYTES, read_document
from workbench.trace.route import observed
from workbench.trace.schema import Message, Outcome, RecordedPolicy, Run, ToolCall, ToolResult, Usage

NAME = "mini-swe-agent"
VERSION = "1"
CACHEABLE = False  # reads files beside its own, named by dependencies(path) (workbench.scale.cache)

# A trajectory is one JSON document read whole; past this it is not a trajectory (the largest seen are ~2 MB): the
# bound every whole-document reader keeps (workbench.trace.limits).
MAX_FILE_BYTES = MAX_DOCUMENT_BYTES

# The action regexes of mini-swe-agent's configs: ```bash (1.x) and ```mswea_bash_command (2.x).
_ACTION = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
# 1.x's timeout_template: "The last command <command>…</command> timed out and has been killed."
_TIMED_OUT = re.compile(r"timed out and has been killed")

_STOPS = {"submitted": "done", "timeexceeded": "deadline", "repeatedformaterror": "error"}

# The only tool is bash; its command is the workspace fact's only evidence.
TOOLS = mutation.Tools(shell={"bash": "command"})

# What the format-error reply opens with, in every version's default templates (the run's own recorded
# format_error_template is read first): 1.x "Please always provide EXACTLY ONE action …"; 2.x "Format error:" and
# the output-limit variant; 2.x also marks the message itself (extra.interrupt_type "FormatError").
FORMAT_ERROR_OPENINGS = (
    "Please always provide EXACTLY ONE action in triple backticks",
    "Format error:",
    "Your previous response reached the output token limit",
)

FACTS = declare(
    mutated=inferred(SHELL_RULE),
    new_info=HASHED,
    tool_error=recorded("<returncode> non-zero"),
    tool_timeout=recorded("the time-out template"),
    ending=recorded(
        "format-error reply (the run's format_error_template, extra.interrupt_type) is not final"
    ),
    tool_usage=unknown("bash runs no model"),
    cache_read=recorded("usage.prompt_tokens_details.cached_tokens"),
    cache_write=recorded("cache_creation_input_tokens / cache_write_tokens where the route reports them"),
    route=recorded(
        "OpenRouter's extra.response.provider, else model_kwargs' custom_llm_provider/api_base; the gateway "
        "inferred from an OpenRouter gen- id, the provider from the served model's vendor (workbench.trace.route)"
    ),
)

LOSSY_ALWAYS = (
    "mutated is not recorded in mini-swe-agent trajectories: inferred from the bash commands "
    "(workbench.importers.shell), unknown where a command's effect is",
    "call end times are not recorded (only the response's creation time, or the message timestamp in 2.x)",
)


def sniff(path: Path, head: list[bytes]) -> bool:
    text = b"".join(head)
    if not text.lstrip().startswith(b"{"):
        return False
    if b"mini-swe-agent" in text or b'"mini_version"' in text:
        return True
    # SWE-agent's own .traj carries `trajectory` / `tokens_sent`; mini-swe-agent's does not.
    if b'"trajectory"' in text or b'"tokens_sent"' in text or b'"history"' in text:
        return False
    pretty_info = b'"info"' in text and (b'"exit_status"' in text or b'"model_stats"' in text)
    return pretty_info and path.name.endswith(".traj.json")


def _usage(raw: Any, extra: dict[str, Any], f: Fields, where: str) -> Usage:
    u = raw if isinstance(raw, dict) else {}
    at = f"{where}.usage"
    chat = "prompt_tokens" in u or "completion_tokens" in u  # else the Responses API's names
    p_key, c_key = ("prompt_tokens", "completion_tokens") if chat else ("input_tokens", "output_tokens")
    pd = u.get(f"{p_key}_details") if isinstance(u.get(f"{p_key}_details"), dict) else {}
    cd = u.get(f"{c_key}_details") if isinstance(u.get(f"{c_key}_details"), dict) else {}
    prompt = f.tokens(u.get(p_key), None, f"{at}.{p_key}")
    completion = f.tokens(u.get(c_key), None, f"{at}.{c_key}")
    cached = f.tokens(pd.get("cached_tokens"), None, f"{at}.{p_key}_details.cached_tokens")
    cache_write = None
    if chat:
        write_raw = u.get("cache_creation_input_tokens", pd.get("cache_write_tokens"))
        cache_write = f.tokens(write_raw, None, f"{at}.cache_creation_input_tokens")
    reasoning = f.tokens(cd.get("reasoning_tokens"), None, f"{at}.{c_key}_details.reasoning_tokens")
    # LiteLLM's Anthropic usage reports cache reads apart from prompt_tokens in some versions.
    if chat and cached is None:
        cached = f.tokens(u.get("cache_read_input_tokens"), None, f"{at}.cache_read_input_tokens")
    if prompt is not None and cached is not None and cached > prompt:
        f.bad(None, at, f"cached tokens {cached} exceed the prompt {prompt}: cached dropped")
        cached = None
    cost = f.number(u.get("cost"), None, f"{at}.cost") if "cost" in u else None
    if cost is None and "cost" in extra:
        cost = f.number(extra.get("cost"), None, f"{where}.extra.cost")
    return Usage(
        prompt=prompt,
        cached=cached,
        cache_write=cache_write,
        completion=completion,
        reasoning=reasoning,
        cost=cost,
    )


def _actions(m: dict[str, Any], extra: dict[str, Any], turn: int, f: Fields, where: str) -> list[ToolCall]:
    """The calls a model message asked for: tool calls, Responses function calls, ``extra.actions`` or the
    fenced block of its text (text-based models need exactly one). A call list that is not a list is said
    (``where``) and read as none."""
    calls: list[ToolCall] = []
    for tc in f.items(m.get("tool_calls"), None, f"{where}.tool_calls"):
        if not isinstance(tc, dict):
            continue
        fn = tc.get("function") if isinstance(tc.get("function"), dict) else {}
        name = fn.get("name") if isinstance(fn.get("name"), str) else "bash"
        calls.append(
            ToolCall(id=_str(tc.get("id")), name=name, arguments=dumps_args(fn.get("arguments", "")))
        )
    for item in f.items(m.get("output"), None, f"{where}.output"):
        if isinstance(item, dict) and item.get("type") == "function_call":
            name = item.get("name") if isinstance(item.get("name"), str) else "bash"
            calls.append(
                ToolCall(
                    id=_str(item.get("call_id")), name=name, arguments=dumps_args(item.get("arguments", ""))
                )
            )
    if calls:
        return calls
    acts = extra.get("actions")
    if isinstance(acts, list) and acts:
        for i, a in enumerate(acts):
            if isinstance(a, dict) and isinstance(a.get("command"), str):
                cid = _str(a.get("tool_call_id")) or f"call-{turn}-{i}"
                calls.append(ToolCall(id=cid, name="bash", arguments=dumps_args({"command": a["command"]})))
        return calls
    found = _ACTION.findall(chat_text(m.get("content")) or "")
    if len(found) == 1:
        calls.append(
            ToolCall(id=f"call-{turn}", name="bash", arguments=dumps_args({"command": found[0].strip()}))
        )
    return calls


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) else None


def _result_text(m: dict[str, Any]) -> str | None:
    if m.get("type") == "function_call_output":
        return chat_text(m.get("output"))
    return chat_text(m.get("content"))


def _result(m: dict[str, Any], call: ToolCall) -> ToolResult:
    text = _result_text(m) or ""
    extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    code = extra.get("returncode")
    if not isinstance(code, int):
        found = _RETURNCODE.search(text)
        code = int(found.group(1)) if found else None
    # 2.x reports a time-out as return code -1 with the exception text ("…timed out…").
    timed_out = bool(_TIMED_OUT.search(text[:2000])) or (code == -1 and "timed out" in text[:2000])
    return ToolResult.of(text, call_id=call.id, is_error=code is not None and code != 0, timed_out=timed_out)


def _format_openings(doc: dict[str, Any]) -> tuple[str, ...]:
    """The openings a format-error reply of this run starts with: the static head of its own recorded
    ``format_error_template`` (1.x under ``config.agent``, 2.x under ``config.model``), then every version's
    defaults."""
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    config = info.get("config") if isinstance(info.get("config"), dict) else {}
    own: list[str] = []
    for part in ("agent", "model"):
        section = config.get(part) if isinstance(config.get(part), dict) else {}
        template = section.get("format_error_template")
        if isinstance(template, str):
            head = re.split(r"\{\{|\{%", template, maxsplit=1)[0].strip()
            if len(head) >= 12:
                own.append(head.splitlines()[0])
    return (*own, *FORMAT_ERROR_OPENINGS)


def _format_error(m: dict[str, Any], openings: tuple[str, ...]) -> str | None:
    """The first line of a user message that answers a malformed reply, or None."""
    if m.get("role") != "user":
        return None
    extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    text = (chat_text(m.get("content")) or "").lstrip()
    if extra.get("interrupt_type") == "FormatError" or text.startswith(openings):
        first = text.splitlines()[0] if text else "format error"
        return first[:200]
    return None


def _message(m: dict[str, Any]) -> Message:
    role = m.get("role")
    if m.get("type") == "function_call_output":
        role = "tool"
    if m.get("object") == "response":
        role = "assistant"
    if role not in ("system", "user", "assistant", "tool"):
        role = "user"
    content = chat_text(m.get("content"))
    if content is None and m.get("object") == "response":
        content = "\n".join(
            t
            for item in (m["output"] if isinstance(m.get("output"), list) else [])  # else said by _actions
            if isinstance(item, dict) and item.get("type") == "message"
            for t in [chat_text(item.get("content"))]
            if t
        )
    if content is None and role == "tool":
        content = _result_text(m)
    return Message(
        role=role, content=content, tool_call_id=_str(m.get("tool_call_id")) or _str(m.get("call_id"))
    )


# A string under an "instance_id" key, in the text of the document (a literal key: see _instances).
_INSTANCE_KEY = re.compile(rb'"instance_id"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _file_instance(path: Path) -> str:
    return path.name.removesuffix(".json").removesuffix(".traj")


def _instances(path: Path) -> list[str]:
    """The instance ids ``load(path)`` may look results up for — a superset: the file name's, and every string
    held under an ``"instance_id"`` key at any depth. Found in the text without parsing when the text holds no
    ``\\u`` escape (so every such key is spelled literally); else from the parsed document's own key."""
    found = [_file_instance(path)]
    try:
        data = read_document(path, "trajectory", MAX_FILE_BYTES)
    except (OSError, TraceError):
        return found
    if b"\\u" not in data:
        for raw in _INSTANCE_KEY.findall(data):
            try:
                found.append(orjson.loads(b'"' + raw + b'"'))
            except orjson.JSONDecodeError:
                continue
        return found
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return found  # load refuses the file: nothing is cached for it
    if isinstance(doc, dict) and isinstance(doc.get("instance_id"), str):
        found.append(doc["instance_id"])
    return found


def dependencies(path: Path) -> list[Path]:
    """Every other file ``load(path)`` reads or looks for (the corpus cache keys on their state): the SWE-bench
    results files :func:`workbench.labels.find_beside` searches for this run's instance, present or absent."""
    path = Path(path)
    return labels_mod.looked_at(path, _instances(path))


def _stop(status: str | None, calls: int, cost: float | None, agent: dict[str, Any]) -> str | None:
    if not status:
        return None
    key = status.replace("_", "").lower()
    if key == "limitsexceeded":
        step_limit = agent.get("step_limit")
        cost_limit = agent.get("cost_limit")
        if isinstance(step_limit, int) and 0 < step_limit <= calls:
            return "turn-cap"
        if isinstance(cost_limit, int | float) and cost is not None and 0 < cost_limit <= cost:
            return "max-budget"
        return "turn-cap"
    return _STOPS.get(key, "error")


def load(path: Path) -> list[Run]:
    name = str(path)
    try:
        doc = orjson.loads(read_document(path, "mini-swe-agent trajectory", MAX_FILE_BYTES))
    except orjson.JSONDecodeError as exc:
        raise TraceError(name, f"not JSON ({exc}); a trajectory is one JSON document") from exc
    except OSError as exc:
        raise TraceError(name, f"cannot read: {exc.strerror or exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        raise TraceError(name, "not a mini-swe-agent trajectory", field="messages")
    return [_run(path, doc)]


def _run(path: Path, doc: dict[str, Any]) -> Run:
    f = Fields(path)
    info = f.obj(doc.get("info"), None, "info") or {}
    config = f.obj(info.get("config"), None, "info.config") or {}
    agent = config.get("agent") if isinstance(config.get("agent"), dict) else {}
    model_cfg = config.get("model") if isinstance(config.get("model"), dict) else {}
    stats = f.obj(info.get("model_stats"), None, "info.model_stats") or {}
    instance = _str(doc.get("instance_id")) or _file_instance(path)
    t = _Trajectory(f, model_cfg, _format_openings(doc))
    t.note(*LOSSY_ALWAYS)
    for j, m in enumerate(doc["messages"]):
        if not isinstance(m, dict):
            f.bad(None, f"messages[{j}]", f"expected an object, got {type(m).__name__}")
        elif m.get("role") != "exit":
            t.feed(f"messages[{j}]", m)
    turns = t.turns
    mutation.apply(turns, TOOLS)
    t.count_note(t.unmatched, "{n} tool result(s) name a call id no call made: kept as messages only")
    t.count_note(
        sum(1 for x in turns if not x.usage.known),
        "{n} call(s) carry no usage (extra.response.usage missing): usage unknown",
    )
    no_cost = sum(1 for x in turns if x.usage.cost is None)
    if no_cost and no_cost < len(turns):
        t.note(f"{no_cost} call(s) record no cost (a route without usage.cost)")
    api_calls = stats.get("api_calls")
    if isinstance(api_calls, int) and api_calls != len(turns):
        t.note(f"model_stats.api_calls says {api_calls} calls; {len(turns)} model messages were found")

    recorded_cost = f.number(stats.get("instance_cost"), None, "info.model_stats.instance_cost")
    status = _str(info.get("exit_status"))
    outcome = Outcome(
        stop_reason=_stop(status, len(turns), recorded_cost, agent),
        text=_str(info.get("submission")),
        detail=status,
    )
    label, notes = labels_mod.find_beside(path, instance)
    if label is not None:
        outcome.label, outcome.label_source, outcome.score = label.label, label.source, label.score
    t.note(*notes)
    if f.naive_times:
        t.note(NAIVE_TIMES)
    return t.run(
        run_id=instance,
        source=NAME,
        source_file=str(path),
        importer=f"{NAME}/{VERSION}",
        diagnostics=f.diagnostics,
        model=_str(model_cfg.get("model_name")) or next((x.model for x in turns if x.model), None),
        policy=_policy(agent),
        task=next((m.content for m in t.messages if m.role == "user"), None),
        started_at=next((x.started_at for x in turns if x.started_at), None),
        outcome=outcome,
        recorded_cost_usd=recorded_cost,
        metadata=_metadata(instance, info, doc, config),
    )


class _Trajectory(TranscriptBuilder):
    """The messages of one trajectory as they are read: a turn per model message, its actions' results from the
    observations after it, a format-error reply answered as malformed."""

    def __init__(self, f: Fields, model_cfg: dict[str, Any], openings: tuple[str, ...]) -> None:
        super().__init__()
        self.f, self.model_cfg, self.openings = f, model_cfg, openings
        kwargs = model_cfg.get("model_kwargs")
        self.model_kwargs = kwargs if isinstance(kwargs, dict) else {}
        self.pending: list[ToolCall] = []
        self.unmatched = 0

    def feed(self, where: str, m: dict[str, Any]) -> None:
        extra = m.get("extra") if isinstance(m.get("extra"), dict) else {}
        if m.get("role") == "assistant" or m.get("object") == "response":  # a model message
            self._model_message(where, m, extra)
            return
        last = self.turns[-1] if self.turns else None
        if last is not None and last.format_error is None and not last.tool_results:
            said = _format_error(m, self.openings)
            if said is not None:
                # the agent answered the reply as malformed and went on: no call ran, the reply is not an ending
                last.format_error = said
                last.tool_calls = []
                self.pending = []
                self.messages.append(_message(m))
                return
        observation = m.get("role") in ("user", "tool") or m.get("type") == "function_call_output"
        if observation and last is not None and self.pending:
            call_id = _str(m.get("tool_call_id")) or _str(m.get("call_id"))
            match = next((c for c in self.pending if call_id and c.id == call_id), None)
            if match is None and call_id is None:
                match = self.pending[0]
            if match is not None:
                self.pending.remove(match)
                last.tool_results.append(_result(m, match))
            else:
                self.unmatched += 1
        self.messages.append(_message(m))

    def _model_message(self, where: str, m: dict[str, Any], extra: dict[str, Any]) -> None:
        f, kwargs = self.f, self.model_kwargs
        response = extra.get("response") if isinstance(extra.get("response"), dict) else {}
        if m.get("object") == "response":
            response = m
        usage = _usage(response.get("usage"), extra, f, f"{where}.extra.response")
        choices = response.get("choices") if isinstance(response.get("choices"), list) else []
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        calls = _actions(m, extra, len(self.turns), f, where)
        created = response.get("created", response.get("created_at"))
        msg = _message(m)
        provider = _str(response.get("provider"))
        self.turn(
            started_at=f.time(created, None, f"{where}.extra.response.created") if created else None,
            ended_at=f.time(extra.get("timestamp"), None, f"{where}.extra.timestamp"),
            usage=usage,
            finish_reason=_str(first.get("finish_reason")) or _str(response.get("status")),
            text=msg.content,
            tool_calls=calls,
            response_id=_str(response.get("id")),
            model=_str(response.get("model")),
            route=observed(
                provider=provider or _str(kwargs.get("custom_llm_provider")),
                provider_field="extra.response.provider"
                if provider
                else "config.model.model_kwargs.custom_llm_provider",
                base_url=_str(kwargs.get("api_base")) or _str(kwargs.get("base_url")),
                response_id=_str(response.get("id")),
                model=_str(response.get("model")) or _str(self.model_cfg.get("model_name")),
                configured=not provider,
            ),
        )
        msg.tool_calls = list(calls)
        self.messages.append(msg)
        self.pending = list(calls)


def _policy(agent: dict[str, Any]) -> RecordedPolicy:
    step_limit = agent.get("step_limit")
    cost_limit = agent.get("cost_limit")
    wall = agent.get("wall_time_limit_seconds")
    params: dict[str, Any] = {}
    if isinstance(cost_limit, int | float) and cost_limit > 0:
        params["cost_limit_usd"] = float(cost_limit)
    return RecordedPolicy(
        max_turns=step_limit if isinstance(step_limit, int) and step_limit > 0 else None,
        deadline_s=float(wall) if isinstance(wall, int | float) and wall > 0 else None,
        params=params,
    )


def _metadata(
    instance: str, info: dict[str, Any], doc: dict[str, Any], config: dict[str, Any]
) -> dict[str, Any]:
    recorded = {"mini_version": info.get("mini_version"), "trajectory_format": doc.get("trajectory_format")}
    recorded |= {key: config.get(key) for key in ("agent_type", "model_type", "environment_type")}
    return {"instance_id": instance} | {k: v for k, v in recorded.items() if isinstance(v, str)}
