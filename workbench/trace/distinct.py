"""Copies of a run answer alike: a content fingerprint of a leaf, and the distinct leaves of a list (what is
fingerprinted, why pickle rather than JSON, why the answers stay exact: docs/scale.md, "Copies computed once").

    d = distinct(runs)                      # d.uniques, d.index (per input run: its unique's position)
    d.expand(per_unique) -> list            # one item per input run
"""

from __future__ import annotations

import hashlib
import io
import pickle
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from workbench.trace.schema import Run, is_sealed

T = TypeVar("T")

IDENTITY_FIELDS = ("run_id", "parent_run_id", "source_file", "loaded_from")
"""Fields that only name where or what a run is (``loaded_from`` is never dumped: it is excluded from the schema's
serialisation)."""

# to_python's exclude: the identity fields, the file a diagnostic names, and the run a segment was cut from.
_EXCLUDE: dict[str, Any] = {
    **{name: True for name in IDENTITY_FIELDS},
    "diagnostics": {"__all__": {"file"}},
    "metadata": {"segment_of"},
}


_KNOWN: dict[int, bytes] = {}
"""Fingerprints of read-only (sealed) runs, by id, each dropped when its run is freed: a pure function of an
object that cannot change, kept as long as the object."""


def fingerprint(run: Run) -> bytes:
    """16 bytes naming the run's content: equal for runs that differ only in identity fields, different (up to
    BLAKE2b collisions) whenever anything else differs. Computed once for a run a corpus gave out."""
    got = _KNOWN.get(id(run))
    if got is not None:
        return got
    got = _fingerprint(run)
    remember(run, got)
    return got


def remember(run: Run, print_: bytes) -> None:
    """Keep ``print_`` as ``run``'s fingerprint (one the corpus index computed when its file was read), if ``run``
    is read-only; an editable run is fingerprinted on every call."""
    key = id(run)
    if is_sealed(run) and key not in _KNOWN:
        _KNOWN[key] = print_
        weakref.finalize(run, _KNOWN.pop, key, None)


def _fingerprint(run: Run) -> bytes:
    """16 bytes naming the run's content: equal for runs that differ only in identity fields, different (up to
    BLAKE2b collisions) whenever anything else differs."""
    # The context manager and the bill tell pool messages apart by object (id): a pool that holds one Message at
    # two positions is content too (empty when every position holds its own object, as every importer builds).
    first: dict[int, int] = {}
    shared = [first.setdefault(id(m), i) for i, m in enumerate(run.messages)]
    sharing = () if len(first) == len(shared) else tuple(shared)
    out = io.BytesIO()
    try:
        dump = run.__pydantic_serializer__.to_python(run, exclude=_EXCLUDE)
        pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
        # no memo: the bytes follow the values alone, not which strings happen to be shared
        pickler.fast = True
        pickler.dump((type(run).__qualname__, sharing, dump))
    except Exception:
        # content pickle cannot write (an object in metadata, a cycle): this run is never merged
        return b"unpicklable:" + id(run).to_bytes(8, "little")
    return hashlib.blake2b(out.getbuffer(), digest_size=16).digest()


@dataclass(frozen=True)
class Distinct:
    """The distinct runs of a list, in order of first appearance, and per input run the position of its
    unique (``index``)."""

    runs: tuple[Run, ...]
    uniques: tuple[Run, ...]
    index: np.ndarray = field(compare=False)

    @property
    def merged(self) -> bool:
        """Some input runs are copies (computing on ``uniques`` saves work)."""
        return len(self.uniques) < len(self.runs)

    def expand(self, per_unique: Sequence[T]) -> list[T]:
        """One item per input run: its unique's."""
        return [per_unique[k] for k in self.index]

    def rows(self, per_unique: int) -> np.ndarray:
        """Row positions into a table of ``per_unique`` rows per unique (unique-major) that give the same
        table per input run."""
        return (self.index[:, None] * per_unique + np.arange(per_unique, dtype=np.int64)[None, :]).ravel()


def distinct(runs: Sequence[Run]) -> Distinct:
    """The distinct runs of ``runs`` by content (``fingerprint``)."""
    runs = tuple(runs)
    of = fingerprint
    first: dict[bytes, int] = {}
    uniques: list[Run] = []
    index = np.empty(len(runs), dtype=np.int64)
    for i, run in enumerate(runs):
        key = of(run)
        k = first.get(key)
        if k is None:
            k = first[key] = len(uniques)
            uniques.append(run)
        index[i] = k
    return Distinct(runs, tuple(uniques), index)
