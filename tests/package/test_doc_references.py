"""Every reference to a Markdown page in the code, tests, notebooks and benchmarks names a file in this repository
(issue 13: 63 of them pointed at design notes that were not in it). A reference is a path ending in ``.md``; it
resolves from the repository root or from the referencing file's folder. The report the workbench writes
(``report.md``, ``calibration.md``) are outputs, not pages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("workbench", "tests", "notebooks", "benchmarks")
SUFFIXES = (".py", ".ipynb", ".j2", ".toml", ".cfg", ".txt")
# a path of word characters, dots, dashes and slashes ending in .md (not .md.j2, not an attribute like r.md.corpus)
REFERENCE = re.compile(r"(?<![\w./-])((?:\.{1,2}/)*(?:[\w.-]+/)*[\w-]+\.md)(?![\w.]*\w)")
OUTPUTS = re.compile(r"(^|/)(report|calibration)\.md$")  # files the report and calibrate write


# In tests, a bare quoted name such as "notes.md" is a fixture file the test writes, not a page it cites.
FIXTURE_NAME = re.compile(r"[\"']([\w.-]+\.md)[\"']")


def references() -> list[tuple[Path, int, str]]:
    found = []
    for folder in SCANNED:
        for path in sorted((ROOT / folder).rglob("*")):
            if not path.is_file() or path.suffix not in SUFFIXES or ".ipynb_checkpoints" in path.parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                fixtures = set(FIXTURE_NAME.findall(line)) if folder == "tests" else set()
                found.extend(
                    (path, number, m.group(1)) for m in REFERENCE.finditer(line) if m.group(1) not in fixtures
                )
    return found


def resolves(path: Path, reference: str) -> bool:
    if OUTPUTS.search(reference):
        return True
    for base in (ROOT, path.parent):
        target = (base / reference).resolve()
        if target.is_file() and (target == ROOT or ROOT in target.parents):
            return True
    return False


def test_the_scan_finds_references() -> None:
    refs = {r for _, _, r in references()}
    assert "docs/governors.md" in refs and "docs/cli.md" in refs


def test_the_pattern_reads_references_and_not_look_alikes() -> None:
    text = "see docs/governors.md §5.8, ../../docs/cli.md. and report.md.j2, r.md.corpus, notes/{i:04d}.md"
    assert [m.group(1) for m in REFERENCE.finditer(text)] == ["docs/governors.md", "../../docs/cli.md"]


def test_every_markdown_reference_resolves_inside_the_repository() -> None:
    missing = [f"{p.relative_to(ROOT)}:{n}: {r}" for p, n, r in references() if not resolves(p, r)]
    if missing and not (ROOT / "docs").is_dir():
        pytest.fail("no docs/ folder in the repository")
    assert missing == []
