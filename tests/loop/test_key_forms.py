"""Red team: the key in forms an exact matcher misses (upper-cased, spread by zero-width characters or spaces,
URL-encoded), echoed by the model into a tool's arguments, or too plain to redact. Each control shows the form
holds no exact copy or fragment of the key, so a redactor without the fix leaves it."""

from __future__ import annotations

import asyncio
import base64
import urllib.parse
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.loop.secrets import FRAGMENT_CHARS, MASK, KeyRefused, Secret
from workbench.loop.tools import Toolbox
from workbench.loop.workspace import Workspace
from workbench.trace.schema import ToolCall

# A key whose base64 holds '+' and '/' (so its URL-encoded base64 holds %2B and %2F).
KEY = "sk-proj-" + "".join(chr(c) for c in b">?>?") + "7f3a9c2b1d4e5f60718293a4b5"


def _fragments(key: str) -> list[str]:
    return [key[i : i + FRAGMENT_CHARS] for i in range(len(key) - FRAGMENT_CHARS + 1)]


FORMS = {
    "upper": lambda k: k.upper(),
    "zero-width": lambda k: "\u200b".join(k),
    "spaces": lambda k: " ".join(k),
    "word-joiner+soft-hyphen": lambda k: "".join(
        c + ("\u2060" if i % 2 else "\u00ad") for i, c in enumerate(k)
    ),
    "url-encoded": lambda k: urllib.parse.quote(k, safe=""),
    "url-encoded-all": lambda k: "".join(f"%{b:02X}" for b in k.encode()),
    "base64-url-encoded": lambda k: urllib.parse.quote(base64.b64encode(k.encode()).decode(), safe=""),
    "upper-in-307-body": lambda k: f"<html>Moved: Authorization: BEARER {k.upper()}</html>",
}


@pytest.mark.parametrize("form", sorted(FORMS))
def test_every_form_is_masked(form: str) -> None:
    b64 = base64.b64encode(KEY.encode()).decode()
    assert "+" in b64 or "/" in b64  # the key was chosen so its base64 needs URL-encoding
    leaked = FORMS[form](KEY)
    out = Secret("K", KEY).redact(f"before {leaked} after")
    assert MASK in out and out.startswith("before ") and out.endswith(" after")
    bare = "".join(ch for ch in out if ch.isalnum()).lower()
    assert not any(
        "".join(ch for ch in f if ch.isalnum()).lower() in bare
        for f in _fragments(KEY)
        if sum(ch.isalnum() for ch in f) >= 8
    )
    # control: the form holds no exact fragment of the key (an exact matcher would keep it)
    if form == "base64-url-encoded":
        assert b64.rstrip("=") not in leaked
    elif form != "url-encoded":  # (quote() leaves the key's alphanumeric tail as it is)
        assert not any(f in leaked for f in _fragments(KEY))


def test_ordinary_text_around_is_untouched() -> None:
    secret = Secret("K", KEY)
    text = "id=1000000000000000000000000 path%2Fto%2Ffile A B C D E F G H I J K L M N O P"
    assert secret.redact(text) == text


@pytest.mark.parametrize(
    "value", ["0" * 25, "ab" * 12, "abcabcabcabcabcabc", "sk-0000000000000000000000abcdef12"]
)
def test_low_entropy_keys_are_refused_like_short_ones(value: str) -> None:
    with pytest.raises(KeyRefused, match=r"\$K holds a key .* cannot be kept out of the trace safely"):
        Secret("K", value)


def test_control_a_zero_key_would_redact_ordinary_output() -> None:
    """Why such a key is refused: matched, its windows are everywhere (the reported `id=1[redacted]`)."""
    assert "0" * FRAGMENT_CHARS in "id=10000000000000000000000000"


@pytest.mark.timeout(30)
def test_a_key_in_a_tool_argument_is_replaced_before_the_tool_runs(tmp_path: Path) -> None:
    secret = Secret("K", KEY)
    box = Toolbox(Workspace(tmp_path / "ws"), sandbox=None, redact=secret.redact)
    calls = [
        ToolCall(
            id="s",
            name="sh",
            arguments=orjson.dumps(
                {"command": f"echo '{KEY}' > leaked.txt; echo {KEY.upper()} >> leaked.txt"}
            ).decode(),
        ),
        ToolCall(id="w", name="write", arguments=orjson.dumps({"path": "w.txt", "content": KEY}).decode()),
    ]
    asyncio.run(box.run_batch(calls))
    written = (box.workspace.root / "leaked.txt").read_text()
    assert KEY not in written and KEY.upper() not in written and written.count(MASK) == 2
    assert (box.workspace.root / "w.txt").read_text() == MASK
    # control: without a redactor the command writes the key into the workspace verbatim
    plain = Toolbox(Workspace(tmp_path / "ws2"), sandbox=None)
    asyncio.run(plain.run_batch(calls[:1]))
    assert KEY in (plain.workspace.root / "leaked.txt").read_text()


@settings(max_examples=60, deadline=None)
@given(
    key=st.text(
        alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=16, max_size=60
    ),
    sep=st.sampled_from(["", " ", "\u200b", "\u200d", "\ufeff", "\u2060", "\t"]),
    upper=st.booleans(),
    encode=st.booleans(),
)
def test_property_spread_cased_or_encoded_copies_are_masked(
    key: str, sep: str, upper: bool, encode: bool
) -> None:
    try:
        secret = Secret("K", key)
    except KeyRefused:
        return
    form = key.upper() if upper else key
    form = "".join(f"%{ord(c):02x}" for c in form) if encode else form
    form = sep.join(form) if sep and not encode else form
    assert secret.redact(f"<{form}>") == f"<{MASK}>"
