"""The key's redactor: every copy a leak can take is masked (exact, a cut fragment, reversed, base64 at any alignment,
hex), records keep their structure, keys too short to redact are refused, and URLs carrying credentials are refused
before anything is sent or recorded."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from workbench.context.spill import DirectorySpill
from workbench.loop.client import BadEndpoint, ChatClient, check_base_url
from workbench.loop.recorder import Recorder
from workbench.loop.secrets import (
    FRAGMENT_CHARS,
    MASK,
    MIN_KEY_CHARS,
    KeyRefused,
    RedactedSpill,
    Secret,
    key_problem,
)
from workbench.trace import read_run
from workbench.trace.schema import Event, Outcome, Run

KEY = "sk-RTKEY-7f3a9c2b1d4e5f60718293a4b5c6d7e8f9"


def leaks(text: str, key: str = KEY) -> list[str]:
    """Which of the key's forms (exact, reversed, base64, a 12-character prefix) ``text`` still holds."""
    forms = {
        "key": key,
        "reversed": key[::-1],
        "base64": base64.b64encode(key.encode()).decode().rstrip("="),
        "prefix": key[:12],
    }
    return [name for name, form in forms.items() if form in text]


def test_every_form_of_the_key_is_masked() -> None:
    secret = Secret("K", KEY)
    environ = f"HOME=/root\0OPENAI_API_KEY={KEY}\0PATH=/bin".encode()
    text = (
        f"cut: {KEY[:15]} | reversed {KEY[::-1]} | environ b64 {base64.b64encode(environ).decode()} | "
        f"urlsafe {base64.urlsafe_b64encode(b'xy' + KEY.encode()).decode()} | hex {KEY.encode().hex()} | "
        f"Bearer {KEY}."
    )
    out = secret.redact(text)
    assert leaks(out) == []
    assert out.startswith(f"cut: {MASK} | reversed {MASK} | environ b64 ") and out.endswith(f"Bearer {MASK}.")
    assert KEY.encode().hex() not in out and KEY[3:13] not in out


def test_text_without_the_key_is_untouched_and_a_short_fragment_is_kept() -> None:
    secret = Secret("K", KEY)
    text = f"the prefix sk-RTKEY is public; {KEY[: FRAGMENT_CHARS - 1]} is too short to be a leak"
    assert secret.redact(text) == text
    assert secret.redact(KEY[:FRAGMENT_CHARS]) == MASK


@settings(max_examples=80, deadline=None)
@given(
    key=st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=16,
                max_size=80),
    before=st.text(max_size=40),
    after=st.text(max_size=40),
    cut=st.integers(min_value=12, max_value=80),
    form=st.sampled_from(["key", "reversed", "base64", "prefix"]),
)  # fmt: skip
def test_property_no_form_survives_in_any_context(
    key: str, before: str, after: str, cut: int, form: str
) -> None:
    assume(key_problem(key) is None)  # a low-entropy key is refused (tests/loop/test_key_forms.py)
    secret = Secret("K", key)
    leaked = {
        "key": key,
        "reversed": key[::-1],
        "base64": base64.b64encode(key.encode()).decode(),
        "prefix": key[: min(cut, len(key))],
    }[form]
    out = secret.redact(before + leaked + after)
    assert leaks(out, key) == [] or leaks(before + after, key)  # only what the context itself held may remain


@pytest.mark.parametrize("value", ["e", "short-key", "x" * (MIN_KEY_CHARS - 1)])
def test_keys_too_short_to_redact_are_refused_naming_the_variable(value: str) -> None:
    with pytest.raises(KeyRefused) as caught:
        Secret.from_env("MY_KEY", {"MY_KEY": value})
    assert "$MY_KEY" in str(caught.value) and str(MIN_KEY_CHARS) in str(caught.value)
    if len(value) > 1:  # the message never quotes the value (a single letter is in any sentence)
        assert value not in str(caught.value).replace("$MY_KEY", "")


def test_recorder_redacts_inside_values_and_keys_keeping_the_structure(tmp_path: Path) -> None:
    secret = Secret("K", KEY)
    header = Run(
        run_id="r", source="workbench", task=f"use {KEY}", metadata={KEY: {"nested": [KEY[::-1], 3]}}
    )
    path = tmp_path / "t.jsonl"
    with Recorder(path, header, redact=secret.redact) as rec:
        rec.event(Event(turn=0, kind="note", reason=f"k={KEY[:14]}", data={"n": 1, "s": f"'{KEY}'"}))
        rec.finish(Outcome(stop_reason="done", text=f"done {base64.b64encode(KEY.encode()).decode()}"))
    run = read_run(path)
    assert run.diagnostics == []
    assert run.task == f"use {MASK}" and run.metadata == {MASK: {"nested": [MASK, 3]}}
    assert run.events[0].data == {"n": 1, "s": f"'{MASK}'"} and run.events[0].reason == f"k={MASK}"
    assert leaks(path.read_text()) == []


def test_spill_files_are_redacted(tmp_path: Path) -> None:
    store = RedactedSpill(DirectorySpill(tmp_path / ".observations"), Secret("K", KEY).redact)
    where = store.preserve("call-1", f"output with {KEY[::-1]} in it")
    assert where is not None and Path(where).read_text() == f"output with {MASK} in it"


@pytest.mark.parametrize(
    ("url", "said"),
    [
        (f"http://user:{KEY}@127.0.0.1:8080/v1", "carries credentials"),
        (f"http://{KEY}@127.0.0.1:8080/v1", "carries credentials"),
        (f"https://host.example/v1?api_key={KEY}", "query string"),
        ("127.0.0.1:8080/v1", "http:// or https://"),
        ("ftp://host/v1", "http:// or https://"),
        ("http:///v1", "with a host"),
        ("http://[::1/v1", "not a URL"),
    ],
)
def test_bad_base_urls_are_refused_without_echoing_them(url: str, said: str) -> None:
    with pytest.raises(BadEndpoint) as caught:
        check_base_url(url)
    assert said in str(caught.value) and KEY not in str(caught.value) and leaks(str(caught.value)) == []
    with pytest.raises(BadEndpoint):
        ChatClient(url, "m")


def test_a_plain_url_and_a_harmless_query_are_accepted() -> None:
    assert check_base_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/v1"
    assert check_base_url("https://x.example/openai?api-version=2024-06-01")
