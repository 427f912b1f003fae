"""Sniffing: each format's first lines are recognised by its importer and by no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.importers.formats import all_formats
from workbench.importers import HEAD_LINES, detect, importers, read_head


@pytest.mark.parametrize("name", ["native", "claude-code", "openhands", "codex-cli", "openai-log"])
def test_each_format_is_recognised_by_its_importer_only(name: str, tmp_path: Path) -> None:
    lines, _, _ = all_formats(tmp_path)[name]
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"".join(lines))
    assert name == detect(path).NAME
    head = read_head(path, HEAD_LINES)
    claims = [m.NAME for m in importers() if m.sniff(path, head)]
    assert claims == [name]


def test_real_files_are_detected_by_source(shared: Path) -> None:
    expected = {"claude-code": "claude-code", "openhands": "openhands", "codex-cli": "codex-cli"}
    for folder, name in expected.items():
        for f in sorted((shared / folder).rglob("*.jsonl")):
            head = read_head(f)
            assert [m.NAME for m in importers() if m.sniff(f, head)] == [name], f


def _my_documents(tmp: Path) -> dict[str, Path]:
    """One file of each format read by the newer importers, written as the tools write them."""
    import json
    import zipfile

    from tests.importers.formats_more import gemini_cli_lines, otel_span_lines
    from tests.importers.test_aider import V060, write
    from tests.importers.test_gemini_cli import META, session_messages
    from tests.importers.test_inspect_ai import log, write_eval
    from tests.importers.test_otel_genai import openinference_spans, otlp_doc
    from tests.importers.test_swe_agent import v0_traj, v1_traj

    files = {
        "swe-agent-0.traj": json.dumps(v0_traj(), indent=2),
        "swe-agent-1.traj": json.dumps(v1_traj(), indent=2),
        "inspect.json": json.dumps(log(), indent=2),
        "gemini.json": json.dumps({**META, "messages": session_messages()}, indent=2),
        "gemini.jsonl": b"".join(gemini_cli_lines()).decode(),
        "otlp.json": json.dumps(otlp_doc()),
        "spans.json": json.dumps(openinference_spans(), indent=2),
        "spans.jsonl": b"".join(otel_span_lines()).decode(),
    }
    out = {}
    for name, text in files.items():
        (tmp / name).write_text(text)
        out[name] = tmp / name
    write_eval(tmp / "inspect.eval", log())
    out["inspect.eval"] = tmp / "inspect.eval"
    aider_dir = tmp / "repo"
    aider_dir.mkdir()
    out["aider.md"] = write(aider_dir, V060)
    assert zipfile.is_zipfile(out["inspect.eval"])
    return out


EXPECTED = {
    "swe-agent-0.traj": "swe-agent",
    "swe-agent-1.traj": "swe-agent",
    "inspect.json": "inspect-ai",
    "inspect.eval": "inspect-ai",
    "gemini.json": "gemini-cli",
    "gemini.jsonl": "gemini-cli",
    "otlp.json": "otel-genai",
    "spans.json": "otel-genai",
    "spans.jsonl": "otel-genai",
    "aider.md": "aider",
}


def test_newer_formats_are_recognised_by_content_and_by_one_importer_only(tmp_path: Path) -> None:
    for name, path in _my_documents(tmp_path).items():
        head = read_head(path, HEAD_LINES)
        claims = [m.NAME for m in importers() if m.sniff(path, head)]
        assert claims == [EXPECTED[name]], name
        # the name does not matter: the same bytes under a neutral name are recognised alike
        neutral = tmp_path / f"renamed-{name.replace('.', '-')}"
        neutral.write_bytes(path.read_bytes())
        assert EXPECTED[name] == detect(neutral).NAME, name


def test_the_newer_sniffers_claim_no_real_file_of_another_format(shared: Path) -> None:
    newer = {"swe-agent", "inspect-ai", "aider", "gemini-cli", "otel-genai"}
    for f in sorted(p for p in shared.rglob("*") if p.is_file()):
        head = read_head(f)
        claims = [m.NAME for m in importers() if m.NAME in newer and m.sniff(f, head)]
        assert claims == [], (f, claims)
