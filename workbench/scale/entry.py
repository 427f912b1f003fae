"""One cache entry, trusted only when it is ours (a regular file of this user's that no one else may write, checked on
the opened descriptor) and whole (sealed with its SHA-256); anything else is a miss, read again and rewritten with
one warning line: the way every file under the cache folder is written and read (docs/scale.md, "Trusted only when
ours and whole")."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

MAGIC = b"budget-workbench cache entry v1\n"
"""The first bytes of every sealed entry (then the 32-byte SHA-256 of its name and payload, then the payload)."""

_DIGEST = 32
_CHUNK = 1 << 20


class Damaged(Exception):
    """An entry that is present but may not be used; ``str()`` says why (one phrase)."""


def _digest(name: str, payload: bytes | memoryview) -> bytes:
    h = hashlib.sha256(name.encode() + b"\0")
    h.update(payload)
    return h.digest()


def seal(name: str, payload: bytes) -> bytes:
    """``payload`` as the bytes of the entry called ``name``: :data:`MAGIC`, the SHA-256 of the name and the
    payload (an entry renamed onto another's name is a mismatch too), then the payload."""
    return MAGIC + _digest(name, payload) + payload


def _check_ours(fd: int, what: str, *, regular: bool) -> None:
    st = os.fstat(fd)
    if regular and not stat.S_ISREG(st.st_mode):
        raise Damaged(f"{what} not a regular file")
    if st.st_uid != os.geteuid():
        raise Damaged(
            f"{what} owned by uid {st.st_uid}, not by this user (uid {os.geteuid()}): never decoded"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise Damaged(f"{what} writable by other users: never decoded")


def open_own(path: Path) -> int | None:
    """A read-only descriptor on ``path`` when it is a regular file of ours that no one else may write, in a
    folder of ours that no one else may write; ``None`` when it is absent. Raises :class:`Damaged` otherwise. The
    checks are on opened descriptors (the folder, then the file opened beneath it without following a link): a
    path swapped after a check cannot slip through."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Damaged(f"cannot be opened ({exc.strerror or exc})") from exc
    try:
        _check_ours(folder, "is in a folder", regular=False)
        try:
            fd = os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=folder)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise Damaged(f"cannot be opened ({exc.strerror or exc})") from exc
    finally:
        os.close(folder)
    try:
        _check_ours(fd, "is", regular=True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_sealed(path: Path) -> bytes | None:
    """The payload of the sealed entry at ``path`` (``None``: absent); :class:`Damaged` when it is not ours, not
    an entry, or its checksum does not match its bytes."""
    fd = open_own(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as fh:
        data = fh.read()
    head = len(MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(MAGIC):
        raise Damaged("is not a workbench cache entry (bad header)")
    payload = memoryview(data)[head:]
    if _digest(path.name, payload) != data[len(MAGIC) : head]:
        raise Damaged("does not match its checksum")
    return bytes(payload)


def digest_of(path: Path) -> str:
    """The SHA-256 (hex) of a table file of ours (:func:`open_own`'s checks); :class:`Damaged` when absent."""
    fd = open_own(path)
    if fd is None:
        raise Damaged("is missing")
    h = hashlib.sha256()
    with os.fdopen(fd, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def atomic(target: Path, write: Callable[[str], object]) -> None:
    """Call ``write(tmp)`` on a new 0600 file beside ``target``, then rename it into place: a reader never sees
    half an entry."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_sealed(target: Path, payload: bytes) -> None:
    """``payload`` sealed (:func:`seal`) and written atomically at ``target``, its folders made first."""
    make_folder(target.parent)
    atomic(target, lambda tmp: Path(tmp).write_bytes(seal(target.name, payload)))


def make_folder(path: Path) -> None:
    """``path`` and its missing parents, each made 0700 (what the cache creates is for this user alone)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


_warned: set[tuple[str, str]] = set()


def warn(path: Path, why: object) -> None:
    """The one line said about an entry that could not be used (it is read again and rewritten): once per entry
    and reason in a process, however many readers meet it before it is rewritten."""
    from workbench.format import printable

    if (str(path), str(why)) in _warned:
        return
    _warned.add((str(path), str(why)))
    print(
        printable(f"workbench: cache entry {path} {why}: ignored, read again and rewritten"), file=sys.stderr
    )


__all__ = [
    "MAGIC", "Damaged", "atomic", "digest_of", "make_folder", "open_own", "read_sealed", "seal", "warn",
    "write_sealed",
]  # fmt: skip
