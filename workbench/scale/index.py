"""The corpus index: what ``workbench.load`` needs of a folder's files without building a Run — per cached file its
facts (ids, fingerprints, the sweep's sheet of its leaves), and per set of paths loaded the path index (each file's
signature and cache key, and every file's facts gathered as two memory-mapped Arrow tables), so an unchanged folder
loads as one read (docs/scale.md, "The corpus index")."""

from __future__ import annotations

import hashlib
import os
import pickle
import platform
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from workbench.scale import entry as entries
from workbench.trace.schema import Run

CACHE_FORMAT = 4  # 4: models pickled with shared field-name sets (scale.pickling); 3: entries sealed
"""Bumped when an entry's layout changes."""
INDEX_FORMAT = 3  # 3: sealed header naming its tables' SHA-256s (workbench.scale.entry)
"""Bumped when the index's or the facts' layout changes."""


SHEET_SOURCES = (
    "replay/fast.py",
    "replay/sheet.py",
    "replay/facts.py",
    "replay/censoring.py",
    "replay/engine.py",
    "trace/fingerprint.py",
)
"""The modules a sheet's reading and a fingerprint come from (with the whole governor package), under workbench/."""


@cache
def code_key() -> str:
    """A hash of everything that decides what a file loads as: the importers', the schema's, the native
    reader's, the read limits' and the labels' source, and the pydantic and Python versions (a pickled Run is
    only read back by the same)."""
    import pydantic

    import workbench.importers as importers_pkg

    h = hashlib.blake2b(digest_size=16)
    package = Path(__file__).resolve().parents[1]  # workbench/
    trace = package / "trace"
    sources = sorted(Path(importers_pkg.__file__).resolve().parent.glob("*.py"))
    sources += [trace / "schema.py", trace / "native.py", trace / "errors.py", package / "scale" / "cache.py"]
    sources += [package / "scale" / "pickling.py"]
    sources += [trace / "limits.py", package / "labels.py", package / "label_files.py"]
    for src in sources:
        h.update(src.name.encode())
        h.update(src.read_bytes())
    h.update(f"{CACHE_FORMAT}|{pydantic.VERSION}|{platform.python_version()}".encode())
    return h.hexdigest()


@cache
def facts_key() -> str:
    """A hash of the code a file's facts depend on beyond its importer: the governor package and the replay
    modules that read a sheet (``SHEET_SOURCES``), and this module (the layout)."""
    h = hashlib.blake2b(digest_size=12)
    h.update(f"{code_key()}|{INDEX_FORMAT}".encode())
    package = Path(__file__).resolve().parents[1]  # workbench/ (its packages read as files, not imported)
    sources = sorted((package / "govern").glob("*.py"))
    sources += [package / name for name in SHEET_SOURCES]
    for src in sources:
        h.update(src.name.encode())
        h.update(src.read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


@dataclass(frozen=True)
class FileFacts:
    """What the corpus needs of one file's runs without building them."""

    runs: tuple[tuple[str, str | None, str, int], ...]
    """Per run: its id as the file gives it, its parent's id, its role, its segment count."""
    leaf_run: np.ndarray
    """Per leaf: the place of its run among the file's runs."""
    leaf_suffix: tuple[str, ...]
    """Per leaf: what its id adds to its run's (``#s<k>`` for a session's segment, else "")."""
    sheet: dict[str, Any]
    """The leaves' sheet under the default guard settings (``Sheet.columns()``)."""
    leaf_prints: tuple[bytes, ...]
    """Per leaf: its content fingerprint (``workbench.trace.fingerprint.fingerprint``)."""

    @classmethod
    def of(cls, runs: list[Run]) -> FileFacts:
        from workbench.govern.policy import Policy
        from workbench.replay.fast import read_sheet
        from workbench.trace.fingerprint import fingerprint

        leaves: list[Run] = []
        owner: list[int] = []
        suffix: list[str] = []
        for i, r in enumerate(runs):
            for leaf in r.leaves():
                leaves.append(leaf)
                owner.append(i)
                suffix.append(leaf.run_id[len(r.run_id) :])
        return cls(
            runs=tuple((r.run_id, r.parent_run_id, r.role, len(r.segments)) for r in runs),
            leaf_run=np.asarray(owner, dtype=np.int64),
            leaf_suffix=tuple(suffix),
            sheet=read_sheet(leaves, Policy.named("current")).columns(),
            leaf_prints=tuple(fingerprint(leaf) for leaf in leaves),
        )


def stat_sig(path: Path) -> tuple[int, int, int, int] | None:
    """What says a file is unchanged since it was last read: size, modification time, inode, change time."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


@dataclass(frozen=True)
class Indexed:
    """One file as the path index last saw it."""

    sig: tuple[int, int, int, int]
    key: str
    deps: tuple[tuple[str, tuple[int, int, int, int] | None], ...]
    """The other files its importer reads, and their signatures then (``dependencies``)."""


@dataclass
class PathIndex:
    """The index of one set of paths (see the module docstring)."""

    files: dict[str, Indexed]
    order: list[str]
    facts: dict[str, Any] | None
    """Every indexed file's facts in ``order``: ``runs``, ``leaf_run``, ``leaf_suffix``,
    ``leaf_prints``, ``sheet``, and
    ``run_counts``/``leaf_counts`` per file. Stored as two Arrow IPC files beside the index (``runs`` and
    ``leaves``, named by ``token``) and read back memory-mapped."""
    token: str = ""
    digests: dict[str, str] = field(default_factory=dict)
    """The SHA-256 of each Arrow table (``runs``, ``leaves``): checked before a table is mapped, so an edited but
    valid sheet is a miss, never a different sweep."""
    skipped: dict[str, tuple[tuple[int, int, int, int], str]] = field(default_factory=dict)
    """Files found by walking a folder that no importer reads (a grader's results, notes), by path: their
    signature when last looked at and why they were skipped — an unchanged one is not opened again."""

    def unchanged(self, path: str) -> Indexed | None:
        got = self.files.get(path)
        if got is None or stat_sig(Path(path)) != got.sig:
            return None
        if any(stat_sig(Path(d)) != sig for d, sig in got.deps):
            return None
        return got

    def still_skipped(self, path: str) -> str | None:
        """Why an unchanged file was skipped when last looked at (``None``: look at it)."""
        got = self.skipped.get(path)
        if got is None or stat_sig(Path(path)) != got[0]:
            return None
        return got[1]


def index_path(root: Path, paths: tuple[str, ...], options: str) -> Path:
    h = hashlib.blake2b(digest_size=16)
    for p in paths:
        h.update(os.path.abspath(os.path.expanduser(p)).encode() + b"\0")
    h.update(options.encode())
    return root / "index" / facts_key() / f"{h.hexdigest()}.pickle"


def _table_path(target: Path, token: str, name: str) -> Path:
    return target.with_name(f"{target.stem}.{token}.{name}.arrow")


def _read_header(target: Path) -> PathIndex | None:
    """The index header at ``target``: ``None`` when absent; :class:`~workbench.scale.entry.Damaged` when not
    ours, damaged, undecodable or not an index."""
    data = entries.read_sealed(target)
    if data is None:
        return None
    try:
        got = pickle.loads(data)  # only after read_sealed: ours, and whole
    except Exception as exc:
        raise entries.Damaged(f"cannot be decoded ({type(exc).__name__})") from exc
    if not isinstance(got, PathIndex):
        raise entries.Damaged("does not hold a path index (schema mismatch)")
    return got


def read_index(target: Path) -> PathIndex | None:
    """The path index at ``target``, its Arrow tables checked against their digests and mapped; ``None`` (a miss)
    when absent or not usable, said in one line naming the entry (it is rewritten)."""
    where = target
    try:
        got = _read_header(target)
        if got is None:
            return None
        if got.token and got.facts is not None:
            tables = {}
            for name in ("runs", "leaves"):
                where = _table_path(target, got.token, name)
                if entries.digest_of(where) != got.digests.get(name):
                    raise entries.Damaged("does not match its checksum")
                tables[name] = _read_table(where)
            where = target
            got.facts = _from_arrow(got.facts, tables["runs"], tables["leaves"])
        return got
    except entries.Damaged as exc:
        entries.warn(where, exc)
        return None
    except Exception as exc:  # a table of the right digest that still does not read (a schema change)
        entries.warn(where, f"cannot be decoded ({type(exc).__name__})")
        return None


def _read_table(path: Path) -> Any:
    import pyarrow as pa

    with pa.memory_map(str(path), "r") as source:
        return pa.ipc.open_file(source).read_all()


def write_index(target: Path, index: PathIndex) -> None:
    """The index, atomically: its two Arrow tables first (under a fresh token), then the sealed header naming
    them and their digests; the tables of the index it replaces are removed after."""
    import pyarrow as pa

    try:
        entries.make_folder(target.parent)
        previous = read_token(target)
        header = PathIndex(index.files, index.order, None, skipped=index.skipped)
        if index.facts is not None:
            token = os.urandom(6).hex()
            small, tables = _to_arrow(index.facts)
            digests = {}
            for name, table in tables.items():

                def write(tmp: str, table: Any = table) -> None:
                    with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
                        out.write_table(table)

                path = _table_path(target, token, name)
                entries.atomic(path, write)
                digests[name] = entries.digest_of(path)
            header = PathIndex(
                index.files, index.order, small, token=token, digests=digests, skipped=index.skipped
            )
        entries.write_sealed(target, pickle.dumps(header, protocol=pickle.HIGHEST_PROTOCOL))
        if previous:
            for name in ("runs", "leaves"):
                _table_path(target, previous, name).unlink(missing_ok=True)
    except (OSError, entries.Damaged):
        pass  # a read-only or full cache only costs speed


def read_token(target: Path) -> str:
    try:
        got = _read_header(target)
    except entries.Damaged:
        return ""
    return got.token if got is not None else ""


_RAGGED_SUFFIX = (".values", ".lengths")


def _to_arrow(facts: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The gathered facts as (what stays in the pickled header: the per-file counts and order) and two Arrow
    tables: ``runs`` (id, parent, role, segments) and ``leaves`` (its run, id suffix, and the sheet: one column per
    scalar, one list column per ragged field)."""
    import pyarrow as pa

    runs = facts["runs"]
    runs_table = pa.table(
        {
            "run_id": pa.array([r[0] for r in runs], type=pa.string()),
            "parent_run_id": pa.array([r[1] for r in runs], type=pa.string()),
            "role": pa.array([r[2] for r in runs], type=pa.string()),
            "segments": pa.array([r[3] for r in runs], type=pa.int64()),
        }
    )
    cols: dict[str, Any] = {
        "leaf_run": pa.array(facts["leaf_run"], type=pa.int64()),
        "leaf_suffix": pa.array(facts["leaf_suffix"], type=pa.string()),
        "leaf_print": pa.array(facts["leaf_prints"], type=pa.binary()),
    }
    sheet = facts["sheet"]
    for name, values in sheet.items():
        if name.endswith(".lengths"):
            continue
        if name.endswith(".values"):
            base = name[: -len(".values")]
            lengths = np.asarray(sheet[f"{base}.lengths"], dtype=np.int64)
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            cols[f"list:{base}"] = pa.LargeListArray.from_arrays(
                pa.array(offsets, type=pa.int64()), pa.array(values, type=pa.int64())
            )
        elif values.dtype == object:
            cols[name] = pa.array(list(values), type=pa.string())
        else:
            cols[name] = pa.array(values)
    small = {k: facts[k] for k in ("run_counts", "leaf_counts", "order")}
    return small, {"runs": runs_table, "leaves": pa.table(cols)}


def _from_arrow(small: dict[str, Any], runs: Any, leaves: Any) -> dict[str, Any]:
    def column(table: Any, name: str) -> Any:
        col = table.column(name)
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()

    def strings(table: Any, name: str) -> list[Any]:
        values: list[Any] = column(table, name).to_pylist()
        return values

    facts = dict(small)
    facts["runs"] = list(
        zip(
            strings(runs, "run_id"),
            strings(runs, "parent_run_id"),
            strings(runs, "role"),
            column(runs, "segments").to_numpy().tolist(),
            strict=True,
        )
    )
    facts["leaf_run"] = column(leaves, "leaf_run").to_numpy()
    facts["leaf_suffix"] = strings(leaves, "leaf_suffix")
    facts["leaf_prints"] = strings(leaves, "leaf_print")
    sheet: dict[str, Any] = {}
    for name in leaves.column_names:
        if name in ("leaf_run", "leaf_suffix", "leaf_print"):
            continue
        arr = column(leaves, name)
        if name.startswith("list:"):
            base = name[len("list:") :]
            offsets = arr.offsets.to_numpy()
            sheet[f"{base}.values"] = arr.values.to_numpy()  # a view of the memory-mapped file
            sheet[f"{base}.lengths"] = np.diff(offsets)
        elif arr.type == "string" or str(arr.type) == "string":
            values = np.empty(len(arr), dtype=object)
            values[:] = arr.to_pylist()
            sheet[name] = values
        else:
            sheet[name] = arr.to_numpy(zero_copy_only=False)
    facts["sheet"] = sheet
    return facts


def gather(order: list[str], facts: list[FileFacts]) -> dict[str, Any]:
    """Files' facts, one after another, as the index keeps them."""
    from workbench.replay.sheet import Sheet

    sheets = [Sheet.from_columns((), f.sheet) for f in facts]
    return {
        "runs": [r for f in facts for r in f.runs],
        "run_counts": np.asarray([len(f.runs) for f in facts], dtype=np.int64),
        "leaf_counts": np.asarray([len(f.leaf_suffix) for f in facts], dtype=np.int64),
        "leaf_run": np.concatenate([f.leaf_run for f in facts]) if facts else np.zeros(0, np.int64),
        "leaf_suffix": [s for f in facts for s in f.leaf_suffix],
        "leaf_prints": [p for f in facts for p in f.leaf_prints],
        "sheet": Sheet.concat(sheets, ()).columns(),
        "order": list(order),
    }


__all__ = ["FileFacts", "Indexed", "PathIndex", "facts_key", "gather", "stat_sig"]
