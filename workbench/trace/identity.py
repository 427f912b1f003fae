"""One identity per loaded run: a run_id already loaded from another file (a copied folder, the same session
exported twice) is renamed ``<run_id>~<k>`` for its k-th repeat, so joins on ``run_id`` (sweep rows to run facts,
a subagent to its session) stay one-to-one. Nothing is dropped: the corpus keeps every copy and says which
were renamed (``Corpus.renamed``).

A repeated run's ``parent_run_id`` follows the same copy: the k-th copy of a subagent links to the k-th copy of
its session when that copy exists (folders are walked in sorted order, so copies of a folder meet in step).

Call signature::

    Identities().admit(runs, path) -> list[Run]     # the file's runs, renamed where they repeat
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from workbench.trace.schema import Run

COPY_MARK = "~"


@dataclass
class Identities:
    """The run_ids seen so far while loading a corpus and how often each repeated."""

    seen: dict[str, int] = field(default_factory=dict)
    renamed: dict[str, tuple[str, Path]] = field(default_factory=dict)
    """new run_id -> (the run_id the file gave, the file)."""

    def admit_ids(self, ids: list[tuple[str, str | None]], path: Path) -> list[tuple[str, str | None]]:
        """``admit`` on (run_id, parent_run_id) pairs alone: the ids the corpus gives a file's runs."""
        if not any(rid in self.seen for rid, _ in ids):
            for rid, _ in ids:
                self.seen[rid] = 1
            return ids
        out: list[tuple[str, str | None]] = []
        for rid, parent in ids:
            k = self.seen.get(rid, 0) + 1
            self.seen[rid] = k
            if k == 1:
                out.append((rid, parent))
                continue
            new_id = f"{rid}{COPY_MARK}{k}"
            self.renamed[new_id] = (rid, path)
            out.append((new_id, parent))
        return [(rid, self._parent_of(rid, parent)) for rid, parent in out]

    def _parent_of(self, run_id: str, parent: str | None) -> str | None:
        _, mark, k = run_id.rpartition(COPY_MARK)
        if not mark or not k.isdigit() or parent is None:
            return parent
        candidate = f"{parent}{COPY_MARK}{k}"
        return candidate if candidate in self.renamed else parent

    def admit(self, runs: list[Run], path: Path) -> list[Run]:
        if not any(r.run_id in self.seen for r in runs):
            for r in runs:
                self.seen[r.run_id] = 1
            return runs
        out = []
        copy_of: dict[str, str] = {}
        for r in runs:
            k = self.seen.get(r.run_id, 0) + 1
            self.seen[r.run_id] = k
            if k == 1:
                out.append(r)
                continue
            new_id = f"{r.run_id}{COPY_MARK}{k}"
            copy_of[r.run_id] = new_id
            self.renamed[new_id] = (r.run_id, path)
            out.append(r.model_copy(update={"run_id": new_id}))
        return [self._relink(r) for r in out]

    def _relink(self, run: Run) -> Run:
        # the copy number of this run decides which copy of its parent it belongs to
        _, mark, k = run.run_id.rpartition(COPY_MARK)
        parent = run.parent_run_id
        if not mark or not k.isdigit() or parent is None:
            return run
        candidate = f"{parent}{COPY_MARK}{k}"
        if candidate in self.renamed:
            return run.model_copy(update={"parent_run_id": candidate})
        return run
