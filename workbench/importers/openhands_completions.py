"""OpenHands completion logs, the one JSON file per model call ``log_completions`` writes (V0
``openhands/llm/llm.py``; V1 ``openhands/sdk/llm/utils/telemetry.py`` ``log_llm_call``): joined by response id to
the run beside them, else a run of one call. Shapes, places and the join: docs/importers/openhands.md."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from workbench.importers import openhands_v1, read_head
from workbench.importers._common import (
    Fields,
    parse_head,
    read_json_document,
    read_prefix,
    require_runs,
    skeleton,
    words,
)
from workbench.importers.contract import FINAL_WITHOUT_CALLS, NO_ROUTE, declare, recorded, unknown
from workbench.trace.errors import TraceError
from workbench.trace.schema import Diagnostic, Message, Outcome, Run, Turn

NAME = "openhands"
VERSION = "1"
CACHEABLE = False  # reads files beside its own, named by dependencies(path) (workbench.scale.cache)

FACTS = declare(
    mutated=unknown("a completion log holds requests and responses, not tool effects"),
    new_info=recorded("tool messages of the next request, hashed"),
    tool_error=unknown("not recorded in a completion log"),
    tool_timeout=unknown("not recorded in a completion log"),
    ending=FINAL_WITHOUT_CALLS,
    tool_usage=unknown("not recorded in a completion log"),
    cache_read=recorded("response.usage prompt_tokens_details.cached_tokens"),
    cache_write=recorded("response.usage cache_creation_input_tokens where reported"),
    route=NO_ROUTE,
)


# The keys a completion log's top level carries, across versions (V0, the SDK before and after January 2026, an
# error log): docs/importers/openhands.md, the completion log row.
REQUEST_KEYS = frozenset({"messages", "input"})
MARK_KEYS = words("kwargs context_window llm_path latency_sec usage_summary fncall_messages fncall_response")
LOG_KEYS = (
    REQUEST_KEYS | MARK_KEYS | {"tools", "response", "raw_response", "args", "cost", "timestamp", "error"}
)
# A chat message's keys; from `id` on, those of Responses API input items (the SDK's `input`): messages, function
# calls and their outputs, reasoning.
CHAT_MESSAGE_KEYS = words("""
    role content name tool_calls tool_call_id function_call reasoning_content thinking_blocks refusal cache_control
    provider_specific_fields type id status call_id arguments output summary encrypted_content
""")
# A run's id in an output line: `instance_id`; 2024's outputs `question_id` or `id`.
ID_KEYS = ("instance_id", "question_id", "id")
_FIRST_KEY = re.compile(rb'\{\s*"([^"\\]*)"\s*:')  # a document's first key, where it is plainly written
_OUTPUT_KEYS = frozenset({"metadata", "metrics", "instruction", "test_result", "error"})


@dataclass
class Found:
    """The completion logs found for one run, by response id."""

    folder: Path | None = None
    by_id: dict[str, openhands_v1.Completion] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def sniff(path: Path, head: list[bytes]) -> bool:
    return is_log(read_prefix(path))


def is_log(prefix: bytes) -> bool:
    """A completion log by its structure in its first 64 KiB (``prefix``), whatever its key order or folder: a
    top-level object whose keys are all a completion log's, with the request (``messages`` or ``input``) and one key
    only such a log writes; or, when the head ends inside a long request, a request of bare chat messages."""
    first = _FIRST_KEY.match(prefix.lstrip())
    # a first key no such log writes leaves one way in, two keys only such a log writes: a head that does not hold
    # two of them anywhere (another format's document) is answered without its skeleton (40% of detection)
    if (
        first is not None
        and first.group(1).decode("utf-8", "replace") not in LOG_KEYS
        and sum(b'"%s"' % k.encode() in prefix for k in MARK_KEYS) < 2
    ):
        return False
    return by_skeleton(prefix)


def by_skeleton(prefix: bytes) -> bool:
    """``is_log`` read from the head's skeleton alone: the rule itself (``is_log`` answers alike, sooner)."""
    sk = skeleton(prefix)
    if sk is None or sk.top != b"{":
        return False
    top = sk.at()
    if not top & REQUEST_KEYS:
        return False
    if len(top & MARK_KEYS) >= 2:  # two keys only such a log writes: a later version's extras do not matter
        return True
    if not top <= LOG_KEYS:
        return False
    if top & MARK_KEYS:
        return True
    items = sk.at("messages") | sk.at("input")
    return sk.cut_in in REQUEST_KEYS and "role" in items and items <= CHAT_MESSAGE_KEYS


def candidate_folders(path: Path, run_id: str) -> list[Path]:
    """Where a run's completion logs sit: ``llm_completions/<run id>/`` beside an output file; inside a
    conversation folder, ``llm_completions/``, ``completions/`` or ``logs/completions/``."""
    if path.is_dir():
        return [path / "llm_completions", path / "completions", path / "logs" / "completions"]
    return [path.parent / "llm_completions" / run_id]


def beside(path: Path, run_id: str) -> Found:
    for folder in candidate_folders(path, run_id):
        if folder.is_dir():
            return read_folder(folder)
    return Found()


def read_folder(folder: Path) -> Found:
    found = Found(folder=folder)
    for p in sorted(folder.glob("*.json")):
        f = Fields(p)
        try:
            record = read_json_document(p, f.diagnostics)
        except TraceError as exc:  # not a regular file, or unreadable: reported, the other logs still join
            f.bad(None, "file", str(exc))
            record = None
        if isinstance(record, dict):
            rid = openhands_v1.completion_response_id(record)
            if rid is None:
                if "error" not in record:  # a failed call's log (``-error.json``) has no response: not a call
                    f.bad(1, "response.id", "completion log without a response id: not joined")
            else:
                found.by_id.setdefault(rid, openhands_v1.read_completion(record, f, 1))
        elif record is not None:
            f.bad(1, "", f"a completion log is an object, got {type(record).__name__}")
        found.diagnostics.extend(f.diagnostics)
    return found


def looks_like_output(head: list[bytes]) -> bool:
    """Is this the head of an OpenHands output file (evaluation lines or resolver output)? Kept here, below the
    output importer, so both can ask it without importing each other."""
    for o in parse_head(head):
        if "instance_id" in o and ("history" in o or "metadata" in o):
            return True
        # 2024 outputs name the run `question_id` or `id` (a string or an integer) beside its event history
        if (
            any(k in o for k in ID_KEYS[1:])
            and isinstance(o.get("history"), list)
            and _OUTPUT_KEYS & o.keys()
        ):
            return True
        if isinstance(o.get("issue"), dict) and "history" in o:  # resolver output
            return True
    return False


def _owner(path: Path) -> Path | None:
    """The run this log belongs to, when it sits beside one: an OpenHands output file two folders up
    (``llm_completions/<instance>/x.json``) or a conversation folder (``<conv>/llm_completions/x.json``)."""
    for up in path.parents[:4]:
        if (up / "base_state.json").is_file():
            return up
    folder = path.parent.parent
    if folder.name == "llm_completions":
        for candidate in sorted(folder.parent.glob("*.jsonl")):
            try:
                if looks_like_output(read_head(candidate)):
                    return candidate
            except (OSError, TraceError):
                continue
    return None


def dependencies(path: Path) -> list[Path]:
    """The other files ``load(path)`` looks at to know whether a run sits beside this log (:func:`_owner`;
    docs/importers/README.md, "What each importer reads, for the corpus cache")."""
    path = Path(path)
    deps = [up / "base_state.json" for up in path.parents[:4]]
    folder = path.parent.parent
    if folder.name == "llm_completions":
        deps.extend(sorted(folder.parent.glob("*.jsonl")))
    return deps


def load(path: Path) -> list[Run]:
    path = Path(path)
    if _owner(path) is not None:
        return []  # joined to the calls of the run beside it
    f = Fields(path)
    record = read_json_document(path, f.diagnostics)
    if not isinstance(record, dict):
        return require_runs(path, [], f.diagnostics, "completion log")
    resp = record.get("response") if isinstance(record.get("response"), dict) else None
    if resp is None:
        f.bad(1, "response", "completion log without a response (a failed call): no model call to count")
        return require_runs(path, [], f.diagnostics, "completion log")
    log = openhands_v1.read_completion(record, f, 1)
    when = f.time(record.get("timestamp"), 1, "timestamp")
    choices = resp.get("choices") if isinstance(resp.get("choices"), list) else []
    choice = choices[0] if choices and isinstance(choices[0], dict) else {}
    msg = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    text = msg.get("content") if isinstance(msg.get("content"), str) else None
    turn = Turn(
        index=0,
        ended_at=when,
        started_at=when - timedelta(seconds=log.latency) if when and log.latency is not None else None,
        usage=log.usage.model_copy(update={"cost": log.cost}),
        text=text,
        response_id=openhands_v1.completion_response_id(record),
        model=log.model,
        sent=None,
    )
    run = Run(
        run_id=f"{path.parent.name}/{path.stem}",
        source=NAME,
        source_file=str(path),
        importer=f"openhands-completions {VERSION}",
        lossy=[
            "a single completion log with no run beside it: one call, its request not rebuilt as messages"
        ],
        model=log.model,
        messages=[Message(role="assistant", content=text)],
        turns=[turn],
        outcome=Outcome(stop_reason=None, detail="one logged call"),
        metadata={"format": "openhands completion log"},
        diagnostics=f.diagnostics,
    )
    return [run]
