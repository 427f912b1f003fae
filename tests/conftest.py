"""Shared fixtures. Real traces come from ../shared/traces; tests that need them skip with a reason."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from workbench.paths import shared_traces


def pytest_configure(config: pytest.Config) -> None:
    # The corpus cache (workbench.scale.cache) goes to a folder of this session's own, never the user's cache.
    if "WORKBENCH_CACHE_DIR" not in os.environ:
        os.environ["WORKBENCH_CACHE_DIR"] = tempfile.mkdtemp(prefix="workbench-test-cache-")


@pytest.fixture(scope="session")
def shared() -> Path:
    """The real recorded runs (``../shared/traces``); skips the test when they are absent."""
    root = shared_traces()
    if root is None:
        pytest.skip("../shared/traces is absent (set WORKBENCH_SHARED_TRACES to point at it)")
    return root
