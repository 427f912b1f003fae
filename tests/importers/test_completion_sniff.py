"""An OpenHands completion log is told by the skeleton of its head (``openhands_completions.is_log``); a head whose
first key no completion log writes, and that does not even spell two of the keys only such a log writes, is answered
without building the skeleton. The answer is always the skeleton's: ``by_skeleton``, the rule itself, is held
equal to it on random heads (whole and cut, with escapes and look-alike keys in strings), on every sample
format's files and on the shared traces."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.samples import write_sized
from workbench.importers._common import read_prefix
from workbench.importers.openhands_completions import (
    CHAT_MESSAGE_KEYS,
    LOG_KEYS,
    MARK_KEYS,
    by_skeleton,
    is_log,
)
from workbench.paths import shared_traces

KEYS = sorted(LOG_KEYS | CHAT_MESSAGE_KEYS | {"info", "trajectory_format", "model_stats", "exit_status"})
TEXT = st.sampled_from(
    [*KEYS, *(f'"{k}": 1' for k in sorted(MARK_KEYS)), 'a\\"b', "x\\\ny", "{[", "]}", "—é"]
)
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), TEXT, st.text(max_size=8))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=4)), inner, max_size=5),
    ),
    max_leaves=25,
)


@st.composite
def heads(draw: st.DrawFn) -> bytes:
    doc = draw(st.dictionaries(st.sampled_from(KEYS), VALUES, min_size=1, max_size=6))
    text = json.dumps(doc, ensure_ascii=draw(st.booleans()), indent=draw(st.sampled_from([None, 1]))).encode()
    text = draw(st.sampled_from([b"", b" \n", b"\t"])) + text
    cut = draw(st.integers(min_value=0, max_value=len(text)))
    return text[: max(cut, 1)] if draw(st.booleans()) else text


@settings(max_examples=600, deadline=None)
@given(heads())
def test_the_answer_is_the_skeletons_on_random_heads(prefix: bytes) -> None:
    assert is_log(prefix) == by_skeleton(prefix)


@given(st.binary(max_size=300))
def test_the_answer_is_the_skeletons_on_any_bytes(prefix: bytes) -> None:
    assert is_log(b'{"info": ' + prefix) == by_skeleton(b'{"info": ' + prefix)
    assert is_log(prefix) == by_skeleton(prefix)


def test_a_log_whose_first_key_is_another_formats_is_still_a_log() -> None:
    log = {"info": 1, "kwargs": {}, "messages": [{"role": "user", "content": "hi"}], "latency_sec": 0.5}
    prefix = json.dumps(log).encode()
    assert is_log(prefix) and by_skeleton(prefix)
    # a mini-swe-agent trajectory opens with "info" and spells no such key: answered early, as the skeleton would
    traj = json.dumps({"info": {"exit_status": "Submitted"}, "messages": [{"role": "user", "content": "hi"}]})
    assert not is_log(traj.encode()) and not by_skeleton(traj.encode())


def test_the_answer_is_the_skeletons_on_every_sample_and_shared_file(tmp_path: Path) -> None:
    files = write_sized(tmp_path, 3)
    root = shared_traces()
    if root is not None and root.is_dir():
        files += sorted(p for p in root.rglob("*") if p.is_file())
    assert files
    for path in files:
        prefix = read_prefix(path)
        assert is_log(prefix) == by_skeleton(prefix), path


@pytest.mark.parametrize("first", sorted(LOG_KEYS))
def test_a_first_key_a_log_writes_always_reads_the_skeleton(first: str) -> None:
    prefix = json.dumps({first: 1, "messages": [{"role": "user", "content": "x"}], "kwargs": {}}).encode()
    assert is_log(prefix) == by_skeleton(prefix)
