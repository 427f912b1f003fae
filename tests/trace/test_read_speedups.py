"""The faster reading paths give exactly what the slower ones gave: a small file cut at its newlines yields the
lines ``readline`` would, the bracket count never passes a record the nesting walk refuses, and a read with the
collector paused leaves the collector as it found it."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.trace.limits import _cut, bounded_lines, file_lines, nesting, too_deep

_BYTES = st.lists(st.sampled_from([b"\n", b" ", b"\t", b"\r", b"\x0b", b"\x0c", b"a", b"{}", b"\xff"])).map(
    b"".join
)


@settings(max_examples=300, deadline=None)
@given(_BYTES)
def test_cut_lines_equal_bounded_lines(data: bytes) -> None:
    assert list(_cut(data)) == list(bounded_lines(io.BytesIO(data)))


@settings(max_examples=50, deadline=None)
@given(_BYTES)
def test_file_lines_equal_bounded_lines(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("lines") / "f.jsonl"
    path.write_bytes(data)
    with open(path, "rb") as a, open(path, "rb") as b:
        assert list(file_lines(a)) == list(bounded_lines(b))


_JSON = st.recursive(
    st.none()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.text(alphabet='{}[]ab"\\', max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet="{[x", max_size=3), inner, max_size=3)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None)
@given(_JSON, st.integers(min_value=0, max_value=6))
def test_the_bracket_count_agrees_with_the_nesting_walk(value: object, limit: int) -> None:
    raw = orjson.dumps(value)
    assert too_deep(raw, value, limit) == (nesting(value, limit) > limit)
    assert too_deep(raw.decode(), value, limit) == (nesting(value, limit) > limit)


def test_a_file_that_grows_past_the_limit_is_read_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import workbench.trace.limits as limits

    path = tmp_path / "f.jsonl"
    path.write_bytes(b'{"a": 1}\n' + b"x" * 40 + b"\n")
    monkeypatch.setattr(limits, "MAX_LINE_BYTES", 20)  # the file is now longer than a line may be
    with open(path, "rb") as fh:
        got = list(file_lines(fh))
    assert got[0] == (1, b'{"a": 1}\n') and isinstance(got[1][1], limits.TooLong)
