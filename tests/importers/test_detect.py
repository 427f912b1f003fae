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
