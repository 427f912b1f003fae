"""``workbench import PATH... --out DIR``: any supported file or folder -> native traces, one file per run."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.cli import errors
from workbench.cli._format import table

if TYPE_CHECKING:
    from workbench.trace.schema import Run

COLUMNS = ("run_id", "source", "role", "calls", "prompt_tokens", "cached_tokens", "completion_tokens",
           "written")  # fmt: skip
# A file name's limit on nearly every file system (ext4, APFS, NTFS: 255 bytes or UTF-16 units).
NAME_MAX = 255
_SUFFIX = ".jsonl"


def add_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser(
        "import",
        help="convert recorded runs (Claude Code, OpenHands, Codex CLI, OpenAI-style logs, native) to native traces",
        description="Convert every run in the given files or folders to a native trace, one file per run. "
        "Each file is written under a temporary name and renamed when complete; a file that exists is "
        "refused unless --force, and an input is never written over.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="a trace file or a folder to search")
    add_out_folder(p, "folder to write the native traces into")
    p.set_defaults(func=run)


def add_out_folder(p: argparse.ArgumentParser, help: str) -> None:
    p.add_argument("--out", required=True, type=Path, metavar="DIR", help=help)
    p.add_argument(
        "--force", action="store_true", help="replace traces that already exist in DIR (never an input)"
    )


def check_out_folder(out: Path) -> None:
    if os.path.lexists(out) and not out.is_dir():
        raise errors.UsageError(f"--out {out}", "exists and is not a folder")


def file_name(run_id: str, limit: int = NAME_MAX) -> str:
    """A file name for a run id: ``/`` (subagent ids) becomes ``__``, other unsafe characters ``_``; a name
    longer than the file system allows keeps its start and gains a hash of the whole id, so it stays unique."""
    safe = re.sub(r"[^A-Za-z0-9._#-]+", "_", run_id.replace("/", "__")).strip("._") or "run"
    if len(safe) + len(_SUFFIX) <= limit:
        return safe + _SUFFIX
    digest = hashlib.sha256(run_id.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    keep = limit - len(_SUFFIX) - len(digest) - 1 - 8  # room for a collision counter "-NNNNNNN"
    return f"{safe[:keep]}-{digest}{_SUFFIX}"


def plan(run_ids: Sequence[str], out: Path) -> list[Path]:
    """One distinct file per run, in order: ids that map to the same name (or differ only in case, which some
    file systems fold) get ``-1``, ``-2`` … before the suffix."""
    used: set[str] = set()
    paths = []
    for run_id in run_ids:
        name = file_name(run_id)
        stem = name.removesuffix(_SUFFIX)
        n = 0
        while name.casefold() in used:
            n += 1
            name = f"{stem}-{n}{_SUFFIX}"
        used.add(name.casefold())
        paths.append(out / name)
    return paths


def _identities(paths: Iterable[Path]) -> set[tuple[int, int]]:
    out = set()
    for p in paths:
        try:
            st = os.stat(p)
        except OSError:
            continue
        out.add((st.st_dev, st.st_ino))
    return out


def check_targets(targets: Sequence[Path], inputs: Iterable[Path], *, force: bool) -> None:
    """Refuse, before writing anything, to write over an input (ever) or over an existing file (without --force)."""
    read = _identities(inputs)
    existing = [t for t in targets if os.path.lexists(t)]
    for t in existing:
        if _identities([t]) & read:
            raise errors.UsageError(
                f"--out {t.parent}", f"would write over the input {t}; choose another folder"
            )
    if existing and not force:
        more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
        raise errors.UsageError(
            f"--out {targets[0].parent}", f"{existing[0]}{more} already exist; give --force to replace"
        )


def write_runs(
    runs: Sequence[Run], out: Path, inputs: Iterable[Path] = (), *, force: bool = False
) -> list[Path]:
    """Write each run as a native trace in ``out``, one distinct file each (:func:`plan`), each atomically.
    Checks every target first (:func:`check_targets`): nothing is written when one would replace an input, or
    an existing file without ``force``."""
    from workbench.trace.native import write_run

    targets = plan([r.run_id for r in runs], out)
    check_targets(targets, inputs, force=force)
    return [write_run(r, t) for r, t in zip(runs, targets, strict=True)]


def run(args: argparse.Namespace) -> int:
    out: Path = args.out
    check_out_folder(out)
    from workbench.cli._load import read_corpus
    from workbench.trace.frames import run_summary

    corpus = read_corpus(args.paths, "import", "runs", one_problem=False)
    if not corpus.runs:
        raise errors.DataError(", ".join(args.paths), "nothing could be read")
    inputs = [*corpus.files, *(s.path for s in corpus.skipped), *(Path(p.file) for p in corpus.problems)]
    written = write_runs(corpus.runs, out, inputs=inputs, force=args.force)
    rows = []
    for r, path in zip(corpus.runs, written, strict=True):
        for d in r.diagnostics[:3]:
            errors.say("import", "warning", str(d))
        if len(r.diagnostics) > 3:
            errors.say("import", "warning", f"{len(r.diagnostics) - 3} more problems in {r.source_file}")
        rows.append({**run_summary(r), "written": str(path)})
    print(table(rows, COLUMNS, max_width=60, full=("written",)))
    print(f"\n{len(rows)} runs from {len(corpus.files)} files written to {out}")
    return 1 if corpus.problems or corpus.refused else 0
