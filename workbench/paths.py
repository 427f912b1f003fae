"""Where the workbench looks for runs by default. Read at call time (no import-time state)."""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
"""The checkout this package runs from (meaningful for a source checkout / editable install)."""


def bundled_traces() -> Path:
    """The project's own ``traces/``: runs the project generated or recorded itself."""
    return REPO_ROOT / "traces"


def shared_traces() -> Path | None:
    """The real recorded runs beside the checkout (``../shared/traces``), or ``$WORKBENCH_SHARED_TRACES``.

    ``None`` when absent, so callers can skip with a reason.
    """
    env = os.environ.get("WORKBENCH_SHARED_TRACES")
    candidate = Path(env) if env else REPO_ROOT.parent / "shared" / "traces"
    return candidate if candidate.is_dir() else None


def real_histories() -> list[Path]:
    """Agent histories on this machine that the workbench can read (Claude Code, Codex CLI)."""
    home = Path.home()
    found = [home / ".claude" / "projects", home / ".codex" / "sessions"]
    return [p for p in found if p.is_dir()]
