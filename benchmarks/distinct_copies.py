"""K copies of ../shared/traces whose content differs, for benchmarks that must not be flattered by identical files.

    python benchmarks/distinct_copies.py 10 /tmp/workbench-distinct     # writes /tmp/workbench-distinct/x10/

Real corpora are distinct runs: byte-identical copies are fingerprinted and computed once, so a benchmark over them
measures the de-duplication, not the work. Each copy here keeps the layout (so labels beside the runs still join:
SWE-bench ``report.json`` files and sb-cli reports are copied unchanged) and perturbs, per copy ``i`` (1-based):

* every positive integer under a key naming tokens (``input_tokens``, ``cached_tokens``, ``prompt_tokens`` …) by
  ``+ i``: differences between counts (a prompt minus its cache read) are kept, a recorded 0 stays 0;
* every string under ``text`` or ``content`` by a suffix `` ·i``, so estimator inputs differ too.

Identifiers, timestamps, signatures, tool arguments and encrypted reasoning blobs are left as they are. A file that
does not parse as JSON or JSONL (line by line) is copied unchanged. The work is deterministic: the same ``i`` gives
the same bytes, and a finished folder (``.complete``) is reused.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parents[1]
TEXT_KEYS = frozenset({"text", "content"})
LABEL_NAMES = ("report.json",)  # graders' files: left byte-identical so labels join as in the original


def _is_token_key(key: str) -> bool:
    k = key.lower()
    return "token" in k and not k.endswith(("_id", "id"))


def perturb(value: Any, i: int, key: str = "") -> Any:
    """The value with its token counts shifted by ``i`` and its texts tagged with ``i`` (see the module doc)."""
    if isinstance(value, dict):
        return {k: perturb(v, i, k) for k, v in value.items()}
    if isinstance(value, list):
        return [perturb(v, i, key) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value > 0 and _is_token_key(key):
        return value + i
    if isinstance(value, str) and key in TEXT_KEYS and value:
        return f"{value} ·{i}"
    return value


def _copy_file(src: Path, dest: Path, i: int) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if (
        src.name in LABEL_NAMES
        or src.parent.name == "sb-cli-reports"
        or src.suffix not in (".json", ".jsonl")
    ):
        shutil.copyfile(src, dest)
        return
    data = src.read_bytes()
    if src.suffix == ".json":
        try:
            dest.write_bytes(orjson.dumps(perturb(orjson.loads(data), i)))
        except orjson.JSONDecodeError:
            shutil.copyfile(src, dest)
        return
    out: list[bytes] = []
    for line in data.splitlines():
        try:
            out.append(orjson.dumps(perturb(orjson.loads(line), i)) if line.strip() else line)
        except orjson.JSONDecodeError:
            out.append(line)
    dest.write_bytes(b"\n".join(out) + (b"\n" if data.endswith(b"\n") else b""))


def write_copies(source: Path, folder: Path, k: int) -> Path:
    """``folder/x{k}/copy{i:03d}`` for i in 1..k, each a perturbed copy of ``source``; reused when complete."""
    out = folder / f"x{k}"
    if (out / ".complete").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    files = sorted(p for p in source.rglob("*") if p.is_file())
    for i in range(1, k + 1):
        for f in files:
            _copy_file(f, out / f"copy{i:03d}" / f.relative_to(source), i)
    (out / ".complete").write_text("")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("k", type=int, help="number of copies")
    parser.add_argument("folder", type=Path, help="where x{k}/ is written")
    parser.add_argument("--source", type=Path, default=ROOT.parent / "shared" / "traces")
    args = parser.parse_args()
    if not args.source.is_dir():
        print(f"distinct_copies: {args.source} is absent", file=sys.stderr)
        return 2
    print(write_copies(args.source, args.folder, args.k))
    return 0


if __name__ == "__main__":
    sys.exit(main())
