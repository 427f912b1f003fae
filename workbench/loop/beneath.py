"""Opening a path beneath a held directory descriptor, resolved by the kernel, never through a symbolic link
(``openat2`` with ``RESOLVE_BENEATH``, else a walk one component at a time with ``O_NOFOLLOW``): docs/sandbox.md,
"What the loop itself touches for the model". Paths given here are already relative and normal: :func:`parts` makes
them so lexically and refuses ``..`` that climbs out, absolute paths and NUL bytes.
"""

from __future__ import annotations

import ctypes
import errno
import os
import posixpath
import sys
from functools import cache

# linux/openat2.h: the resolve flags.
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS
# openat2's number: new syscalls share one number on every Linux architecture since 5.1 (asm-generic/unistd.h).
SYS_OPENAT2 = 437
# Flags every open here carries: never follow a final link, never leak the descriptor into a command.
BASE_FLAGS = os.O_NOFOLLOW | os.O_CLOEXEC
DIR_FLAGS = os.O_PATH | os.O_DIRECTORY | BASE_FLAGS


class Escape(ValueError):
    """A path that leaves the directory, or passes through a symbolic link."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


@cache
def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None


def _openat2(dirfd: int, path: str, flags: int, mode: int) -> int:
    libc = _libc()
    if libc is None:
        raise OSError(errno.ENOSYS, "openat2 is not available")
    how = _OpenHow(flags, mode if flags & os.O_CREAT else 0, RESOLVE)
    fd = libc.syscall(SYS_OPENAT2, dirfd, os.fsencode(path), ctypes.byref(how), ctypes.sizeof(how))
    if fd < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return int(fd)


@cache
def kernel_resolves() -> bool:
    """Whether this kernel (and any seccomp filter around this process) lets ``openat2`` resolve beneath a
    descriptor; probed once."""
    try:
        root = os.open("/", DIR_FLAGS)
    except OSError:
        return False
    try:
        os.close(_openat2(root, ".", os.O_PATH | os.O_CLOEXEC, 0))
    except OSError:
        return False
    finally:
        os.close(root)
    return True


def parts(path: str) -> tuple[str, ...]:
    """``path`` (relative) as normal components; ``()`` is the directory itself. Raises :class:`Escape` for an
    absolute path, NUL bytes, or ``..`` climbing out."""
    if not path or "\x00" in path:
        raise Escape(f"{path[:200]!r} is not a usable path")
    if path.startswith("/"):
        raise Escape(f"{path[:200]!r} is outside the workspace")
    normal = posixpath.normpath(path)
    if normal == ".":
        return ()
    if normal == ".." or normal.startswith("../"):
        raise Escape(f"{path[:200]!r} is outside the workspace")
    return tuple(normal.split("/"))


def _explain(dirfd: int, components: tuple[str, ...], exc: OSError, shown: str) -> Exception:
    """The error of a failed resolution in words: a link met on the way is an escape (it is never followed, since
    one may point outside), anything else is the OS error."""
    if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):
        for i in range(len(components)):
            try:
                st = os.stat("/".join(components[: i + 1]), dir_fd=dirfd, follow_symlinks=False)
            except OSError:
                break
            if (st.st_mode & 0o170000) == 0o120000:
                return Escape(
                    f"{shown!r} passes through the symbolic link {'/'.join(components[: i + 1])!r}; links are not "
                    "followed (one may lead outside the workspace)"
                )
        if exc.errno == errno.EXDEV:
            return Escape(f"{shown!r} is outside the workspace")
    return exc


def open_beneath(
    dirfd: int, components: tuple[str, ...], flags: int, mode: int = 0o644, *, kernel: bool | None = None
) -> int:
    """A descriptor of ``components`` beneath ``dirfd``, opened with ``flags`` (plus ``O_NOFOLLOW|O_CLOEXEC``);
    no component may be a symbolic link. ``kernel`` forces (True) or forbids (False) the ``openat2`` path."""
    shown = "/".join(components) or "."
    use_kernel = kernel_resolves() if kernel is None else kernel
    try:
        if use_kernel:
            return _openat2(dirfd, shown, flags | BASE_FLAGS, mode)
        if not components:
            return os.open(".", flags | BASE_FLAGS, mode, dir_fd=dirfd)
        current = dirfd
        try:
            for name in components[:-1]:
                step = os.open(name, DIR_FLAGS, dir_fd=current)
                if current != dirfd:
                    os.close(current)
                current = step
            return os.open(components[-1], flags | BASE_FLAGS, mode, dir_fd=current)
        finally:
            if current != dirfd:
                os.close(current)
    except OSError as exc:
        raise _explain(dirfd, components, exc, shown) from None


def make_dirs(dirfd: int, components: tuple[str, ...], *, owner: tuple[int, int] | None = None) -> int:
    """An ``O_PATH`` descriptor of the folder ``components`` beneath ``dirfd``, creating missing folders one by
    one (each made with ``mkdirat`` in the folder just opened, then opened without following a link)."""
    current = os.dup(dirfd)
    try:
        for name in components:
            try:
                step = open_beneath(current, (name,), DIR_FLAGS)
            except FileNotFoundError:
                try:
                    os.mkdir(name, 0o755, dir_fd=current)
                    if owner is not None:
                        os.chown(name, *owner, dir_fd=current, follow_symlinks=False)
                except FileExistsError:
                    pass
                step = open_beneath(current, (name,), DIR_FLAGS)
            os.close(current)
            current = step
        return current
    except BaseException:
        os.close(current)
        raise
