"""One registry of format samples: for every importer module, one small file (or folder) per documented version or
shape of its format, written by the tests themselves (no third-party file is copied), with what an independent
reading of it counts. The importer battery (test_battery.py) runs every enrolled importer over all of them; a
benchmark can write the same samples (``write_all``).

``sized()`` enrols the formats a benchmark writes at any size (tests/importers/sized_formats.py): each
``Sized`` writes ``calls`` model calls of its format; ``benchmarks/import_bench.py`` times them
(``write_sized``) and the battery holds each read as its importer with exactly that many calls.

A sample's ``calls`` is the number of model calls an independent reading counts; ``prompt``/``completion`` the
token totals, where the sample states them (``None``: asserted elsewhere, by the format's own tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Sample:
    module: str
    """The importer module that must read it (``workbench.importers.<name>``)."""
    version: str
    """The documented version or shape it stands for."""
    name: str
    """The file (or folder) name it is written under."""
    write: Callable[[Path], Path]
    """Writes it into an empty folder; returns its path."""
    calls: int
    prompt: int | None = None
    completion: int | None = None


@dataclass(frozen=True)
class Sized:
    module: str
    """The importer module that must read it."""
    version: str
    """The documented version or shape it stands for."""
    suffix: str
    """Its file name after ``generated.``."""
    write: Callable[[Path, int], Path]
    """``write(path, calls)`` writes a file of ``calls`` model calls at ``path``; returns it."""


def _j(obj: object) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def _file(name: str, content: Callable[[], bytes | str]) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        data = content()
        path = folder / name
        path.write_bytes(data if isinstance(data, bytes) else data.encode())
        return path

    return write


# -- the versions issue 21 names ------------------------------------------------------------------------------


def any_agent_trace() -> dict[str, Any]:
    """any-agent's own span model (``AgentTrace``: ``{spans, final_output}``): integer ``trace_id``/``span_id`` in
    ``context``, the parent as a ``SpanContext`` object, ``call_llm``/``execute_tool`` operations, start and end in
    epoch nanoseconds, its own usage and cost attribute names."""
    trace = 0x4BF92F3577B34DA6A3CE929D0E0E4736

    def span(sid: int, parent: int | None, name: str, attrs: dict[str, Any], t: int) -> dict[str, Any]:
        return {
            "name": name,
            "kind": "internal",
            "parent": None
            if parent is None
            else {
                "trace_id": trace,
                "span_id": parent,
                "is_remote": False,
                "trace_flags": 1,
                "trace_state": {},
            },
            "start_time": 1_760_000_000_000_000_000 + t * 1_000_000_000,
            "end_time": 1_760_000_000_000_000_000 + (t + 1) * 1_000_000_000,
            "status": {"status_code": "unset", "description": None},
            "context": {
                "trace_id": trace,
                "span_id": sid,
                "is_remote": False,
                "trace_flags": 1,
                "trace_state": {},
            },
            "attributes": attrs,
            "links": [],
            "events": [],
            "resource": {"attributes": {"service.name": "any_agent"}, "schema_url": ""},
        }

    llm = {"gen_ai.operation.name": "call_llm", "gen_ai.request.model": "gpt-4.1-mini"}
    return {
        "spans": [
            span(
                11,
                10,
                "call_llm gpt-4.1-mini",
                {
                    **llm,
                    "gen_ai.usage.input_tokens": 900,
                    "gen_ai.usage.output_tokens": 30,
                    "gen_ai.usage.input_cost": 0.00036,
                    "gen_ai.usage.output_cost": 0.000048,
                },
                1,
            ),
            span(
                12,
                10,
                "execute_tool search",
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "search",
                    "gen_ai.output": "found",
                },
                2,
            ),
            span(
                13,
                10,
                "call_llm gpt-4.1-mini",
                {
                    **llm,
                    "gen_ai.usage.input_tokens": 1000,
                    "gen_ai.usage.output_tokens": 12,
                    "gen_ai.usage.cached_tokens": 768,
                },
                3,
            ),
            span(10, None, "invoke_agent [any_agent]", {"gen_ai.operation.name": "invoke_agent"}, 0),
        ],
        "final_output": "done",
    }


def openhands_2024_line(key: str, value: Any) -> dict[str, Any]:
    """A 2024 OpenHands output line named by ``question_id`` or ``id`` (an integer or a string) instead of
    ``instance_id``: its history the ``[action, observation]`` pairs of the time."""
    from tests.importers import openhands_shapes

    line = openhands_shapes.pair_output_line()
    del line["instance_id"]
    return {key: value, **line}


def sdk_completion_before_2026(filler: int) -> dict[str, Any]:
    """The SDK's completion log before January 2026: ``{messages, tools, kwargs, context_window, response, cost,
    timestamp}`` with the request first; ``filler`` characters of conversation push the other keys past the
    sniffing head."""
    from tests.importers import openhands_shapes

    log = openhands_shapes.completion_log("resp-old-1", 4000, 90, 0.02)
    chat = [
        {"role": "system", "content": "You are OpenHands agent."},
        {"role": "user", "content": "x" * filler},
        {"role": "assistant", "content": "ok", "tool_calls": []},
    ]
    return {
        "messages": chat,
        "tools": [],
        "kwargs": {"temperature": 0},
        "context_window": 200000,
        "response": log["response"],
        "cost": 0.02,
        "timestamp": 1759320001.5,
    }


def _aider(preamble: str, *versions: str) -> Callable[[Path], Path]:
    def write(folder: Path) -> Path:
        from tests.importers.test_aider import write as aider_write

        repo = folder / "repo"
        repo.mkdir()
        return aider_write(repo, preamble, *versions)

    return write


# -- the registry ---------------------------------------------------------------------------------------------


def _registry() -> tuple[Sample, ...]:
    from tests.importers import minisweagent_fixtures as mini
    from tests.importers import openhands_shapes as oh
    from tests.importers.formats import (
        claude_code_inline_lines,
        claude_code_lines,
        codex_lines,
        openai_log_lines,
        openhands_lines,
        openhands_pairs_lines,
        openhands_resolver_lines,
        openhands_v1_lines,
        small_run,
    )
    from tests.importers.formats_more import gemini_cli_lines, otel_span_lines
    from tests.importers.test_aider import V046, V050, V060
    from tests.importers.test_gemini_cli import META, session_messages
    from tests.importers.test_inspect_ai import log, write_eval
    from tests.importers.test_otel_genai import openinference_spans, otlp_doc
    from tests.importers.test_swe_agent import v0_traj, v1_traj
    from workbench.trace import write_run

    def lines(name: str, make: Callable[[], list[bytes]]) -> Callable[[Path], Path]:
        return _file(name, lambda: b"".join(make()))

    def doc(name: str, make: Callable[[], Any], indent: int | None = 2) -> Callable[[Path], Path]:
        return _file(name, lambda: json.dumps(make(), indent=indent))

    def native(folder: Path) -> Path:
        return write_run(small_run(), folder / "run.jsonl")

    def conversation(folder: Path) -> Path:
        return oh.write_conversation(folder / "conv")

    def eval_zip(folder: Path) -> Path:
        write_eval(folder / "log.eval", log())
        return folder / "log.eval"

    def completion_alone(v1: bool) -> Callable[[Path], Path]:
        return doc("call.json", lambda: oh.completion_log("resp-1", 1200, 40, 0.01, v1=v1), None)

    def old_sdk_completion(folder: Path) -> Path:
        logs = folder / "telemetry"  # a folder not named completions
        logs.mkdir()
        path = logs / "anthropic__claude-sonnet-4-1759320001.500-ab12.json"
        path.write_text(json.dumps(sdk_completion_before_2026(80_000)))
        return path

    m = "workbench.importers."
    return (
        Sample(m + "native", "budget-workbench/trace 1", "run.jsonl", native, 2, 30, 5),
        Sample(m + "claude_code", "2.x session", "session.jsonl", lines("s.jsonl", claude_code_lines), 2),
        Sample(
            m + "claude_code",
            "inline sidechains",
            "inline.jsonl",
            lines("i.jsonl", claude_code_inline_lines),
            9,
        ),
        Sample(m + "openhands_conversation", "V1 conversation folder", "conv", conversation, 4),
        Sample(m + "openhands", "V0 output", "output.jsonl", lines("output.jsonl", openhands_lines), 4),
        Sample(m + "openhands", "V1 output", "v1.jsonl", lines("v1.jsonl", openhands_v1_lines), 8),
        Sample(m + "openhands", "2024 pairs", "pairs.jsonl", lines("pairs.jsonl", openhands_pairs_lines), 6),
        Sample(
            m + "openhands",
            "resolver",
            "resolver.jsonl",
            lines("resolver.jsonl", openhands_resolver_lines),
            6,
        ),
        Sample(
            m + "openhands",
            "2024 question_id",
            "qid.jsonl",
            _file("qid.jsonl", lambda: _j(openhands_2024_line("question_id", "q-17"))),
            3,
        ),
        Sample(
            m + "openhands",
            "2024 integer id",
            "id.jsonl",
            _file("id.jsonl", lambda: _j(openhands_2024_line("id", 42)) + _j(openhands_2024_line("id", 43))),
            6,
        ),
        Sample(
            m + "openhands_trajectory", "V0 trajectory", "traj.json", doc("traj.json", oh.v0_trajectory), 2
        ),
        Sample(m + "openhands_completions", "V1 SDK log", "v1.json", completion_alone(True), 1, 1200, 40),
        Sample(m + "openhands_completions", "V0 log", "v0.json", completion_alone(False), 1, 1200, 40),
        Sample(m + "openhands_completions", "SDK before 2026", "old.json", old_sdk_completion, 1, 4000, 90),
        Sample(m + "codex_cli", "0.5x rollout", "rollout.jsonl", lines("rollout.jsonl", codex_lines), 2),
        Sample(m + "minisweagent", "1.x text", "a.traj.json", doc("a.traj.json", mini.v1), 3),
        Sample(m + "minisweagent", "2.x text", "b.traj.json", doc("b.traj.json", mini.v2_text), 2),
        Sample(m + "minisweagent", "2.x tool calls", "c.traj.json", doc("c.traj.json", mini.v2_toolcall), 1),
        Sample(m + "minisweagent", "2.x responses", "d.traj.json", doc("d.traj.json", mini.v2_responses), 1),
        Sample(m + "swe_agent", "0.x trajectory", "v0.traj", doc("v0.traj", v0_traj), 2),
        Sample(m + "swe_agent", "1.x trajectory", "v1.traj", doc("v1.traj", v1_traj), 2),
        Sample(m + "inspect_ai", "JSON log", "log.json", doc("log.json", log), 3),
        Sample(m + "inspect_ai", "eval zip", "log.eval", eval_zip, 3),
        Sample(m + "aider", "0.46", "h46", _aider("", V046), 2, 2634, 61),
        Sample(m + "aider", "0.50 cached", "h50", _aider("", V050), 1, 3345, 78),
        Sample(m + "aider", "0.51+ cache hit", "h60", _aider("", V060), 3),
        Sample(
            m + "aider",
            "header after other lines",
            "hpre",
            _aider("<!-- vim: set ft=markdown: -->\n", V060),
            3,
        ),
        Sample(
            m + "gemini_cli",
            "JSON session",
            "g.json",
            doc("g.json", lambda: {**META, "messages": session_messages()}),
            3,
        ),
        Sample(m + "gemini_cli", "JSONL session", "g.jsonl", lines("g.jsonl", gemini_cli_lines), 2),
        Sample(m + "otel_genai", "OTLP JSON", "otlp.json", doc("otlp.json", otlp_doc, None), 3),
        Sample(
            m + "otel_genai", "OpenInference list", "spans.json", doc("spans.json", openinference_spans), 1
        ),
        Sample(
            m + "otel_genai",
            "SDK to_json lines",
            "spans.jsonl",
            lines("spans.jsonl", otel_span_lines),
            2,
            260,
            13,
        ),
        Sample(
            m + "otel_genai",
            "any-agent AgentTrace",
            "trace.json",
            doc("trace.json", any_agent_trace),
            2,
            1900,
            42,
        ),
        Sample(
            m + "openai_log", "request/response lines", "log.jsonl", lines("log.jsonl", openai_log_lines), 2
        ),
    )


_CACHE: tuple[Sample, ...] | None = None


def samples() -> tuple[Sample, ...]:
    global _CACHE
    if _CACHE is None:
        _CACHE = _registry()
    return _CACHE


def samples_for(module: str) -> list[Sample]:
    return [s for s in samples() if s.module == module]


def write_sample(sample: Sample, folder: Path) -> Path:
    """Writes one sample into a folder of its own under ``folder``."""
    own = folder / f"{sample.module.rsplit('.', 1)[1]}-{samples().index(sample)}"
    own.mkdir(parents=True, exist_ok=True)
    return sample.write(own)


def write_all(folder: Path) -> dict[Sample, Path]:
    return {s: write_sample(s, folder) for s in samples()}


def sized() -> tuple[Sized, ...]:
    from tests.importers import sized_formats as f

    m = "workbench.importers."
    return (
        Sized(m + "swe_agent", "0.x trajectory", "traj", f.swe_agent),
        Sized(m + "inspect_ai", "eval zip, pooled inputs", "eval", f.inspect_eval),
        Sized(m + "aider", "0.51+ cache hit", "aider.chat.history.md", f.aider),
        Sized(m + "gemini_cli", "JSONL session", "gemini.jsonl", f.gemini_cli),
        Sized(m + "otel_genai", "OTLP JSON", "otlp.json", f.otel_genai),
    )


def write_sized(folder: Path, calls: int) -> list[Path]:
    """One file of each sized format in ``folder``, ``calls`` model calls each."""
    return [s.write(folder / f"generated.{s.suffix}", calls) for s in sized()]
