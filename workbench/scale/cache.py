"""The corpus cache: what an importer made of a file (its runs, pickled, and its facts), kept once per file content
and reading code, so a folder loads a second time without parsing its files again: where it lives, its key, what
may be cached and its entries are described in docs/scale.md ("the corpus cache").

Call signatures::

    cache_dir() -> Path
    FileCache(root).load_file(path, key=None) -> list[Run]          # through the cache
    FileCache(root).facts(path, module=None, key=None, keep_runs=True) -> Found   # the one miss path of facts
"""

from __future__ import annotations

import hashlib
import os
import pickle
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from workbench.format import printable
from workbench.scale import entry as entries
from workbench.scale.index import CACHE_FORMAT, FileFacts, code_key, facts_key  # noqa: F401  (CACHE_FORMAT: named here too)
from workbench.scale.pickling import dumps
from workbench.trace.schema import Run

_CHUNK = 1 << 20


def cache_dir() -> Path:
    """Where entries live (never beside the inputs)."""
    env = os.environ.get("WORKBENCH_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "budget-workbench"


def cache_enabled() -> bool:
    return os.environ.get("WORKBENCH_CACHE", "on").lower() not in {"0", "off", "no", "false"}


def cacheable(module: Any) -> bool:
    """Whether an importer's answer for a file may be cached: it reads only that file (``CACHEABLE = True``)
    or names every other file it reads (``dependencies(path)``). An importer that says neither — one that may
    read results files or sessions beside its file — is read every time: a stale answer costs more than a parse."""
    return getattr(module, "CACHEABLE", False) is True or callable(getattr(module, "dependencies", None))


def file_key(path: Path, module: Any = None) -> str:
    """SHA-256 of the file's bytes (of a folder run, of everything under it: :func:`_hash_folder`), then a hash
    of its absolute path (importers record where a run was read: ``Run.source_file``, diagnostics' ``file``, so a
    copy elsewhere is an entry of its own) and of the size and modification time of every other file the importer
    says it reads (``dependencies(path)``). For a file, the part before the ``-`` is its plain SHA-256
    (:func:`content_digest`)."""
    h = hashlib.sha256()
    if path.is_dir():
        _hash_folder(h, path)
    else:
        _hash_bytes(h, path)
    where = hashlib.blake2b(str(path.resolve()).encode(), digest_size=8)
    deps = getattr(module, "dependencies", None)
    if callable(deps):
        for dep in sorted(str(d) for d in deps(path)):
            try:
                st = os.stat(dep)
                where.update(f"{dep}|{st.st_size}|{st.st_mtime_ns}".encode())
            except OSError:
                where.update(f"{dep}|absent".encode())
    return f"{h.hexdigest()}-{where.hexdigest()}"


def content_digest(key: str) -> str:
    """The content half of a :func:`file_key`: a file's SHA-256, hex."""
    return key.partition("-")[0]


def _hash_bytes(h: Any, path: Path | str) -> None:
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)


def _hash_folder(h: Any, folder: Path) -> None:
    """A folder that is one run (an OpenHands conversation): every entry under it in sorted order — each
    folder by its path relative to this one (an empty folder can decide what is read: the first completions
    folder present wins), each file by its path and bytes — so an edited, added, removed or renamed entry is a
    miss. Links are followed as the importer follows them (a folder reached twice is walked once); an entry
    that is not a regular file (a FIFO, a socket) is keyed by its name and kind, never opened."""
    seen: set[tuple[int, int]] = set()
    for root, dirs, files in os.walk(folder, followlinks=True):
        st = os.stat(root)
        if (st.st_dev, st.st_ino) in seen:
            dirs.clear()
            continue
        seen.add((st.st_dev, st.st_ino))
        dirs.sort()
        h.update(f"\0{os.path.relpath(root, folder)}\0dir".encode())
        for name in sorted(files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, folder)
            try:
                mode = os.stat(full).st_mode
            except OSError:
                h.update(f"\0{rel}\0absent".encode())  # a dangling link
                continue
            if stat.S_ISREG(mode):
                h.update(f"\0{rel}\0file\0{os.path.getsize(full)}\0".encode())
                _hash_bytes(h, full)
            else:
                h.update(f"\0{rel}\0{stat.S_IFMT(mode)}".encode())


class Found(NamedTuple):
    """What :meth:`FileCache.facts` found of a file: its cache key (``None``: its importer's answer is never
    cached), its facts, and its runs when they were read or parsed on the way (``None``: the facts entry
    answered)."""

    key: str | None
    facts: FileFacts
    runs: list[Run] | None


@dataclass(frozen=True)
class FileCache:
    """Entries under ``root``: ``<root>/<code key>/<hh>/<file hash>.runs.pickle`` (one folder per code
    version), and beside it the file's facts (``.facts-<facts key>.pickle``, ``workbench.scale.index``)."""

    root: Path

    def _entry(self, key: str) -> Path:
        return self.root / code_key() / key[:2] / key

    def load_file(self, path: str | os.PathLike[str], key: str | None = None) -> list[Run]:
        """The runs in ``path`` — from the cache when this content was read before by this code, else read by
        its importer and stored. ``key``: the file's cache key as the corpus index gave it (its entry is tried
        before the file is detected or hashed). Raises what the importer raises (nothing is cached for an
        unreadable file)."""
        from workbench.importers import detect

        p = Path(path)
        runs = self._runs(self._entry(key)) if key is not None else None
        if runs is None:
            module = detect(p)  # a file no importer knows is refused from its head, before it is hashed
            if not cacheable(module):
                fresh: list[Run] = module.load(p)
                return fresh
            entry = self._entry(file_key(p, module))
            runs = self._runs(entry)
            if runs is None:
                runs = self._stored(_runs_target(entry), module.load(p))
        for r in runs:
            r.loaded_from = str(p)
        return runs

    def facts(
        self,
        path: str | os.PathLike[str],
        module: Any = None,
        key: str | None = None,
        *,
        keep_runs: bool = True,
    ) -> Found:
        """The one miss path of a file's facts (``workbench.scale.index.FileFacts``): its facts entry, else its
        runs entry, else its importer's parse (the runs entry then written, unless ``keep_runs`` is false: a
        large corpus pickles its runs when it first builds them) — then the facts entry written. ``module``: the
        file's importer when already detected; ``key``: its cache key when known (the corpus index's), else the
        file is hashed; a key whose entries both miss is checked against the file's own before anything is
        written. Raises what the importer raises."""
        from workbench.importers import detect

        p = Path(path)
        given = key
        if key is None:
            module = module if module is not None else detect(p)
            if not cacheable(module):
                runs = module.load(p)
                return Found(None, FileFacts.of(runs), runs)
            key = file_key(p, module)
        entry = self._entry(key)
        got = self._facts(entry)
        if got is not None:
            return Found(key, got, None)
        runs = self._runs(entry)
        parsed = runs is None
        if parsed:
            if given is not None:  # nothing under the key given: the file's own entries, or its parse
                return self.facts(p, module, keep_runs=keep_runs)
            runs = module.load(p)
        # the facts of the runs as parsed, not as given out (read back from their entry): fingerprinting pickles
        # their text, and CPython keeps the UTF-8 form of a pickled str with it (a cold load of 125 runs 88 -> 74 MB)
        got = FileFacts.of(runs)
        if keep_runs and parsed:
            runs = self._stored(_runs_target(entry), runs)
        self._put(_facts_target(entry), got, say=False)
        return Found(key, got, runs)

    def _runs(self, entry: Path) -> list[Run] | None:
        fits = lambda got: isinstance(got, list) and all(isinstance(r, Run) for r in got)  # noqa: E731
        return cast("list[Run] | None", _decoded(_runs_target(entry), "runs", fits))

    def _facts(self, entry: Path) -> FileFacts | None:
        fits = lambda got: isinstance(got, FileFacts)  # noqa: E731
        return cast("FileFacts | None", _decoded(_facts_target(entry), "a file's facts", fits))

    @staticmethod
    def _put(target: Path, value: object, say: bool = True) -> bytes:
        data = dumps(value)
        try:
            entries.write_sealed(target, data)
        except OSError as exc:  # a read-only or full cache only costs speed
            if say:
                print(printable(f"workbench: cache not written ({exc})"), file=sys.stderr)
        return data

    def _stored(self, target: Path, runs: list[Run]) -> list[Run]:
        """``runs`` written to their entry, and given out as read back from it (``workbench.scale.pickling``: equal,
        and a third smaller than as the importer built them), so a first load holds what every later one does."""
        return cast("list[Run]", pickle.loads(self._put(target, runs)))


def _runs_target(entry: Path) -> Path:
    return entry.with_name(f"{entry.name}.runs.pickle")


def _facts_target(entry: Path) -> Path:
    return entry.with_name(f"{entry.name}.facts-{facts_key()}.pickle")


def _decoded(target: Path, what: str, fits: Callable[[object], bool]) -> object:
    """What a cached entry holds (runs, or a file's facts), or ``None`` (a miss): absent, or not usable — not
    ours, damaged, not decodable, or not ``what`` — which is said in one line naming the entry (it is then
    rewritten). The pickle is decoded only after the entry passed :func:`workbench.scale.entry.read_sealed`."""
    try:
        data = entries.read_sealed(target)
    except entries.Damaged as exc:
        entries.warn(target, exc)
        return None
    if data is None:
        return None
    try:
        got = pickle.loads(data)
    except (
        Exception
    ) as exc:  # a foreign pickle of ours (another version's classes): any decode error is a miss
        entries.warn(target, f"cannot be decoded ({type(exc).__name__})")
        return None
    if not fits(got):
        entries.warn(target, f"does not hold {what} (schema mismatch)")
        return None
    return got
