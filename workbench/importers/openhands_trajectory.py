"""OpenHands trajectory arrays (a JSON list of V0 or V1 events: ``save_trajectory_path``, the replay fixtures): one
run, read by the rules of a history in ``output.jsonl``; every diagnostic names the line its event starts on.
docs/importers/openhands.md."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from workbench.importers import openhands, openhands_completions, openhands_v1
from workbench.importers._common import Fields, require_runs
from workbench.importers.contract import NO_ROUTE, derive, inferred
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_NESTING, open_bytes, too_deep
from workbench.trace.schema import Diagnostic, Run

NAME = "openhands"
VERSION = "1"

FACTS = derive(
    openhands.FACTS,
    mutated=inferred(
        "edit observations (V0); V1 events unknown; CmdRunAction shell commands read as no change"
    ),
    route=NO_ROUTE,
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

_MARKERS = (b'"action"', b'"observation"', b'"llm_response_id"', b'"tool_call_id"')


def sniff(path: Path, head: list[bytes]) -> bool:
    if not head or not head[0].lstrip().startswith(b"["):
        return False
    text = b"".join(head)[:65536]
    if b'"kind"' in text and b'"source"' in text:
        return True
    return any(m in text for m in _MARKERS) and b'"source"' in text


def elements(path: Path, diags: list[Diagnostic]) -> list[tuple[int, Any]]:
    """(start line, value) of each element of the top-level array; a bad element ends the reading there with a
    diagnostic at its line (what came before is kept)."""
    name = str(path)
    with open_bytes(path) as fh:  # refuses FIFOs, devices and unreadable files with a TraceError
        try:
            text = fh.read().decode("utf-8", "replace")
        except OSError as exc:
            raise TraceError(name, f"cannot read: {exc.strerror or exc}") from exc
    decoder = json.JSONDecoder()
    ws = re.compile(r"[\s,]*")
    pos = ws.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        diags.append(Diagnostic(file=name, line=1, message="not a JSON array of events"))
        return []
    pos += 1
    line = 1 + text.count("\n", 0, pos)
    out: list[tuple[int, Any]] = []
    while True:
        nxt = ws.match(text, pos).end()  # type: ignore[union-attr]
        line += text.count("\n", pos, nxt)
        pos = nxt
        if pos >= len(text):
            diags.append(
                Diagnostic(file=name, line=line, message="truncated document (the array is not closed)")
            )
            return out
        if text[pos] == "]":
            return out
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            at_end = exc.pos >= len(text.rstrip())
            what = "truncated document (file ends mid-event)" if at_end else f"not JSON ({exc.msg})"
            diags.append(Diagnostic(file=name, line=line + text.count("\n", pos, exc.pos), message=what))
            return out
        except RecursionError:
            diags.append(Diagnostic(file=name, line=line, message="not JSON (nested too deeply)"))
            return out
        if too_deep(text[pos:end], value):
            diags.append(
                Diagnostic(file=name, line=line, message=f"event nested deeper than {MAX_NESTING} levels")
            )
        else:
            out.append((line, value))
        line += text.count("\n", pos, end)
        pos = end


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    events = []
    for line, e in elements(path, f.diagnostics):
        if isinstance(e, dict):
            events.append((line, e))
        else:
            f.bad(line, "", f"an event is an object, got {type(e).__name__}")
    if not events:
        return require_runs(path, [], f.diagnostics, "OpenHands events")
    run_id = path.stem
    if openhands_v1.is_v1([e for _, e in events]):
        completions = openhands_completions.beside(path, run_id)
        f.diagnostics.extend(completions.diagnostics)
        usages = openhands_v1.Usages(completions=dict(completions.by_id))
        built = openhands_v1.build([openhands_v1.Ev(f, line, "", e) for line, e in events], usages)
        lossy = openhands_v1.lossy_of(built, None, bool(f.naive_times))
        run = openhands_v1.to_run(
            built,
            run_id=run_id,
            path=path,
            importer=f"openhands-trajectory {VERSION}",
            lossy=lossy,
            outcome=openhands_v1.outcome(built, None, None),
            llm={},
            f=f,
            metadata={"format": "openhands-v1 trajectory"},
        )
    else:
        # Read as an output.jsonl history; each diagnostic then points at its event's own line.
        lines = [line for line, _ in events]
        before = len(f.diagnostics)
        run = openhands.run_from_line(path, 1, {"instance_id": run_id, "history": [e for _, e in events]}, f)
        for d in f.diagnostics[before:]:
            m = re.match(r"history\[(\d+)\]", d.field or "")
            if m and int(m.group(1)) < len(lines):
                d.line = lines[int(m.group(1))]
                d.field = (d.field or "")[len("history") :]
        run.importer = f"openhands-trajectory {VERSION}"
        run.metadata["format"] = "openhands trajectory"
        run.lossy = [n for n in run.lossy if not n.startswith("no resolved/unresolved label")]
    run.diagnostics = f.diagnostics
    return [run]
