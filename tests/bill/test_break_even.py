"""Break-even solved along the whole mask and window axes (workbench.replay.bill_break_even;
docs/counterfactual-bills.md, "Break-even"). The real-data test skips where ../shared/traces is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

import workbench as wb
from workbench.replay.bill_break_even import WINDOW_STEP, BreakEven, axis_end, coarse_grid, solve


def test_the_coarse_grid_spans_the_axis() -> None:
    assert coarse_grid("mask", 40) == [0, 1, 2, 3, 5, 8, 13, 20, 33, 40]
    windows = coarse_grid("context_length", 100_000)
    assert windows[0] == 8192 and windows[-1] == 100_000
    assert all(w % WINDOW_STEP == 0 for w in windows[:-1])


def test_words_say_where_the_sign_changes_or_that_it_never_does() -> None:
    crossing = BreakEven("mask", "as billed", ((0, 2.0), (5, -1.0), (9, 0.0)), ((2, 3),), 9)
    assert crossing.words() == "Break-even mask size (as billed): the saving changes sign between 2 and 3"
    none = BreakEven(
        "context_length", "billed with no cache", ((8192, -3.0), (16384, -1.5), (20000, 0.0)), (), 20000
    )
    assert none.words() == (
        "Break-even context length (billed with no cache): none from 8,192 to 20,000 (a window of 20,000 is where "
        "the sweep ends: nothing is pruned there, or it is four times the longest recorded prompt): it costs more "
        "at every setting that changes the bill (2 of 3 billed), saving $-1.50 at best (16,384) and $-3.00 at "
        "worst (8,192)"
    )


@pytest.fixture(scope="module")
def eight(shared: Path):
    runs = wb.load(shared / "mini-swe-agent").runs
    return sorted(runs, key=lambda r: r.run_id)[:8]


def test_masking_every_observation_saves_and_the_sign_flips_between_2_and_3(eight) -> None:
    """On the first 8 mini-swe-agent runs (sorted by id): a mask of 0 sends no old tool result, so the prefix
    moves by one observation per call and the saving is positive; from 3 on, the re-sent window of fresh
    observations costs more than the masked tokens save; at 31 (every tool result kept) nothing changes. With no
    cache the mask saves at every size."""
    billed, uncached = solve(eight, "mask")
    assert axis_end(eight, "mask") == 31 and billed.end == 31
    assert billed.crossings == ((2, 3),)
    saving = dict(billed.grid)
    assert saving[0] > saving[1] > saving[2] > 0 > saving[3] and saving[31] == 0
    assert uncached.crossings == () and all(s > 0 for x, s in uncached.grid if x < 31)
    assert "changes sign between 2 and 3" in billed.words()
    assert uncached.words().startswith("Break-even mask size (billed with no cache): none from 0 to 31")
