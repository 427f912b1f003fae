"""OpenHands V1 conversation folders: ``base_state.json`` plus ``events/event-<index>-<id>.json``, one run, its
events read by :mod:`workbench.importers.openhands_v1`, usage from the state's stats and the completion logs
inside the folder. docs/importers/openhands.md."""

from __future__ import annotations

import re
from pathlib import Path

from workbench.importers import openhands_completions, openhands_v1
from workbench.importers._common import Fields, read_json_document
from workbench.importers.contract import HASHED, NO_ROUTE, NO_TOOL_USAGE, declare, recorded, unknown
from workbench.trace.errors import TraceError
from workbench.trace.schema import Run

NAME = "openhands"
VERSION = "1"

FACTS = declare(
    mutated=unknown("V1 events do not say whether a tool changed the workspace"),
    new_info=HASHED,
    tool_error=recorded("observation is_error, AgentErrorEvent"),
    tool_timeout=recorded("observation timeout"),
    ending=recorded("FinishAction, execution_status"),
    tool_usage=NO_TOOL_USAGE,
    cache_read=recorded("token_usages cache_read_tokens"),
    cache_write=recorded("token_usages cache_write_tokens"),
    route=NO_ROUTE,
)

CACHEABLE = True  # reads only inside its folder; the cache keys a folder on every entry (docs/importers)

BASE_STATE = "base_state.json"
EVENTS_DIR = "events"
# openhands/sdk/conversation/persistence_const.py EVENT_NAME_RE: the writer pads the index to at least 5 digits.
EVENT_NAME = re.compile(r"^event-(?P<idx>\d+)-(?P<event_id>[^/]+)\.json$")


def is_conversation(path: Path) -> bool:
    return path.is_dir() and (path / BASE_STATE).is_file() and (path / EVENTS_DIR).is_dir()


def sniff(path: Path, head: list[bytes]) -> bool:
    return is_conversation(path)


def load(path: Path) -> list[Run]:
    path = Path(path)
    if not is_conversation(path):
        raise TraceError(
            str(path), f"not an OpenHands conversation folder (needs {BASE_STATE} and {EVENTS_DIR}/)"
        )
    base_file = path / BASE_STATE
    f = Fields(base_file)
    diags = f.diagnostics
    base = read_json_document(base_file, diags)
    if not isinstance(base, dict):
        if base is not None:
            f.bad(1, "", f"{BASE_STATE} is {type(base).__name__}, not an object")
        base = {}
    events: list[openhands_v1.Ev] = []
    named = []
    unnamed = []
    for p in (path / EVENTS_DIR).iterdir():
        m = EVENT_NAME.match(p.name)
        if m:
            named.append((int(m.group("idx")), p))
        elif p.suffix == ".json":
            unnamed.append(p)
    # by index; an event file not named event-<index>-<id>.json is read too, placed after the rest
    files = [p for _, p in sorted(named)] + sorted(unnamed)
    for p in files:
        fe = Fields(p)
        fe.diagnostics = diags  # one list for the run: each diagnostic still names its own file
        try:
            d = read_json_document(p, diags)
        except TraceError as exc:  # not a regular file, or unreadable: reported, the other events still load
            fe.bad(None, "file", str(exc))
            continue
        if isinstance(d, dict):
            events.append(openhands_v1.Ev(fe, 1, "", d))
        elif d is not None:
            fe.bad(1, "", f"an event is an object, got {type(d).__name__}")
    if not events and not base:
        raise TraceError(
            str(path),
            f"nothing readable in this conversation folder (first problem: {diags[0]})"
            if diags
            else "an empty conversation folder",
        )
    agent = f.obj(base.get("agent"), 1, "agent") or {}
    llm = f.obj(agent.get("llm"), 1, "agent.llm") or {}
    stats = f.obj(base.get("stats"), 1, "stats") or {}
    per_llm = f.obj(stats.get("usage_to_metrics"), 1, "stats.usage_to_metrics") or {}
    metrics = [(m, f"stats.usage_to_metrics.{uid}") for uid, m in per_llm.items() if isinstance(m, dict)]
    usages = openhands_v1.metrics_usages(metrics, f, 1)
    completions = openhands_completions.beside(path, path.name)
    diags.extend(completions.diagnostics)
    usages.completions.update(completions.by_id)
    built = openhands_v1.build(events, usages)
    for m, at in metrics:
        if len(metrics) == 1:  # with several LLMs the unordered cost lists cannot be placed
            openhands_v1.apply_costs(built, f.items(m.get("costs"), 1, f"{at}.costs"), f, 1, f"{at}.costs")
    status = base.get("execution_status")
    built.status = built.status or (status if isinstance(status, str) else None)
    max_iter = f.tokens(base.get("max_iterations"), 1, "max_iterations")
    outcome = openhands_v1.outcome(built, None, max_iter)
    naive = any(fe.naive_times for fe in (e.f for e in events))
    lossy = openhands_v1.lossy_of(built, completions.folder if completions.by_id else None, naive)
    lossy.append("no outcome label: a conversation folder records no evaluation (test_result)")
    accumulated = [f.number(m.get("accumulated_cost"), 1, f"{at}.accumulated_cost") for m, at in metrics]
    known = [a for a in accumulated if a is not None]
    run = openhands_v1.to_run(
        built,
        run_id=str(base.get("id")) if isinstance(base.get("id"), str) else path.name,
        path=path,
        importer=f"openhands-conversation {VERSION}",
        lossy=lossy,
        outcome=outcome,
        llm=llm,
        llm_at="agent.llm",
        max_iterations=max_iter,
        f=f,
        line=1,
        metadata={
            "format": "openhands-v1 conversation folder",
            "events": len(files),
            "llms": sorted(per_llm),
        },
        accumulated_cost=sum(known) if known else None,
    )
    run.diagnostics = diags
    return [run]
