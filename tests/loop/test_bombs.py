"""Red team: compressed bombs from a hostile endpoint. The client takes the body raw from httpx and inflates it
here with the cap counted on decoded bytes as they come; stacked and unknown encodings are refused unread. Each
attack runs the real CLI under a 1 GiB address-space cap; the control shows httpx's own decoding inflating one
raw chunk far past the cap in one go (what the client did before)."""

from __future__ import annotations

import gzip
import zlib
from functools import cache
from pathlib import Path

import httpx
import pytest

from tests.loop.chat_server import Answer, ChatServer
from tests.loop.test_run_hardening import run_cli
from workbench.loop.client import MAX_ERROR_BYTES, MAX_RESPONSE_BYTES
from workbench.loop.decode import Decoder, EncodingRefused, TooLarge
from workbench.trace import read_run

BOMB_BYTES = 1536 << 20  # 1.5 GiB of zeros once inflated: past the test's 1 GiB address-space cap


@cache
def gzip_bomb(layers: int = 1) -> bytes:
    z = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(1 << 20)
    data = b"".join(z.compress(block) for _ in range(BOMB_BYTES >> 20)) + z.flush()
    for _ in range(layers - 1):
        data = gzip.compress(data, 9)
    return data


def test_the_decoder_never_hands_out_more_than_the_cap() -> None:
    bomb = gzip_bomb()
    decoder = Decoder("gzip", 1 << 20)
    got = 0
    with pytest.raises(TooLarge, match="larger than 1,048,576 bytes once decoded"):
        for i in range(0, len(bomb), 65536):
            got += len(decoder.feed(bomb[i : i + 65536]))
    assert got <= 1 << 20
    # control: httpx's own decoder inflates the first raw chunk whole, far past the cap
    decoded = httpx.Response(200, headers={"content-encoding": "gzip"}, content=bomb[:65536])
    assert len(decoded.read()) > MAX_RESPONSE_BYTES


@pytest.mark.parametrize(
    ("header", "said"),
    [
        ("gzip, gzip", "stacked Content-Encoding 'gzip, gzip' refused"),
        ("zstd", "Content-Encoding 'zstd' refused"),
        ("br", "Content-Encoding 'br' refused"),
        ("gzip,identity,deflate", "stacked Content-Encoding 'gzip, deflate' refused"),
    ],
)
def test_stacked_and_unknown_encodings_are_refused_unread(header: str, said: str) -> None:
    with pytest.raises(EncodingRefused, match=said):
        Decoder(header, MAX_RESPONSE_BYTES)


def test_plain_gzip_and_both_deflates_decode() -> None:
    body = b'{"choices": []}' * 100
    for header, data in [
        ("gzip", gzip.compress(body)),
        ("deflate", zlib.compress(body)),
        ("deflate", _raw_deflate(body)),
        ("identity", body),
        (None, body),
    ]:
        decoder = Decoder(header, MAX_RESPONSE_BYTES)
        assert b"".join(decoder.feed(data[i : i + 7]) for i in range(0, len(data), 7)) == body


def _raw_deflate(body: bytes) -> bytes:
    z = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return z.compress(body) + z.flush()


ATTACKS = {
    "gzip-bomb": (200, "gzip", 1, f"reply larger than {MAX_RESPONSE_BYTES:,} bytes once decoded refused"),
    "gzip-gzip": (200, "gzip, gzip", 2, "stacked Content-Encoding 'gzip, gzip' refused"),
    "zstd": (200, "zstd", 1, "Content-Encoding 'zstd' refused"),
    "error-body-bomb": (500, "gzip", 1, "HTTP 500"),
}


@pytest.mark.timeout(240)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_bombs_stay_under_the_memory_cap_and_land_a_provider_failure(
    server: ChatServer, tmp_path: Path, artifacts: Path, attack: str
) -> None:
    status, header, layers, said = ATTACKS[attack]
    body = gzip_bomb(layers)
    server.push(*(Answer(status, body, {"Content-Encoding": header}) for _ in range(3)))
    code, _out, err, trace = run_cli(server, tmp_path, artifacts, f"bomb-{attack}", "--no-sandbox")
    assert code == 1 and "MemoryError" not in err and "Traceback" not in err
    run = read_run(trace)
    assert run.outcome.stop_reason == "error" and run.outcome.verdict == "provider_failure"
    assert said in (run.outcome.detail or "")
    assert "\x00" not in err  # an inflated error body of NULs is never printed raw
    if status != 200:
        assert len((run.outcome.detail or "").encode()) < MAX_ERROR_BYTES
