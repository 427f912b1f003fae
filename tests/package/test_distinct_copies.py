"""The benchmarks' distinct copies differ from their source as documented, and only so (benchmarks/distinct_copies.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from benchmarks.distinct_copies import perturb, write_copies


def test_perturb_shifts_positive_token_counts_and_tags_texts() -> None:
    line = {
        "id": "msg_1",
        "message": {
            "usage": {"input_tokens": 10, "cache_read_input_tokens": 0, "output_tokens": 5},
            "content": [{"type": "text", "text": "hello"}, {"type": "tool_use", "input": {"cmd": "ls"}}],
        },
        "timestamp": "2025-01-01T00:00:00Z",
        "is_error": True,
        "signature": "opaque",
    }
    out = perturb(line, 3)
    assert out["message"]["usage"] == {"input_tokens": 13, "cache_read_input_tokens": 0, "output_tokens": 8}
    assert out["message"]["content"][0] == {"type": "text", "text": "hello ·3"}
    assert out["message"]["content"][1] == {"type": "tool_use", "input": {"cmd": "ls"}}
    assert (out["id"], out["timestamp"], out["is_error"], out["signature"]) == (
        "msg_1",
        "2025-01-01T00:00:00Z",
        True,
        "opaque",
    )


def test_copies_keep_layout_labels_and_unparsed_lines(tmp_path: Path) -> None:
    src = tmp_path / "src"
    (src / "logs" / "a").mkdir(parents=True)
    (src / "logs" / "a" / "report.json").write_bytes(b'{"a": {"resolved": true, "tokens": 4}}')
    (src / "run.jsonl").write_bytes(b'{"content": "x", "prompt_tokens": 7}\nnot json\n')
    out = write_copies(src, tmp_path / "out", 2)
    for i in (1, 2):
        copy = out / f"copy{i:03d}"
        assert (copy / "logs" / "a" / "report.json").read_bytes() == b'{"a": {"resolved": true, "tokens": 4}}'
        first, second = (copy / "run.jsonl").read_bytes().splitlines()
        assert orjson.loads(first) == {"content": f"x ·{i}", "prompt_tokens": 7 + i}
        assert second == b"not json"
    assert write_copies(src, tmp_path / "out", 2) == out  # a complete folder is reused, not rewritten
