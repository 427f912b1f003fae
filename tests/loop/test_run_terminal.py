"""Red team: server text printed by ``workbench run`` never reaches the terminal raw. A hostile endpoint puts ESC
(a title change, a screen clear), BEL, NUL and a forged ``trace:`` line into ``request_split`` parts and into an
error body; what ``run`` prints holds none of those characters, and the forged line is not a line of its own. The
control shows the raw text does hold them (what was printed before)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop.chat_server import Answer, ChatServer, completion
from tests.loop.test_run_hardening import run_cli
from workbench.format import printable

HOSTILE = "part\x1b]0;owned\x07\x1b[2J\x00\ntrace: /tmp/forged.jsonl\rdone\u202e"
CONTROL = ("\x1b", "\x07", "\x00", "\r", "\u202e")


def _clean(printed: str) -> None:
    assert not any(ch in printed for ch in CONTROL), repr(printed)
    assert not any(line.startswith("trace: /tmp/forged") for line in printed.splitlines())


@pytest.mark.timeout(120)
def test_request_split_parts_are_printed_escaped(server: ChatServer, tmp_path: Path, artifacts: Path) -> None:
    server.push(
        Answer(
            200, completion("", [("c1", "request_split", {"parts": [HOSTILE, "second"], "reason": HOSTILE})])
        )
    )
    code, out, err, _trace = run_cli(server, tmp_path, artifacts, "terminal-split", "--no-sandbox", "--swarm")
    assert code == 0, err
    _clean(out + err)
    assert "part 1: part\\x1b]0;owned\\x07" in out and "part 2: second" in out
    assert any(ch in HOSTILE for ch in CONTROL)  # control: the raw part holds them


@pytest.mark.timeout(120)
def test_an_error_body_is_printed_escaped(server: ChatServer, tmp_path: Path, artifacts: Path) -> None:
    body = f'{{"error": {{"message": "{HOSTILE.encode("unicode_escape").decode()}"}}}}'.encode()
    server.push(*(Answer(400, body) for _ in range(3)))
    code, out, err, _trace = run_cli(server, tmp_path, artifacts, "terminal-error", "--no-sandbox")
    assert code == 1
    _clean(out + err)
    assert "\\x1b]0;owned\\x07" in err


def test_printable_is_the_one_escaping_function() -> None:
    assert printable(HOSTILE) == (
        "part\\x1b]0;owned\\x07\\x1b[2J\\x00\\ntrace: /tmp/forged.jsonl\\rdone\\u202e"
    )
