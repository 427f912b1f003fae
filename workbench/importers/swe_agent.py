"""SWE-agent ``.traj`` files (0.x and 1.x): one JSON document per instance, each 1.x retry attempt its own run.
Per-call usage is unknown: the run totals go to ``Run.recorded_cost_usd`` and ``metadata['run_totals']``. The shapes
and their mapping: docs/importers/swe-agent.md."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson

from workbench.importers import mutation
from workbench.importers._common import Fields, function_calls, load_document, read_prefix, text_of, words
from workbench.importers._pool import RequestPool
from workbench.importers.contract import HASHED, NO_ROUTE, NO_TOOL_USAGE, declare, inferred, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.schema import Message, Outcome, RecordedPolicy, Run, ToolCall, ToolResult, Turn, Usage

NAME = "swe-agent"
VERSION = "1"

FACTS = declare(
    mutated=inferred(
        "the action: bash commands parsed (workbench.importers.shell); edit/create/insert and str_replace_editor "
        "create/str_replace/insert write; open/goto/search/find and view read; else unknown"
    ),
    new_info=HASHED,
    tool_error=unknown("observations carry no exit status"),
    tool_timeout=unknown("not recorded apart from the observation text"),
    ending=recorded(
        "a requeried step (format, blocklist or bash-syntax error in the next query) is not final"
    ),
    tool_usage=NO_TOOL_USAGE,
    cache_read=unknown("only run totals (tokens_sent, tokens_received)"),
    cache_write=unknown("only run totals"),
    route=NO_ROUTE,
)

# SWE-agent 1.x requeries a reply it cannot run (sweagent/agent/agents.py forward_with_handling): the failed step is
# added to the trajectory, not to the history, and the next step's query ends with the error. The templates' openings
# (sweagent/tools/parsing.py format_error_template, tools.py blocklist_error_template, agents.py
# shell_check_error_template), across versions:
REQUERY_OPENINGS = (
    "Your output was not formatted correctly",
    "Your output could not be parsed",
    "Your bash command contained syntax errors and was NOT executed",
    "Operation '",
)
_BLOCKLIST = re.compile(r"^Operation '.*' is not supported by this environment", re.DOTALL)

# The roles of SWE-agent's tools for the workspace fact (workbench.importers.mutation): ``bash`` runs a shell command,
# ``str_replace_editor`` edits or views; the classic commands are named by their first word.
TOOLS = mutation.Tools(
    shell={"bash": "command"},
    editors={"str_replace_editor": "command"},
    writes=frozenset({"edit", "create", "insert", "append", "edit_file", "apply_patch"}),
    reads=words("open goto scroll_up scroll_down find_file search_dir search_file filemap submit"),
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

_TRAJECTORY = re.compile(rb'"trajectory"\s*:\s*\[')
_STEP_KEYS = re.compile(rb'"(action|observation|thought|response|execution_time)"\s*:')
_HEADER = re.compile(rb'"(history|info|environment|attempts|replay_config)"\s*:')

# exit_status -> the workbench's stop vocabulary; "submitted (exit_cost)" is an autosubmission after the bound.
_EXIT = {
    "submitted": "done",
    "exit_cost": "max-budget",
    "exit_context": "context-length",
    "exit_total_execution_time": "deadline",
    "exit_command_timeout": "tool-timeouts",
    "exit_format": "error",
    "exit_error": "error",
    "exit_api": "error",
    "exit_environment_error": "error",
    "exit_forfeit": "cancelled",
    "early_exit": "cancelled",
}

PER_CALL_USAGE_UNKNOWN = (
    "per-call usage is not recorded: SWE-agent keeps only run totals (info.model_stats), so every call's usage "
    "is unknown and a cost replay of this run cannot be done"
)


def sniff(path: Path, head: list[bytes]) -> bool:
    prefix = read_prefix(path)
    if not prefix.lstrip().startswith(b"{") or b'"trajectory_format"' in prefix:
        return False  # mini-swe-agent's .traj.json carries trajectory_format and no step list
    m = _TRAJECTORY.search(prefix)
    if m is None:
        return False
    return bool(_STEP_KEYS.search(prefix, m.end()) or _HEADER.search(prefix))


def load(path: Path) -> list[Run]:
    path = Path(path)
    doc = load_document(path)
    if not isinstance(doc, dict):
        raise TraceError(
            str(path), f"not a SWE-agent trajectory (a JSON {type(doc).__name__}, not an object)"
        )
    f = Fields(path)
    attempts = [a for a in f.items(doc.get("attempts"), None, "attempts") if isinstance(a, dict)]
    runs: list[Run] = []
    if len(attempts) > 1:
        best = (doc.get("info") or {}).get("best_attempt_idx") if isinstance(doc.get("info"), dict) else None
        for i, attempt in enumerate(attempts):
            run = _run(path, attempt, f, f"attempts[{i}].", f"{path.stem}#a{i}")
            run.metadata["attempt"] = i
            run.metadata["chosen"] = best == i
            runs.append(run)
        total = _stats(doc.get("info"), f, "info.")
        for run in runs:
            run.metadata["instance_model_stats"] = total
            run.lossy.append(
                "a retry loop wrote several attempts: each is a run; info.model_stats at the top level sums "
                "every attempt and the reviewer (kept in metadata['instance_model_stats'])"
            )
    else:
        if "trajectory" not in doc and not attempts:
            raise TraceError(
                str(path), "not a SWE-agent trajectory: no 'trajectory' list", field="trajectory"
            )
        runs.append(
            _run(path, attempts[0] if attempts and "trajectory" not in doc else doc, f, "", path.stem)
        )
    for run in runs:
        run.diagnostics = list(f.diagnostics)
    return runs


def _stats(info: Any, f: Fields, prefix: str) -> dict[str, Any]:
    info = info if isinstance(info, dict) else {}
    ms = f.obj(info.get("model_stats"), None, f"{prefix}model_stats") or {}
    return {
        "instance_cost": f.number(ms.get("instance_cost"), None, f"{prefix}model_stats.instance_cost"),
        "tokens_sent": f.tokens(ms.get("tokens_sent"), None, f"{prefix}model_stats.tokens_sent"),
        "tokens_received": f.tokens(ms.get("tokens_received"), None, f"{prefix}model_stats.tokens_received"),
        "api_calls": f.tokens(ms.get("api_calls"), None, f"{prefix}model_stats.api_calls"),
    }


def _message(raw: Any, f: Fields, field: str) -> Message | None:
    if not isinstance(raw, dict):
        f.bad(None, field, "not a message object")
        return None
    role = raw.get("role")
    if role not in ("system", "user", "assistant", "tool"):
        f.bad(None, f"{field}.role", f"unknown role {role!r}")
        return None
    calls = function_calls(
        raw.get("tool_calls") if isinstance(raw.get("tool_calls"), list) else [],
        lambda j: f.bad(None, f"{field}.tool_calls[{j}]", "not a function call"),
    )
    ids = raw.get("tool_call_ids")
    return Message(
        role=role,
        content=text_of(raw.get("content")),
        tool_calls=calls,
        tool_call_id=ids[0] if isinstance(ids, list) and ids and isinstance(ids[0], str) else None,
    )


def _command(action: str) -> str:
    """The tool a SWE-agent action invokes: its first word (``str_replace_editor``, ``submit``, a shell command)."""
    words = action.strip().split(None, 1)
    return words[0] if words else "action"


def _run(path: Path, data: dict[str, Any], f: Fields, prefix: str, run_id: str) -> Run:
    steps = f.items(data.get("trajectory"), None, f"{prefix}trajectory")
    history_raw = f.items(data.get("history"), None, f"{prefix}history")
    info = f.obj(data.get("info"), None, f"{prefix}info") or {}
    stats = _stats(info, f, f"{prefix}info.")
    history: list[tuple[int, Message, dict[str, Any]]] = []
    for j, raw in enumerate(history_raw):
        m = _message(raw, f, f"{prefix}history[{j}]")
        if m is not None:
            history.append((j, m, raw))
    t = _Steps(f, run_id, history, sum(1 for st in steps if isinstance(st, dict)))
    t.note(PER_CALL_USAGE_UNKNOWN, "no timestamps: calls are untimed (execution_time kept as tool duration)")
    for i, step in enumerate(steps):
        if isinstance(step, dict):
            t.step(i, f"{prefix}trajectory[{i}]", step)
        else:
            f.bad(None, f"{prefix}trajectory[{i}]", "not a step object")
    turns = t.turns
    _infer_mutations(turns)
    if t.queried < len(turns):
        t.note(
            "requests rebuilt from the history (no per-step query): the history processors' trimming of old "
            "observations is not applied"
            if t.answers
            else "requests not recorded (no per-step query and no history)"
        )
    t.count_note(
        len(turns) - t.real_ids,
        "{n} action(s) are text commands with no recorded tool call: each is a tool call named by the command's "
        "first word, with a made-up id (the step index)",
    )
    api_calls = stats["api_calls"]
    if api_calls is not None and api_calls > len(turns):
        t.note(
            f"{api_calls} model calls were made but {len(turns)} steps recorded: requeries after format errors "
            "and retries are not in the trajectory (their tokens are only in the run totals)"
        )
    outcome = _outcome(info, f, prefix)
    task = next((m.content for _, m, raw in history if m.role == "user" and not raw.get("is_demo")), None)
    return t.run(
        run_id=run_id,
        **origin(NAME, VERSION, path),
        model=_model(data),
        policy=_limits(data),
        task=task,
        recorded_cost_usd=stats["instance_cost"],
        outcome=outcome,
        metadata={
            "run_totals": {
                "prompt_tokens": stats["tokens_sent"],
                "completion_tokens": stats["tokens_received"],
                "calls": api_calls,
                "cost_usd": stats["instance_cost"],
            },
            "environment": data.get("environment") if isinstance(data.get("environment"), str) else None,
            "swe_agent_version": info.get("swe_agent_version") if isinstance(info, dict) else None,
        },
    )


class _Steps(TranscriptBuilder):
    """The trajectory's steps as they are read, a turn per step: its request from the step's query (1.x) or
    rebuilt from the history (0.x), its action a tool call, its observation the result; a requeried step's reply
    ran nothing."""

    def __init__(
        self, f: Fields, run_id: str, history: list[tuple[int, Message, dict[str, Any]]], steps: int
    ) -> None:
        super().__init__()
        self.f, self.run_id, self.history = f, run_id, history
        self.pool = RequestPool()
        self.messages = self.pool.messages
        by_id = {id(raw): m for _, m, raw in history}
        self.by_raw = lambda raw: by_id.get(id(raw))  # the history's Message for one of its raw records
        self.real_ids = self.queried = 0
        # the history's assistant messages of the main agent, in order: the transcript each step's request grew
        # from; they stand for the steps one to one only when they are as many (requeries are not in it)
        self.answers = [
            k for k, (_, m, raw) in enumerate(history) if m.role == "assistant" and raw.get("agent") != "demo"
        ]
        self.aligned = len(self.answers) == steps

    def step(self, i: int, field: str, step: dict[str, Any]) -> None:
        f, turns, pool = self.f, self.turns, self.pool
        action = f.text(step.get("action"), None, f"{field}.action") or ""
        observation = f.text(step.get("observation"), None, f"{field}.observation")
        response = f.text(step.get("response"), None, f"{field}.response")
        thought = f.text(step.get("thought"), None, f"{field}.thought")
        duration = f.number(step.get("execution_time"), None, f"{field}.execution_time")
        query = step.get("query")
        sent = None
        answer_raw = None
        if isinstance(query, list) and query and any(isinstance(q, dict) and q for q in query):
            said = _requery(query[-1])
            if said is not None and turns and turns[-1].format_error is None:
                # the previous reply was requeried: it ran nothing and is no ending
                turns[-1].format_error = said
                turns[-1].tool_calls, turns[-1].tool_results = [], []
            qfield = f"{field}.query"
            sent = pool.request_raw(
                list(enumerate(query)), lambda jq, qfield=qfield: _message(jq[1], f, f"{qfield}[{jq[0]}]")
            )
            self.queried += 1
        elif len(turns) < len(self.answers):
            # 0.x records no per-step request: rebuild it from the history before this step's answer
            upto = self.answers[len(turns)]
            sent = pool.request_raw([raw for _, _, raw in self.history[:upto]], self.by_raw)
            answer_raw = self.history[upto][2]
        text = response if response is not None else thought
        pool.answer(Message(role="assistant", content=text), answer_raw)
        recorded = self.history[self.answers[len(turns)]][1].tool_calls if self.aligned else []
        if len(recorded) == 1:
            # function calling (1.x): the history's assistant message holds the call as the model emitted it
            calls = list(recorded)
            self.real_ids += 1
        else:
            calls = (
                [ToolCall(id=f"{self.run_id}:{i}", name=_command(action), arguments=action)]
                if action.strip()
                else []
            )
        results = (
            [ToolResult.of(observation, call_id=calls[0].id, duration_s=duration)]
            if calls and observation is not None
            else []
        )
        self.turn(text=text, tool_calls=calls, tool_results=results, sent=sent, usage=Usage())


def _model_config(data: dict[str, Any]) -> dict[str, Any]:
    """``agent.model`` of the replay config (1.x, a JSON string); {} when not recorded."""
    cfg = data.get("replay_config")
    if isinstance(cfg, str):
        try:
            cfg = orjson.loads(cfg)
        except ValueError:
            return {}
    if isinstance(cfg, dict):
        agent = cfg.get("agent") if isinstance(cfg.get("agent"), dict) else {}
        return agent.get("model") if isinstance(agent.get("model"), dict) else {}
    return {}


def _model(data: dict[str, Any]) -> str | None:
    """The model name, where the replay config (1.x, a JSON string) names it."""
    name = _model_config(data).get("name")
    return name if isinstance(name, str) else None


def _limits(data: dict[str, Any]) -> RecordedPolicy | None:
    """The per-instance limits the replay config records (``per_instance_cost_limit``, ``per_instance_call_limit``,
    ``total_cost_limit``), for the ``swe-agent`` rule set; None when it records none."""
    model = _model_config(data)
    params = {
        k: float(v) if k != "per_instance_call_limit" else int(v)
        for k in ("per_instance_cost_limit", "per_instance_call_limit", "total_cost_limit")
        if isinstance(v := model.get(k), int | float) and not isinstance(v, bool) and v >= 0
    }
    return RecordedPolicy(rules="swe-agent", params=params) if params else None


def _outcome(info: dict[str, Any], f: Fields, prefix: str) -> Outcome:
    status = f.text(info.get("exit_status"), None, f"{prefix}info.exit_status")
    submission = f.text(info.get("submission"), None, f"{prefix}info.submission")
    if status is None:
        return Outcome(detail="no exit_status recorded", text=submission)
    inner = re.fullmatch(r"submitted \((\w+)\)", status)
    key = inner.group(1) if inner else status
    stop = _EXIT.get(key, status)
    detail = f"exit_status {status}" + (": a patch was autosubmitted" if inner else "")
    return Outcome(stop_reason=stop, verdict=status, text=submission, detail=detail)


def _requery(message: object) -> str | None:
    """The first line of a query's closing message when it is SWE-agent's requery of a reply it could not run."""
    if not isinstance(message, dict) or message.get("role") not in ("user", None):
        return None
    text = (text_of(message.get("content")) or "").lstrip()
    if text.startswith(REQUERY_OPENINGS[:3]) or _BLOCKLIST.match(text):
        return text.splitlines()[0][:200] if text else None
    return None


def _infer_mutations(turns: list[Turn]) -> None:
    """The workspace fact from the calls: 1.x function calls by their tools' roles; a classic text action (a call
    named by its first word) by its command word, else its text read as a shell command."""
    for t in turns:
        if not t.tool_calls:
            continue
        effects = []
        for c in t.tool_calls:
            if c.name in TOOLS.shell or c.name in TOOLS.editors:
                effects.append(mutation.call_effect(c, TOOLS))
                continue
            if c.name in TOOLS.writes:
                effects.append((True, f"write command {c.name}"))
            elif c.name in TOOLS.reads:
                effects.append((False, f"read-only command {c.name}"))
            elif c.name == "str_replace_editor" or c.arguments.startswith("str_replace_editor "):
                sub = c.arguments.split()[1] if len(c.arguments.split()) > 1 else ""
                known = sub in mutation.EDITOR_WRITES or sub in mutation.EDITOR_READS
                effects.append(
                    (sub in mutation.EDITOR_WRITES if known else None, f"str_replace_editor {sub}")
                )
            else:
                effects.append(mutation.call_effect(c.model_copy(update={"name": "bash"}), _RAW))
        hit = next((e for e in effects if e[0] is True), None) or next(
            (e for e in effects if e[0] is None), None
        )
        t.mutated, t.mutated_rule = hit if hit is not None else (False, effects[0][1])


_RAW = mutation.Tools(raw_shell=frozenset({"bash"}))
