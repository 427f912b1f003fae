"""The corpus as calibration evidence: replayable leaves, each in one outcome group (resolved, unresolved,
finished, cut, failed, open; docs/calibrate.md, "The evidence"), with its recorded bill."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.govern.cost import CACHED_TOKEN_WEIGHT_PERCENT, Totals
from workbench.replay.censoring import GOOD_LABELS, finished_on_own
from workbench.trace.schema import Run

POSITIVE = ("resolved", "finished")
NEGATIVE = ("unresolved", "cut", "failed")
GROUPS = (*POSITIVE, *NEGATIVE, "open")
SKIPPED_ROLES = frozenset({"compaction"})  # a compaction call summarises another run's transcript
MIN_RUNS = 10
"""Workbench choice: no recommendation rests on fewer runs than this (below it a row says "not enough data")."""


def group_of(run: Run) -> str:
    label = run.outcome.label
    if label is not None:
        return "resolved" if label in GOOD_LABELS else "unresolved"
    if run.outcome.cut_by_limit:
        return "cut"
    if not finished_on_own(run):
        return "open"
    return "finished" if run.outcome.stop_reason in (None, "done") else "failed"


@dataclass(frozen=True)
class Leaf:
    """One replayable leaf: the run, its outcome group and its cost-meter bill after each call."""

    run: Run
    group: str
    spent: tuple[int, ...]

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def calls(self) -> int:
        return len(self.run.turns)

    @property
    def positive(self) -> bool:
        return self.group in POSITIVE

    @property
    def censored(self) -> bool:
        """The recording did not show the run finish (cut by a limit, or stopped mid-work)."""
        return self.group in ("cut", "open")

    def crossing(self, grant: int) -> int | None:
        """The 0-based call whose bill first reaches ``grant`` (the call after which a landing is ordered)."""
        return next((i for i, s in enumerate(self.spent) if s >= grant), None)


def _bills(run: Run, weight: int) -> tuple[int, ...]:
    totals = Totals()
    out = []
    for t in run.turns:
        totals = totals.add(t.usage.prompt, t.usage.cached, t.usage.completion)
        out.append(totals.spent(weight))
    return tuple(out)


def leaves_of(runs: Iterable[Run]) -> tuple[list[Run], dict[str, int]]:
    """The replayable leaves of ``runs`` (sessions split at user prompts; compaction calls and runs with no
    calls left out) and what was left out, by reason."""
    out: list[Run] = []
    skipped: Counter[str] = Counter()
    for run in runs:
        if run.role in SKIPPED_ROLES:
            skipped[run.role] += 1
            continue
        if not run.turns:
            skipped["no calls"] += 1
            continue
        out.extend(leaf for leaf in run.leaves() if leaf.turns)
    return out, dict(skipped)


@dataclass(frozen=True)
class Evidence:
    """The leaves a calibration reads, grouped by outcome."""

    leaves: tuple[Leaf, ...]
    skipped: tuple[tuple[str, int], ...] = ()

    @classmethod
    def of(cls, runs: Any, weight_percent: int = CACHED_TOKEN_WEIGHT_PERCENT) -> Evidence:
        """From a Corpus, or any iterable of Runs."""
        leaves, skipped = leaves_of(getattr(runs, "runs", runs))
        out = tuple(Leaf(r, group_of(r), _bills(r, weight_percent)) for r in leaves)
        return cls(out, tuple(sorted(skipped.items())))

    def where(self, *groups: str) -> list[Leaf]:
        return [leaf for leaf in self.leaves if leaf.group in groups]

    @property
    def positives(self) -> list[Leaf]:
        return self.where(*POSITIVE)

    @property
    def negatives(self) -> list[Leaf]:
        return self.where(*NEGATIVE)

    @property
    def counts(self) -> dict[str, int]:
        c = Counter(leaf.group for leaf in self.leaves)
        return {g: c.get(g, 0) for g in GROUPS}

    @property
    def calls(self) -> int:
        return sum(leaf.calls for leaf in self.leaves)

    @property
    def uses_finished(self) -> bool:
        """Some positive runs are unlabelled: "finished" stands in for "resolved"."""
        return self.counts["finished"] > 0

    def positive_words(self) -> str:
        """What the positive runs are, in words (``60 resolved``, ``60 resolved + 26 finished``)."""
        return self._words(POSITIVE, "no positive runs")

    def _words(self, groups: tuple[str, ...], none: str) -> str:
        c = self.counts
        return " + ".join(f"{c[g]} {g}" for g in groups if c[g]) or none

    def describe(self) -> str:
        c = self.counts
        words = (
            f"{len(self.leaves)} leaves, {self.calls:,} calls: positive {self.positive_words()}; "
            f"negative {self._words(NEGATIVE, 'no negative runs')}"
        )
        if c["open"]:
            words += f"; {c['open']} open (recording ended mid-work: neither)"
        if self.uses_finished:
            words += "; unlabelled runs read 'finished' in place of 'resolved'"
        return words

    def by_id(self) -> dict[str, Leaf]:
        return {leaf.run_id: leaf for leaf in self.leaves}
