"""A first (cold) load gives out runs that hold no more than a later load's: the file's facts are read from the runs
as parsed, not from the runs given out. Fingerprinting a run pickles its text, and CPython keeps the UTF-8 form of
every pickled ``str`` that is not pure ASCII with the string (``sys.getsizeof`` counts it): read from the runs given
out, the facts made a cold load of the shared traces' 125 runs hold 13 MB more than a warm one."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

from workbench.scale import load
from workbench.scenarios.seed import mixed_run
from workbench.trace.native import write_run
from workbench.trace.schema import Run


def _texts(runs: list[Run]) -> Iterator[str]:
    for run in runs:
        for m in run.messages:
            if isinstance(m.content, str):
                yield m.content
        for t in run.turns:
            yield from (r.content for r in t.tool_results if isinstance(r.content, str))


def _non_ascii(run: Run) -> Run:
    """``run`` with every message's and result's text made not pure ASCII (where CPython keeps a UTF-8 copy)."""
    messages = [m.model_copy(update={"content": f"{m.content} — ✓ naïve"}) for m in run.messages]
    return run.model_copy(update={"messages": messages})


def test_a_cold_load_gives_out_runs_without_utf8_copies(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    for seed in range(3):
        write_run(_non_ascii(mixed_run(seed)), folder / f"run{seed}.jsonl")
    cache = tmp_path / "cache"
    for attempt in ("cold", "warm"):
        runs = list(load(folder, cache_dir=cache).runs)
        texts = [s for s in _texts(runs) if not s.isascii()]
        assert len(texts) > 20, attempt
        # a fresh string of the same text has no UTF-8 copy: equal sizes mean the loaded one has none either
        kept = [s for s in texts if sys.getsizeof(s) != sys.getsizeof((s + "x")[:-1])]
        assert kept == [], (attempt, len(kept), len(texts))
