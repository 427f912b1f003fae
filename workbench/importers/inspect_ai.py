"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json``, one run per sample and epoch. The shapes and their
mapping: docs/importers/inspect-ai.md."""

from __future__ import annotations

import io
import re
import struct
import zipfile
import zlib
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import orjson
import zstandard

from workbench.importers._common import Fields, dumps_args, load_document, read_prefix
from workbench.importers._pool import RequestPool
from workbench.importers.contract import HASHED, NO_TOOL_USAGE, declare, recorded, unknown
from workbench.importers.transcript import TranscriptBuilder, origin
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_DOCUMENT_BYTES, MAX_INFLATED_BYTES, open_bytes
from workbench.trace.route import stamp
from workbench.trace.schema import Message, Outcome, RecordedPolicy, Run, ToolCall, Turn, Usage

NAME = "inspect-ai"
VERSION = "1"

FACTS = declare(
    mutated=unknown("tool events do not say whether the workspace changed"),
    new_info=HASHED,
    tool_error=recorded("tool event error"),
    tool_timeout=recorded("tool event error type timeout"),
    ending=recorded("a model output without tool calls is final"),
    tool_usage=NO_TOOL_USAGE,
    cache_read=recorded("input_tokens_cache_read"),
    cache_write=recorded("input_tokens_cache_write"),
    route=recorded(
        "eval.model's provider (Inspect's own provider/model) and eval.model_base_url; beside a base URL no "
        "provider matches, the served model's vendor, inferred (workbench.trace.route)"
    ),
)

CACHEABLE = True  # reads only its own file: the corpus cache may keep its answer (workbench.scale.cache)

_JSON_LOG = re.compile(rb'^\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:\s*"')
_ZIP_MAGIC = b"PK\x03\x04"
MAX_MEMBER_BYTES = MAX_DOCUMENT_BYTES
"""A zip member larger than this is not inflated, by its declared size or by what it inflates to (read in a bounded
call, never whole): a guard against zip bombs; real samples are far smaller. Members together inflate to at most
``MAX_INFLATED_BYTES`` (workbench.trace.limits); past it the rest are not inflated, each said."""

# Inspect's letter grades (inspect_ai.scorer CORRECT/INCORRECT/PARTIAL/NOANSWER) and value_to_float's numbers
GRADES = {"C": ("correct", 1.0), "I": ("incorrect", 0.0), "P": ("partial", 0.5), "N": ("noanswer", 0.0)}
LIMIT_STOPS = {
    "token": "budget",
    "cost": "max-budget",
    "message": "turn-cap",
    "turn": "turn-cap",
    "time": "deadline",
    "working": "deadline",
    "context": "context-length",
    "operator": "cancelled",
    "custom": "cancelled",
}
SCORER_SPANS = frozenset({"scorer", "scorers"})


def sniff(path: Path, head: list[bytes]) -> bool:
    prefix = read_prefix(path, 4096)
    if prefix.startswith(_ZIP_MAGIC):
        try:
            # the descriptor checked, not the path again
            with open_bytes(path) as fh, zipfile.ZipFile(fh) as z:
                names = set(z.namelist())
        except (zipfile.BadZipFile, OSError, ValueError, TraceError):
            return False
        return "header.json" in names or "_journal/start.json" in names
    return bool(_JSON_LOG.match(prefix)) and b'"eval"' in read_prefix(path)


def _routes(turns: list[Turn], ev: dict[str, Any]) -> None:
    """Each call's route: Inspect names its model ``<provider>/<model>``, the provider being the model API it
    called (``openai``, ``anthropic``, ``openrouter``, ``vllm`` …), and records ``model_base_url`` when set."""
    name = ev.get("model")
    provider = name.split("/", 1)[0] if isinstance(name, str) and "/" in name else None
    base = ev.get("model_base_url")
    stamp(
        turns,
        provider=provider,
        provider_field="eval.model (Inspect's provider/model)",
        base_url=base if isinstance(base, str) else None,
        configured=True,
    )


def load(path: Path) -> list[Run]:
    path = Path(path)
    f = Fields(path)
    if read_prefix(path, 4).startswith(_ZIP_MAGIC):
        header, samples = _read_zip(path, f)
    else:
        doc = load_document(path)
        if not isinstance(doc, dict):
            raise TraceError(str(path), f"not an Inspect log (a JSON {type(doc).__name__})")
        header = doc
        samples = [(f"samples[{i}]", s) for i, s in enumerate(f.items(doc.get("samples"), None, "samples"))]
    ev = f.obj(header.get("eval"), None, "eval") or {}
    runs = []
    for where, sample in samples:
        if not isinstance(sample, dict):
            f.bad(None, where, "not a sample object")
            continue
        runs.append(_sample_run(path, header, ev, sample, where, f))
    if not runs:
        status = header.get("status")
        why = "no samples in this log" + (f" (status {status!r})" if isinstance(status, str) else "")
        if f.diagnostics:
            why += f"; first problem: {f.diagnostics[0]}"
        raise TraceError(str(path), why)

    # diagnostics raised outside any sample (header fields) are said on every run
    def within(d: Any, w: str) -> bool:
        return bool(d.field) and (d.field == w or d.field.startswith(w + "."))

    shared = [d for d in f.diagnostics if not any(within(d, w) for w, _ in samples)]
    for r in runs:
        r.diagnostics = [d for d in f.diagnostics if within(d, r.metadata["where"])] + shared
    return runs


# What reading a member may raise: a bad archive or stream, or not JSON (orjson's error is a ValueError).
_UNREADABLE = (zipfile.BadZipFile, zstandard.ZstdError, OSError, EOFError, ValueError, NotImplementedError)


def _read_zip(path: Path, f: Fields) -> tuple[dict[str, Any], list[tuple[str, Any]]]:
    fh = open_bytes(path)
    try:
        z = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError) as exc:
        fh.close()
        raise TraceError(str(path), f"not a readable .eval zip: {exc}") from None
    inflated = 0
    with fh, z:
        infos = {i.filename: i for i in z.infolist()}

        def member(name: str) -> Any:
            nonlocal inflated
            info = infos[name]
            if info.file_size > MAX_MEMBER_BYTES:
                f.bad(
                    None,
                    name,
                    f"a {info.file_size:,}-byte member is not inflated (limit {MAX_MEMBER_BYTES:,})",
                )
                return None
            if inflated + info.file_size > MAX_INFLATED_BYTES:
                f.bad(None, name, f"not inflated: the archive's members passed {MAX_INFLATED_BYTES:,} bytes")
                return None
            try:
                data = _inflate(z, info)
                inflated += len(data)
                return orjson.loads(data)
            except _UNREADABLE as exc:
                f.bad(None, name, f"unreadable member: {exc}")
                return None

        # the first of the two that reads as an object (the second is not read when the first does)
        names = [n for n in ("header.json", "_journal/start.json") if n in infos]
        header: dict[str, Any] = next((got for n in names if isinstance(got := member(n), dict)), {})
        if not header:
            raise TraceError(str(path), "an .eval zip with no readable header.json or _journal/start.json")
        names = sorted(n for n in infos if n.startswith("samples/") and n.endswith(".json"))
        samples = [(n, member(n)) for n in names]
    return header, [(n, s) for n, s in samples if s is not None]


ZIP_ZSTANDARD = 93
"""The zip method number of Zstandard (APPNOTE 4.4.5), which Inspect writes since April 2026."""
_LOCAL_HEADER = struct.Struct("<4s5H3L2H")


def _inflate(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes. Zstandard members (which ``zipfile`` reads only from Python 3.14) are read raw from the
    archive and decompressed here, across every frame Inspect wrote, with their CRC checked."""
    if info.compress_type != ZIP_ZSTANDARD or getattr(zipfile, "ZIP_ZSTANDARD", None) == ZIP_ZSTANDARD:
        # one bounded read: a member whose data inflates past its declared size (a lying header) is refused
        # after at most one byte more than it declared, never inflated whole
        with z.open(info) as member:
            data = member.read(info.file_size + 1)
        if len(data) != info.file_size:
            raise zipfile.BadZipFile(
                f"{info.filename}: inflates to more than its declared {info.file_size:,} bytes"
            )
        return data
    fp = z.fp
    if fp is None:
        raise ValueError("the archive is closed")
    fp.seek(info.header_offset)
    head = fp.read(_LOCAL_HEADER.size)
    if len(head) != _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
        raise zipfile.BadZipFile(f"bad local header for {info.filename}")
    fields = _LOCAL_HEADER.unpack(head)
    fp.seek(fields[-2] + fields[-1], 1)  # the name and extra field
    raw = fp.read(info.compress_size)
    reader = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw), read_across_frames=True)
    data = reader.read(info.file_size + 1)  # bounded: at most one byte past the declared size is inflated
    if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
        raise zipfile.BadZipFile(f"{info.filename}: size or CRC does not match after Zstandard decompression")
    return data


def _text(content: Any, attachments: dict[str, Any]) -> str | None:
    if isinstance(content, str):
        return _attached(content, attachments)
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(_attached(p, attachments))
            elif isinstance(p, dict):
                if p.get("type") == "text" and isinstance(p.get("text"), str):
                    parts.append(_attached(p["text"], attachments))
                elif p.get("type") in ("image", "audio", "video", "document"):
                    parts.append(f"[{p['type']}]")
        return "\n".join(parts)
    return None


def _reasoning(content: Any, attachments: dict[str, Any]) -> str | None:
    if not isinstance(content, list):
        return None
    parts = [
        _attached(p["reasoning"], attachments)
        for p in content
        if isinstance(p, dict) and p.get("type") == "reasoning" and isinstance(p.get("reasoning"), str)
    ]
    return "\n".join(parts) or None


def _attached(s: str, attachments: dict[str, Any]) -> str:
    """Inspect stores long strings once, as ``attachment://<hash>`` references into the sample's attachments."""
    if s.startswith("attachment://"):
        got = attachments.get(s[len("attachment://") :])
        return got if isinstance(got, str) else s
    return s


def _calls(raw: Any) -> list[ToolCall]:
    return [
        ToolCall(
            id=tc.get("id") if isinstance(tc.get("id"), str) else None,
            name=tc["function"],
            arguments=dumps_args(tc.get("arguments", {})),
        )
        for tc in (raw if isinstance(raw, list) else [])
        if isinstance(tc, dict) and isinstance(tc.get("function"), str)
    ]


def _message(raw: Any, attachments: dict[str, Any]) -> Message | None:
    if not isinstance(raw, dict) or raw.get("role") not in ("system", "user", "assistant", "tool"):
        return None
    return Message(
        role=raw["role"],
        content=_text(raw.get("content"), attachments),
        tool_calls=_calls(raw.get("tool_calls")) if raw["role"] == "assistant" else [],
        tool_call_id=raw.get("tool_call_id") if isinstance(raw.get("tool_call_id"), str) else None,
        name=raw.get("function") if isinstance(raw.get("function"), str) else None,
        reasoning=_reasoning(raw.get("content"), attachments),
    )


def _flat(events: list[Any], nested: list[int]) -> list[dict[str, Any]]:
    """Events in order, with those nested in subtask and tool events (older logs) inlined after their parent."""
    out: list[dict[str, Any]] = []
    for e in events:
        if not isinstance(e, dict):
            continue
        out.append(e)
        inner = e.get("events")
        if isinstance(inner, list) and inner:
            before = len(out)
            out.extend(_flat(inner, nested))
            nested[0] += sum(1 for x in out[before:] if x.get("event") == "model")
    return out


def _usage(u: dict[str, Any], f: Fields, where: str, ambiguous: list[int]) -> Usage:
    inp = f.tokens(u.get("input_tokens"), None, f"{where}.input_tokens")
    out = f.tokens(u.get("output_tokens"), None, f"{where}.output_tokens")
    total = f.tokens(u.get("total_tokens"), None, f"{where}.total_tokens")
    cr = f.tokens(u.get("input_tokens_cache_read"), None, f"{where}.input_tokens_cache_read")
    cw = f.tokens(u.get("input_tokens_cache_write"), None, f"{where}.input_tokens_cache_write")
    rs = f.tokens(u.get("reasoning_tokens"), None, f"{where}.reasoning_tokens")
    cost = f.number(u.get("total_cost"), None, f"{where}.total_cost")
    if inp is None and out is None:
        return Usage(cost=cost)
    i, o, c, w, r = inp or 0, out or 0, cr or 0, cw or 0, rs or 0
    # Inspect's providers have reported input_tokens both ways: fresh input only (Anthropic; OpenAI and Google
    # since 2026) or the whole prompt (OpenAI and Google before), and reasoning inside output_tokens or beside it.
    # total_tokens tells which: the first reading whose parts add up to it is taken.
    readings = [(i + c + w, o), (i + c + w, o + r), (i, o), (i, o + r)]
    if c + w == 0 and (not total or total == i + o):
        prompt, completion = i, o
    else:
        prompt, completion = next(((p, q) for p, q in readings if total and p + q == total), (None, None))
        if prompt is None:
            prompt, completion = i + c + w, o
            ambiguous[0] += 1
    return Usage(
        prompt=prompt if inp is not None else None,
        cached=cr,
        cache_write=cw,
        completion=completion if out is not None else None,
        reasoning=rs,
        cost=cost,
    )


def _scorer_spans(events: list[dict[str, Any]]) -> set[str]:
    parents: dict[str, str | None] = {}
    kinds: dict[str, str | None] = {}
    for e in events:
        if e.get("event") == "span_begin" and isinstance(e.get("id"), str):
            parents[e["id"]] = e.get("parent_id") if isinstance(e.get("parent_id"), str) else None
            kinds[e["id"]] = e.get("type") if isinstance(e.get("type"), str) else None
    out: set[str] = set()
    for sid in parents:
        cur: str | None = sid
        seen: set[str] = set()
        while cur is not None and cur not in seen:
            seen.add(cur)
            if kinds.get(cur) in SCORER_SPANS:
                out.add(sid)
                break
            cur = parents.get(cur)
    return out


def _sample_run(
    path: Path, header: dict[str, Any], ev: dict[str, Any], sample: dict[str, Any], where: str, f: Fields
) -> Run:
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    raw_events = sample.get("events")
    transcript = sample.get("transcript")
    # 0.3.x (August-October 2024): transcript.events/content
    if not raw_events and isinstance(transcript, dict):
        raw_events = transcript.get("events")
        if isinstance(transcript.get("content"), dict):
            attachments = {**transcript["content"], **attachments}
    nested = [0]
    events = _flat(f.items(raw_events, None, f"{where}.events"), nested)
    pooled = sample.get("events_data") if isinstance(sample.get("events_data"), dict) else {}
    s = _Sample(f, attachments, pooled.get("messages") if isinstance(pooled.get("messages"), list) else [])
    scoring = _scorer_spans(events)
    for k, e in enumerate(events):
        kind = e.get("event")
        if kind == "model":
            s.model(f"{where}.events[{k}]", e, scoring)
        elif kind == "tool":
            s.tool(f"{where}.events[{k}]", e)
    s.say_what_is_lost(bool(events), nested[0])
    sid = sample.get("id")
    epoch = sample.get("epoch") if isinstance(sample.get("epoch"), int) else 1
    task = ev.get("task") if isinstance(ev.get("task"), str) else "task"
    eval_id = ev.get("eval_id") or ev.get("run_id") or ""
    task_text = _task(sample.get("input"), attachments, f, where)
    _routes(s.turns, ev)
    return s.run(
        run_id=f"{task}/{str(eval_id)[:12]}/{sid}/e{epoch}",
        **origin(NAME, VERSION, path),
        model=(ev.get("model") if isinstance(ev.get("model"), str) else None)
        or (s.models.most_common(1)[0][0] if s.models else None),
        policy=_policy(ev, sample, f),
        task=task_text,
        started_at=f.time(sample.get("started_at"), None, f"{where}.started_at")
        or (s.turns[0].started_at if s.turns else None),
        outcome=_outcome(sample, s.turns, f, where),
        metadata={
            "where": where,
            "task": task,
            "eval_id": eval_id if isinstance(eval_id, str) else None,
            "sample_id": sid if isinstance(sid, str | int) else None,
            "epoch": epoch,
            "status": header.get("status") if isinstance(header.get("status"), str) else None,
            "scores": f.plain(sample.get("scores"), None, f"{where}.scores"),
            "model_usage": f.plain(sample.get("model_usage"), None, f"{where}.model_usage"),
        },
    )


def _task(inp: Any, attachments: dict[str, Any], f: Fields, where: str) -> str | None:
    """The sample's input as text: a string, or the first user message of a list."""
    if isinstance(inp, str):
        return _attached(inp, attachments)
    return next(
        (
            m.content
            for raw in f.items(inp, None, f"{where}.input")
            if (m := _message(raw, attachments)) and m.role == "user"
        ),
        None,
    )


class _Sample(TranscriptBuilder):
    """One sample's events as they are read: a turn per ``model`` event, results from ``tool`` events. The
    requests are pooled (:class:`~workbench.importers._pool.RequestPool`): each resends the whole transcript."""

    def __init__(self, f: Fields, attachments: dict[str, Any], pool_msgs: list[Any]) -> None:
        super().__init__()
        self.f, self.attachments, self.pool_msgs = f, attachments, pool_msgs
        self.pool = RequestPool()
        self.messages = self.pool.messages
        self.ambiguous = [0]
        self.graded = self.errors = self.local_cache = self.orphans = 0
        self.models: Counter[str] = Counter()

    def model(self, at: str, e: dict[str, Any], scoring: set[str]) -> None:
        f = self.f
        if isinstance(e.get("span_id"), str) and e["span_id"] in scoring:
            self.graded += 1
            return
        output = f.obj(e.get("output"), None, f"{at}.output") or {}
        choices = output.get("choices") if isinstance(output.get("choices"), list) else []
        if e.get("error") and not choices:
            self.errors += 1
            return
        raw_input = e.get("input") if isinstance(e.get("input"), list) else []
        refs = e.get("input_refs")
        if not raw_input and isinstance(refs, list):
            raw_input = [
                m
                for r in refs
                if isinstance(r, list | tuple) and len(r) == 2 and all(isinstance(x, int) for x in r)
                for m in self.pool_msgs[r[0] : r[1]]
            ]
        sent = self.pool.request_raw(raw_input, lambda raw: _message(raw, self.attachments))
        choice = choices[0] if choices and isinstance(choices[0], dict) else {}
        answer = _message(choice.get("message"), self.attachments) or Message(role="assistant")
        self.pool.answer(answer, choice.get("message") if isinstance(choice.get("message"), dict) else None)
        usage_at = f"{at}.output.usage"
        usage = _usage(f.obj(output.get("usage"), None, usage_at) or {}, f, usage_at, self.ambiguous)
        started = f.time(e.get("timestamp"), None, f"{at}.timestamp")
        ended = f.time(e.get("completed"), None, f"{at}.completed")
        working = f.number(e.get("working_time"), None, f"{at}.working_time")
        if ended is None and started is not None and working is not None and 0 <= working < 1e7:
            ended = started + timedelta(seconds=working)
        model = output.get("model") if isinstance(output.get("model"), str) else e.get("model")
        model = model if isinstance(model, str) else None
        if model:
            self.models[model] += 1
        self.local_cache += e.get("cache") == "read"
        retries = e.get("retries")
        turn = self.turn(
            started_at=started,
            ended_at=ended,
            usage=usage,
            finish_reason=choice.get("stop_reason") if isinstance(choice.get("stop_reason"), str) else None,
            text=answer.content or None,
            tool_calls=list(answer.tool_calls),
            sent=sent,
            retries=retries
            if isinstance(retries, int) and not isinstance(retries, bool) and 0 <= retries < 10**6
            else 0,
            model=model,
        )
        self.expect_all(turn)

    def tool(self, at: str, e: dict[str, Any]) -> None:
        f = self.f
        cid = e.get("id") if isinstance(e.get("id"), str) else None
        if self.owner(cid) is None:
            self.orphans += 1
            return
        err = e.get("error") if isinstance(e.get("error"), dict) else None
        result = e.get("result")
        content = _text(result, self.attachments) if isinstance(result, str | list) else dumps_args(result)
        if err and not content:
            content = str(err.get("message", ""))
        t0 = f.time(e.get("timestamp"), None, f"{at}.timestamp")
        t1 = f.time(e.get("completed"), None, f"{at}.completed")
        self.result(
            cid,
            content or "",
            is_error=err is not None,
            timed_out=bool(err and err.get("type") == "timeout"),
            duration_s=(t1 - t0).total_seconds() if t0 and t1 else None,
        )

    def say_what_is_lost(self, any_events: bool, nested: int) -> None:
        if not any_events:
            self.note(
                "this sample has no events (a log before 0.3.25, or events not kept): no model calls are known"
            )
        self.count_note(
            self.graded,
            "{n} model call(s) made while scoring (model-graded scorers) are not the agent's: left out",
        )
        self.count_note(self.errors, "{n} model call(s) failed with an error and no output: not counted")
        self.count_note(
            self.local_cache,
            "{n} call(s) were answered from Inspect's local cache: no provider call was made",
        )
        self.count_note(nested, "{n} model call(s) nested in subtask or tool events are counted in this run")
        self.count_note(self.orphans, "{n} tool event(s) answer no recorded call: not attached")
        self.count_note(
            self.ambiguous[0],
            "{n} call(s) whose total_tokens fits neither reading of input_tokens: read as fresh input "
            "(the current convention), cache reads and writes added",
        )
        if self.turns and not any(t.usage.known for t in self.turns):
            self.note("no model event carries usage: usage is unknown")


def _policy(ev: dict[str, Any], sample: dict[str, Any], f: Fields) -> RecordedPolicy | None:
    cfg = ev.get("config") if isinstance(ev.get("config"), dict) else {}
    params = {
        k: cfg[k]
        for k in ("message_limit", "token_limit", "token_limit_type", "working_limit", "cost_limit")
        if isinstance(cfg.get(k), int | float | str) and not isinstance(cfg.get(k), bool)
    }
    if isinstance(sample.get("token_limit"), int):
        params["sample_token_limit"] = sample["token_limit"]
    turn_limit = cfg.get("turn_limit")
    time_limit = cfg.get("time_limit")
    if not params and turn_limit is None and time_limit is None:
        return None
    return RecordedPolicy(
        rules="inspect",
        max_turns=f.tokens(turn_limit, None, "eval.config.turn_limit"),
        deadline_s=f.number(time_limit, None, "eval.config.time_limit"),
        params=params,
    )


def _outcome(sample: dict[str, Any], turns: list[Turn], f: Fields, where: str) -> Outcome:
    label = label_source = None
    score = None
    scores = sample.get("scores") if isinstance(sample.get("scores"), dict) else {}
    for name, s in scores.items():
        value = s.get("value") if isinstance(s, dict) else None
        if isinstance(value, str) and value in GRADES:
            label, score = GRADES[value]
        elif isinstance(value, bool):
            label, score = ("correct", 1.0) if value else ("incorrect", 0.0)
        elif isinstance(value, int | float):
            score = f.number(value, None, f"{where}.scores.{name}.value")
        elif isinstance(value, str):
            label = value
        else:
            continue  # a dict or list of metrics: kept in metadata['scores']
        label_source = f"inspect score {name}"
        break
    last = turns[-1] if turns else None
    text = last.text if last else None
    err = sample.get("error") if isinstance(sample.get("error"), dict) else None
    limit = sample.get("limit") if isinstance(sample.get("limit"), dict) else None
    if err:
        stop, detail = "error", str(err.get("message", "error"))[:500]
    elif limit and isinstance(limit.get("type"), str):
        stop, detail = (
            LIMIT_STOPS.get(limit["type"], limit["type"]),
            f"{limit['type']} limit {limit.get('limit')}",
        )
    elif last is not None and not last.tool_calls:
        stop, detail = "done", "the model answered without tool calls"
    else:
        stop, detail = None, "the recording ends after a tool call" if last else "no model call recorded"
    return Outcome(
        stop_reason=stop, text=text, detail=detail, label=label, label_source=label_source, score=score
    )
