"""The one registry of format samples, for the tests and the benchmarks alike.

For every importer module, one small file (or folder) per documented version or shape of its format, written by
the tests themselves (no third-party file is copied), with what an independent reading of it counts. Every test
that needs "a file of format X" draws it from here, parametrised over ``samples()`` where it can, so a sample added
here is covered by all of them at once:

* the importer battery (tests/importers/test_battery.py): detection, counts, bad input, round trips;
* the bad-input battery (tests/importers/test_bad_input.py): garbage lines in every JSON-lines sample
  (``lines``), garbage fields in every whole-document sample (``doc``);
* the benchmarks (``write_all``, ``write_sized``; ``lines`` for the bounded-read benchmark).

``sized()`` enrols the formats a benchmark writes at any size (tests/samples/generated.py): each ``Sized`` writes
``n`` units of ``unit`` model calls of its format; ``benchmarks/import_bench.py`` times them (``write_sized``) and
the battery holds each read as its importer with exactly that many calls.

A sample's ``calls`` and ``runs`` are what an independent reading counts; ``prompt``/``completion`` the token
totals, where the sample states them (``None``: asserted elsewhere, by the format's own tests).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

IMPORTERS = "workbench.importers."


@dataclass(frozen=True)
class Sample:
    module: str
    """The importer module that must read it (``workbench.importers.<name>``)."""
    version: str
    """The documented version or shape it stands for."""
    name: str
    """The file (or folder) name it is written under."""
    calls: int
    runs: int
    prompt: int | None = None
    completion: int | None = None
    lines: Callable[[], list[bytes]] | None = None
    """A JSON-lines sample: its lines, in order."""
    keep: int = 0
    """How many of its ``lines`` must stay first (a header line)."""
    doc: Callable[[], Any] | None = None
    """A whole-document sample: the document (written as JSON, ``indent``, unless ``writer`` says otherwise)."""
    indent: int | None = 2
    cut_refused: bool = True
    """A whole document cut short is refused with one ``TraceError`` naming its file and line."""
    writer: Callable[[Path], Path] | None = None
    """Folders, zips, text and files that need a folder name of their own: writes it into a folder; its path."""

    @property
    def id(self) -> str:
        return f"{self.module.rsplit('.', 1)[1]}:{self.version}"

    def write(self, folder: Path) -> Path:
        """Writes it into ``folder`` (deterministic: the same bytes every time); returns its path."""
        if self.writer is not None:
            return self.writer(folder)
        path = folder / self.name
        if self.lines is not None:
            path.write_bytes(b"".join(self.lines()))
        else:
            assert self.doc is not None, self.id
            path.write_text(json.dumps(self.doc(), indent=self.indent))
        return path


@dataclass(frozen=True)
class Sized:
    module: str
    """The importer module that must read it."""
    version: str
    """The documented version or shape it stands for."""
    suffix: str
    """Its file name after ``generated.``."""
    write: Callable[[Path, int], Path]
    """``write(path, n)`` writes a file (or folder) of ``n`` units at ``path``; returns it."""
    unit: int = 1
    """Model calls a unit holds."""


def _registry() -> tuple[Sample, ...]:
    from tests.importers import minisweagent_fixtures as mini
    from tests.importers import openhands_shapes as oh
    from tests.importers.test_aider import V046, V050, V060
    from tests.importers.test_aider import write as aider_write
    from tests.importers.test_gemini_cli import META, session_messages
    from tests.importers.test_inspect_ai import log, write_eval
    from tests.importers.test_otel_genai import openinference_spans, otlp_doc
    from tests.importers.test_swe_agent import v0_traj, v1_traj
    from tests.samples import lines as ln
    from tests.samples import versions

    def j(*objs: object) -> Callable[[], list[bytes]]:
        return lambda: [json.dumps(o).encode() + b"\n" for o in objs]

    def conversation(folder: Path) -> Path:
        return oh.write_conversation(folder / "conv")

    def eval_zip(folder: Path) -> Path:
        write_eval(folder / "log.eval", log())
        return folder / "log.eval"

    def completion(v1: bool) -> Callable[[], Any]:
        return lambda: oh.completion_log("resp-1", 1200, 40, 0.01, v1=v1)

    def old_sdk_completion(folder: Path) -> Path:
        logs = folder / "telemetry"  # a folder not named completions
        logs.mkdir()
        path = logs / "anthropic__claude-sonnet-4-1759320001.500-ab12.json"
        path.write_text(json.dumps(versions.sdk_completion_before_2026(80_000)))
        return path

    def aider(*parts: str) -> Callable[[Path], Path]:
        def write(folder: Path) -> Path:
            repo = folder / "repo"
            repo.mkdir()
            return aider_write(repo, *parts)

        return write

    def at(module: str) -> str:
        return IMPORTERS + module

    history = ".aider.chat.history.md"
    # Not held to "cut short is one error naming file and line" (test_bad_input), as before the registry:
    TOLERANT = False  # an OpenHands trajectory array cut short keeps its whole elements (by design)
    NO_LINE = False  # mini-swe-agent's refusal names the file but no line (its TraceError has none)
    return (
        Sample(
            at("native"), "budget-workbench/trace 1", "run.jsonl", 2, 1, 30, 5, lines=ln.native_lines, keep=1
        ),
        Sample(at("claude_code"), "2.x session", "s.jsonl", 2, 1, lines=ln.claude_code_lines),
        Sample(at("claude_code"), "inline sidechains", "i.jsonl", 9, 3, lines=ln.claude_code_inline_lines),
        Sample(at("openhands_conversation"), "V1 conversation folder", "conv", 4, 1, writer=conversation),
        Sample(at("openhands"), "V0 output", "output.jsonl", 4, 2, lines=ln.openhands_lines),
        Sample(at("openhands"), "V1 output", "v1.jsonl", 8, 2, lines=ln.openhands_v1_lines),
        Sample(at("openhands"), "2024 pairs", "pairs.jsonl", 6, 2, lines=ln.openhands_pairs_lines),
        Sample(at("openhands"), "resolver", "resolver.jsonl", 6, 2, lines=ln.openhands_resolver_lines),
        Sample(
            at("openhands"),
            "2024 question_id",
            "qid.jsonl",
            3,
            1,
            lines=j(versions.openhands_2024_line("question_id", "q-17")),
        ),
        Sample(
            at("openhands"),
            "2024 integer id",
            "id.jsonl",
            6,
            2,
            lines=j(versions.openhands_2024_line("id", 42), versions.openhands_2024_line("id", 43)),
        ),
        Sample(
            at("openhands_trajectory"),
            "V0 trajectory",
            "traj.json",
            2,
            1,
            doc=oh.v0_trajectory,
            cut_refused=TOLERANT,
        ),
        Sample(
            at("openhands_completions"),
            "V1 SDK log",
            "call.json",
            1,
            1,
            1200,
            40,
            doc=completion(True),
            indent=None,
        ),
        Sample(
            at("openhands_completions"),
            "V0 log",
            "call.json",
            1,
            1,
            1200,
            40,
            doc=completion(False),
            indent=None,
        ),
        Sample(
            at("openhands_completions"),
            "SDK before 2026",
            "telemetry/anthropic__claude-sonnet-4-1759320001.500-ab12.json",
            1,
            1,
            4000,
            90,
            writer=old_sdk_completion,
        ),
        Sample(at("codex_cli"), "0.5x rollout", "rollout.jsonl", 2, 1, lines=ln.codex_lines),
        Sample(at("minisweagent"), "1.x text", "a.traj.json", 3, 1, doc=mini.v1, cut_refused=NO_LINE),
        Sample(at("minisweagent"), "2.x text", "b.traj.json", 2, 1, doc=mini.v2_text, cut_refused=NO_LINE),
        Sample(
            at("minisweagent"),
            "2.x tool calls",
            "c.traj.json",
            1,
            1,
            doc=mini.v2_toolcall,
            cut_refused=NO_LINE,
        ),
        Sample(
            at("minisweagent"),
            "2.x responses",
            "d.traj.json",
            1,
            1,
            doc=mini.v2_responses,
            cut_refused=NO_LINE,
        ),
        Sample(at("swe_agent"), "0.x trajectory", "v0.traj", 2, 1, doc=v0_traj),
        Sample(at("swe_agent"), "1.x trajectory", "v1.traj", 2, 1, doc=v1_traj),
        Sample(at("inspect_ai"), "JSON log", "log.json", 3, 2, doc=log),
        Sample(at("inspect_ai"), "eval zip", "log.eval", 3, 2, doc=log, writer=eval_zip),
        Sample(at("aider"), "0.46", history, 2, 1, 2634, 61, writer=aider(V046)),
        Sample(at("aider"), "0.50 cached", history, 1, 1, 3345, 78, writer=aider(V050)),
        Sample(at("aider"), "0.51+ cache hit", history, 3, 1, writer=aider(V060)),
        Sample(
            at("aider"),
            "header after other lines",
            history,
            3,
            1,
            writer=aider("<!-- vim: set ft=markdown: -->\n", V060),
        ),
        Sample(
            at("gemini_cli"),
            "JSON session",
            "g.json",
            3,
            1,
            doc=lambda: {**META, "messages": session_messages()},
        ),
        Sample(at("gemini_cli"), "JSONL session", "g.jsonl", 2, 1, lines=ln.gemini_cli_lines, keep=1),
        Sample(at("otel_genai"), "OTLP JSON", "otlp.json", 3, 2, doc=otlp_doc, indent=None),
        Sample(at("otel_genai"), "OpenInference list", "spans.json", 1, 1, doc=openinference_spans),
        Sample(at("otel_genai"), "SDK to_json lines", "spans.jsonl", 2, 1, 260, 13, lines=ln.otel_span_lines),
        Sample(
            at("otel_genai"),
            "any-agent AgentTrace",
            "trace.json",
            2,
            1,
            1900,
            42,
            doc=versions.any_agent_trace,
        ),
        Sample(at("openai_log"), "request/response lines", "log.jsonl", 2, 1, lines=ln.openai_log_lines),
    )


_CACHE: tuple[Sample, ...] | None = None


def samples() -> tuple[Sample, ...]:
    global _CACHE
    if _CACHE is None:
        _CACHE = _registry()
    return _CACHE


def samples_for(module: str) -> list[Sample]:
    return [s for s in samples() if s.module == module]


def sample(module: str, version: str) -> Sample:
    """One sample, by its importer's short name (``"openai_log"``) and its version."""
    (found,) = [s for s in samples() if s.module == IMPORTERS + module and s.version == version]
    return found


def line_samples() -> list[Sample]:
    """The JSON-lines samples: garbage can be put between their lines."""
    return [s for s in samples() if s.lines is not None]


def document_samples() -> list[Sample]:
    """The whole-document samples: any field of theirs can be replaced."""
    return [s for s in samples() if s.doc is not None]


def write_sample(sample: Sample, folder: Path) -> Path:
    """Writes one sample into a folder of its own under ``folder``."""
    own = folder / f"{sample.module.rsplit('.', 1)[1]}-{samples().index(sample)}"
    own.mkdir(parents=True, exist_ok=True)
    return sample.write(own)


def write_all(folder: Path) -> dict[Sample, Path]:
    return {s: write_sample(s, folder) for s in samples()}


def sized() -> tuple[Sized, ...]:
    from tests.samples import generated as f

    return (
        Sized(IMPORTERS + "swe_agent", "0.x trajectory", "traj", f.swe_agent),
        Sized(IMPORTERS + "inspect_ai", "eval zip, pooled inputs", "eval", f.inspect_eval),
        Sized(IMPORTERS + "aider", "0.51+ cache hit", "aider.chat.history.md", f.aider),
        Sized(IMPORTERS + "gemini_cli", "JSONL session", "gemini.jsonl", f.gemini_cli),
        Sized(IMPORTERS + "otel_genai", "OTLP JSON", "otlp.json", f.otel_genai),
        Sized(IMPORTERS + "openhands", "V1 output", "v1-output.jsonl", f.openhands_v1_output, 4),
        Sized(
            IMPORTERS + "openhands_conversation",
            "V1 conversation folder",
            "conversation",
            f.openhands_conversation,
            4,
        ),
        Sized(
            IMPORTERS + "openhands_trajectory", "V0 trajectory", "trajectory.json", f.openhands_trajectory, 2
        ),
    )


def write_sized(folder: Path, calls: int) -> list[Path]:
    """One file of each sized format in ``folder``, about ``calls`` model calls each (whole units, at least one)."""
    return [s.write(folder / f"generated.{s.suffix}", max(1, calls // s.unit)) for s in sized()]
