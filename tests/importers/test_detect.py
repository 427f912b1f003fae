"""Sniffing real files: each is recognised by its own importer and by no other. Every sample of the registry
(tests/samples) is held to the same by the importer battery (test_battery.py), under its name and a neutral one,
with the short head (``HEAD_LINES``) and the full one."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.samples import samples, write_sample
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


def test_detection_parses_each_head_line_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many sniffers read a head as JSON, each of its lines is parsed once (a mini-swe-agent trajectory's
    head is its whole document, which four sniffers parsed in turn), and detection answers as before."""
    from workbench.importers import _common, detect

    parsed: Counter[int] = Counter()
    reads = [0]
    value, values = _common._value, _common.Head.values

    def counted(raw: bytes) -> object:
        parsed[id(raw)] += 1
        return value(raw)

    def read(self: _common.Head) -> list[object]:
        reads[0] += 1
        return values(self)

    monkeypatch.setattr(_common, "_value", counted)
    monkeypatch.setattr(_common.Head, "values", read)
    shared_reads = 0
    for s in samples():
        path = write_sample(s, tmp_path)
        parsed.clear()
        reads[0] = 0
        assert detect(path).__name__ == s.module, s.id
        assert max(parsed.values(), default=1) == 1, s.id
        shared_reads += reads[0] > 1
    assert shared_reads >= 10  # most formats' heads are read by several sniffers
