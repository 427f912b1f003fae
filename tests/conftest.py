"""Shared fixtures. Real traces come from ../shared/traces; tests that need them skip with a reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.paths import shared_traces


@pytest.fixture(scope="session")
def shared() -> Path:
    """The real recorded runs (``../shared/traces``); skips the test when they are absent."""
    root = shared_traces()
    if root is None:
        pytest.skip("../shared/traces is absent (set WORKBENCH_SHARED_TRACES to point at it)")
    return root
