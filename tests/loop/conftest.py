"""Fixtures for the loop's tests: the loopback chat server and a recording sleep."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.loop.chat_server import ChatServer


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
