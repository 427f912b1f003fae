"""Fixtures for the loop's tests: the loopback chat server and a recording sleep."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.loop.chat_server import ChatServer


def processes_with(token: str) -> list[int]:
    """Live processes on this machine whose command line holds ``token`` (to prove none outlived a run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # it ended while we looked
                continue
    return found


@pytest.fixture
def server() -> Iterator[ChatServer]:
    srv = ChatServer().start()
    try:
        yield srv
    finally:
        srv.stop()


class RecordingSleep:
    """An injected backoff sleep: records each delay and returns at once."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


# -- one worker for the loop suite ----------------------------------------------------------------------------------

_HERE = Path(__file__).parent


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist's own, which reads the group into the node id
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The loop suite runs on one pytest-xdist worker, in file order (``--dist loadgroup``): test_zz_secrets.py
    searches what the files before it wrote on that worker (``artifacts``, the worker's base temp)."""
    for item in items:
        if item.path.is_relative_to(_HERE):
            item.add_marker(pytest.mark.xdist_group("loop"))


# -- the suite's API key, and everything the suite writes (grepped for it by test_zz_secrets.py) -----------------

SUITE_KEY_ENV = "WORKBENCH_LOOP_TEST_KEY"
SUITE_KEY = "sk-wbtest-5d41402abc4b2a76b9719d911017c592"


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The folder every trace, log and error text of the loop suite is written to; the key is set for the suite
    and the ``workbench`` logger writes here at DEBUG."""
    root = tmp_path_factory.getbasetemp() / "loop-artifacts"
    root.mkdir(exist_ok=True)
    handler = logging.FileHandler(root / "workbench.log", encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    logger = logging.getLogger("workbench")
    previous = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(SUITE_KEY_ENV, SUITE_KEY)
        yield root
    logger.removeHandler(handler)
    logger.setLevel(previous)
    handler.close()


@pytest.fixture
def keep(artifacts: Path):
    """``keep(text_or_error)``: file an error text (or any output) with the suite's artifacts."""

    def _keep(item: object) -> None:
        with open(artifacts / "errors.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{item!s}\n{item!r}\n")

    return _keep


@pytest.fixture
def trace_path(artifacts: Path, request: pytest.FixtureRequest) -> Path:
    """A fresh trace path under the suite's artifacts."""
    safe = "".join(c if c.isalnum() else "_" for c in request.node.name)[:80]
    folder = artifacts / "traces"
    folder.mkdir(exist_ok=True)
    return folder / f"{safe}.jsonl"
