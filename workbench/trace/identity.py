"""One identity per loaded run: a run_id already loaded from another file is renamed ``<run_id>~<k>`` for its k-th
repeat, so joins on ``run_id`` stay one-to-one, and a repeated subagent links to the k-th copy of its session
(docs/scale.md, "Identity"). Nothing is dropped: ``Corpus.renamed`` lists every rename.

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
        # the copy number of this run decides which copy of its parent it belongs to
        _, mark, k = run_id.rpartition(COPY_MARK)
        if not mark or not k.isdigit() or parent is None:
            return parent
        candidate = f"{parent}{COPY_MARK}{k}"
        return candidate if candidate in self.renamed else parent

    def admit(self, runs: list[Run], path: Path) -> list[Run]:
        ids = self.admit_ids([(r.run_id, r.parent_run_id) for r in runs], path)
        return [
            r
            if (rid, parent) == (r.run_id, r.parent_run_id)
            else r.model_copy(update={"run_id": rid, "parent_run_id": parent})
            for r, (rid, parent) in zip(runs, ids, strict=True)
        ]
