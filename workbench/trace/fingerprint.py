"""A run's content fingerprint: equal for copies of a run, whatever they are named. It seeds a run's bill draws
(copies draw alike) and groups a run with its copies where the estimator study holds a run out (what is
fingerprinted, and why pickle rather than JSON: docs/scale.md, "Content fingerprints")."""

from __future__ import annotations

import hashlib
import io
import pickle
import weakref
from typing import Any

from workbench.trace.schema import Run, is_sealed

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
