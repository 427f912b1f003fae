"""Sniffing real files: each is recognised by its own importer and by no other. Every sample of the registry
(tests/samples) is held to the same by the importer battery (test_battery.py), under its name and a neutral one,
with the short head (``HEAD_LINES``) and the full one."""

from __future__ import annotations

from pathlib import Path

from workbench.importers import importers, read_head


def test_real_files_are_detected_by_source(shared: Path) -> None:
    expected = {"claude-code": "claude-code", "openhands": "openhands", "codex-cli": "codex-cli"}
    for folder, name in expected.items():
        for f in sorted((shared / folder).rglob("*.jsonl")):
            head = read_head(f)
            assert [m.NAME for m in importers() if m.sniff(f, head)] == [name], f


def test_the_newer_sniffers_claim_no_real_file_of_another_format(shared: Path) -> None:
    newer = {"swe-agent", "inspect-ai", "aider", "gemini-cli", "otel-genai"}
    for f in sorted(p for p in shared.rglob("*") if p.is_file()):
        head = read_head(f)
        claims = [m.NAME for m in importers() if m.NAME in newer and m.sniff(f, head)]
        assert claims == [], (f, claims)
