"""The domain core type-checks strictly: mypy over the packages `[tool.mypy] files` names, as configured in
pyproject.toml (strict, unused `# type: ignore`s are errors). A finding fails the suite with mypy's own lines."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is in the test extra: pip install -e '.[test]'")

ROOT = Path(__file__).resolve().parents[2]
STRICT_CORE = {"workbench/govern", "workbench/trace", "workbench/replay", "workbench/scale"}


def _config() -> dict[str, object]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]


def test_the_strict_core_is_configured() -> None:
    cfg = _config()
    assert cfg["strict"] is True and cfg["warn_unused_ignores"] is True
    assert set(cfg["files"]) >= STRICT_CORE  # type: ignore[arg-type]


def test_mypy_finds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(
        ROOT
    )  # `files` are relative to the checkout; the cache (.mypy_cache) is this checkout's own
    out, err, status = api.run(["--config-file", str(ROOT / "pyproject.toml")])
    assert status == 0, out + err
