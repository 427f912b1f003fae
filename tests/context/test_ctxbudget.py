"""The context law against docs/governors.md §3.1's reference table and §5.16's tool caps."""

from __future__ import annotations

import pytest

from workbench.estimate.ctxbudget import (
    observation_bytes,
    observation_safety_bytes,
    reuse_ceiling,
    tool_caps,
)

# (W, working window B, safety window B, reuse ceiling tokens) — docs/governors.md §3.1
TABLE = [
    (None, 32_768, 32_768, 0),
    (0, 32_768, 32_768, 0),
    (8_000, 4_096, 4_096, 12_000),
    (64_000, 4_096, 4_096, 96_000),
    (117_600, 4_096, 4_096, 176_400),
    (128_000, 29_056, 29_056, 192_000),
    (144_000, 67_456, 67_456, 216_000),
    (156_000, 96_256, 96_256, 234_000),
    (160_000, 105_856, 105_856, 240_000),
    (200_000, 105_856, 201_856, 240_000),
    (1_048_576, 105_856, 2_238_436, 240_000),
    (2_000_000, 105_856, 4_521_856, 240_000),
]


@pytest.mark.parametrize(("window", "working", "safety", "reuse"), TABLE)
def test_reference_windows(window: int | None, working: int, safety: int, reuse: int) -> None:
    assert observation_bytes(window) == working
    assert observation_safety_bytes(window) == safety
    assert reuse_ceiling(window) == reuse


@pytest.mark.parametrize(
    ("window", "caps"),
    [
        (None, (12_288, 10_240, 4_096, 8_192)),
        (128_000, (10_896, 9_080, 3_632, 7_264)),
        (160_000, (39_696, 33_080, 13_232, 26_464)),
        (200_000, (39_696, 33_080, 13_232, 26_464)),
        (1_000_000, (39_696, 33_080, 13_232, 26_464)),
        (64_000, (12_288, 10_240, 4_096, 8_192)),  # share of 0 bytes: the fallback
    ],
)
def test_tool_caps(window: int | None, caps: tuple[int, int, int, int]) -> None:
    c = tool_caps(window)
    assert (c.result, c.spill, c.preview, c.recall) == caps
    assert c.max_lines == 2_000
