"""Writing outputs so that a killed command never leaves half a file and never writes over what it read.

* A file is written under a temporary name in its target folder, then renamed into place (a rename within one
  file system is atomic): a reader sees the old file or the new one, never a truncated one that looks complete.
* A folder of outputs (a report) is written whole into a fresh folder beside its target, then swapped in —
  atomically where the kernel can exchange two paths (Linux ``renameat2``), else by two renames that leave either
  the old folder or the new one in place, never a mix of the two.
* A report folder carries :data:`MANIFEST`, so the workbench recognises a folder it wrote before and may replace
  it; any other existing path is the user's and is replaced only when they say so.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import hashlib
import os
import secrets
import shutil
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import orjson

# Every output is first written under a hidden name ending so (".<name>.<random>.partial"), then renamed; a name of
# this shape is an unfinished output (its writer was killed), which a folder walk leaves out.
PARTIAL_SUFFIX = ".partial"


def is_partial(name: str) -> bool:
    """Is ``name`` the temporary name of an output still being written (or whose writer was killed)?"""
    return name.startswith(".") and name.endswith(PARTIAL_SUFFIX)


MANIFEST = "manifest.json"
MANIFEST_KIND = "budget-workbench/report"


@contextlib.contextmanager
def replacing(target: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary path in ``target``'s folder to write to; renamed onto ``target`` when the block ends without
    an exception, deleted when it raises (or the process is killed: it starts with a dot and ends ``.partial``)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _beside(
        target, PARTIAL_SUFFIX, lambda p: os.close(os.open(p, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    )
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def write_bytes(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically (temporary name, then rename)."""
    with replacing(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


# OWASP "CSV Injection": a spreadsheet reads a cell starting with one of these as a formula (or a DDE call).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """A text cell as a spreadsheet may open it: one starting with a formula character is prefixed with a single
    quote (what OWASP recommends), so ``=HYPERLINK(...)`` in a run id is shown as text, never evaluated. Numbers
    and other values are returned as they are (a negative count is a number, not a formula)."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(frame: Any) -> str:
    """``frame`` (a pandas DataFrame) as CSV text with every text cell, and every column name, through
    :func:`csv_cell`: the one way the workbench writes a CSV (``sweep``, ``bills``, ``calibrate``)."""
    safe = frame.copy(deep=False)
    for column in safe.columns:
        if safe[column].dtype.kind in "OSU" or str(safe[column].dtype) in {"string", "category"}:
            safe[column] = safe[column].astype(object).map(csv_cell)
    safe.columns = [csv_cell(str(c)) for c in safe.columns]
    return str(safe.to_csv(index=False))


def same_path(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Do ``a`` and ``b`` name the same file (through links and ``..``)? False when either does not exist."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Is ``path`` ``folder`` itself or somewhere under it (resolved)?"""
    p, f = Path(path).resolve(), Path(folder).resolve()
    return p == f or f in p.parents


def written_by_workbench(folder: str | os.PathLike[str]) -> bool:
    """Does ``folder`` hold a report the workbench wrote (its :data:`MANIFEST`, of our kind)?"""
    manifest = Path(folder) / MANIFEST
    try:
        data = orjson.loads(manifest.read_bytes()[: 1 << 20])
    except (OSError, orjson.JSONDecodeError):
        return False
    return isinstance(data, dict) and data.get("kind") == MANIFEST_KIND


def refusal(target: str | os.PathLike[str], *, force: bool = False) -> str | None:
    """Why a report may not be written to ``target`` (None when it may): nothing there, an empty folder, or a
    report the workbench wrote may be replaced; anything else only with ``force``."""
    target = Path(target)
    if not os.path.lexists(target) or force:
        return None
    if target.is_dir() and not target.is_symlink():
        if written_by_workbench(target) or not any(target.iterdir()):
            return None
        return f"is a folder the workbench did not write (no {MANIFEST}); give --force to replace it"
    return "exists and is not a folder; give --force to replace it"


def manifest(files: Iterable[Path], **facts: Any) -> bytes:
    """The manifest of a report folder: its kind, the files in it with their sha256, and ``facts``."""
    listed = {
        p.name: {"bytes": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest()}
        for p in sorted(files)
    }
    return orjson.dumps(
        {"kind": MANIFEST_KIND, **facts, "files": listed}, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
    )


def fresh_folder(target: str | os.PathLike[str]) -> Path:
    """An empty folder beside ``target`` (same file system, so it can be renamed onto it)."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    return _beside(target, PARTIAL_SUFFIX, lambda p: os.mkdir(p, 0o777))


def _beside(target: Path, suffix: str, create: Callable[[Path], None]) -> Path:
    """A new, unused name next to ``target`` (hidden, random), created by ``create`` with the user's umask
    (tempfile's 0600/0700 would leave the renamed output unreadable to others)."""
    for _ in range(100):
        path = target.parent / f".{target.name[:100]}.{secrets.token_hex(6)}{suffix}"
        try:
            create(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(target.parent))


def swap_in(fresh: Path, target: str | os.PathLike[str]) -> None:
    """Put the finished folder ``fresh`` at ``target``, replacing whatever is there; the old contents are
    deleted only after the new folder is in place."""
    target = Path(target)
    if not os.path.lexists(target):
        os.rename(fresh, target)
        return
    if target.is_dir() and not target.is_symlink() and _exchange(fresh, target):
        shutil.rmtree(fresh, ignore_errors=True)  # `fresh` now holds the old folder
        return
    # Two renames: a kill between them leaves the old folder under its .old name and the new one complete
    # under its .partial name — never a mix of the two.
    old = _beside(target, ".old", lambda p: None)
    os.rename(target, old)
    os.rename(fresh, target)
    if old.is_dir() and not old.is_symlink():
        shutil.rmtree(old, ignore_errors=True)
    else:
        old.unlink()


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2 with RENAME_EXCHANGE); False where unavailable."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return rc == 0
