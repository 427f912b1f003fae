"""Red team, readers (issue 25): memory bounded at every decoder, and a file checked on its opened descriptor.

* An Inspect ``.eval`` whose member inflates past the document limit is not inflated (the whole archive's inflated
  bytes are bounded too); an Inspect ``.json`` past the limit is refused with one line, unread.
* ``workbench label --results`` refuses a FIFO, a device and an over-large table in one line, like every reader.
* A path swapped for a FIFO between the check and the open is refused (``open_bytes``, ``read_prefix``): a tight
  swap loop of 2,000 attempts never blocks a reader and never reads the FIFO.

Memory is measured in a child process (its peak RSS); every child has a generous timeout only so that a
regression fails instead of hanging the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.samples import sample
from workbench.importers import inspect_ai
from workbench.importers._common import read_prefix
from workbench.trace import limits
from workbench.trace.errors import TraceError
from workbench.trace.limits import MAX_DOCUMENT_BYTES

BOMB = 200 << 20  # inflated bytes of the bomb member: three times the document limit


# The child's peak RSS from its own memory map (VmHWM: reset by exec, unlike getrusage's maxrss, which keeps the
# forking test process's).
PEAK = (
    "def peak_mb():\n"
    "    for line in open('/proc/self/status'):\n"
    "        if line.startswith('VmHWM:'):\n"
    "            return int(line.split()[1]) // 1024\n"
)


def _child(code: str, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "WORKBENCH_CACHE": "off"}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env
    )


EVAL = sample("inspect_ai", "eval zip")


def _with_bomb(folder: Path) -> Path:
    path = EVAL.write(folder)
    with (
        zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as z,
        z.open("samples/bomb_epoch_1.json", "w") as out,
    ):
        out.write(b"[")
        chunk = b"0," * (1 << 19)
        for _ in range(BOMB // len(chunk)):
            out.write(chunk)
        out.write(b"0]")
    return path


def test_an_eval_zip_bomb_is_not_inflated(tmp_path: Path) -> None:
    path = _with_bomb(tmp_path)
    with zipfile.ZipFile(path) as z:  # the control: a small file declaring a member past the limit
        assert z.getinfo("samples/bomb_epoch_1.json").file_size > BOMB > MAX_DOCUMENT_BYTES
    assert path.stat().st_size < 2 << 20
    code = (
        f"{PEAK}"
        "from workbench.importers import inspect_ai\n"
        f"runs = inspect_ai.load({str(path)!r})\n"
        "print(len(runs))\n"
        "print([d.message for d in runs[0].diagnostics if d.field == 'samples/bomb_epoch_1.json'])\n"
        "print(peak_mb())\n"
    )
    done = _child(code)
    assert done.returncode == 0, done.stderr
    count, said, peak_mb = done.stdout.splitlines()
    assert int(count) == EVAL.runs  # the real samples are read
    assert "member is not inflated (limit 67,108,864)" in said
    assert int(peak_mb) < 400  # inflated whole, the member alone is 200 MB of bytes and gigabytes parsed


def test_an_eval_archive_inflates_at_most_its_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = EVAL.write(tmp_path)
    with zipfile.ZipFile(path) as z:
        header = sum(i.file_size for i in z.infolist() if not i.filename.startswith("samples/"))
        first = min(i.file_size for i in z.infolist() if i.filename.startswith("samples/"))
    monkeypatch.setattr(inspect_ai, "MAX_INFLATED_BYTES", header + first)
    runs = inspect_ai.load(path)
    said = [d.message for r in runs for d in r.diagnostics if "not inflated" in d.message]
    assert len(runs) == 1 and said and said[0].startswith("not inflated: the archive's members passed")


def test_a_lying_member_size_is_refused_after_its_declared_bytes(tmp_path: Path) -> None:
    path = EVAL.write(tmp_path)
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.startswith("samples/"))
        info.file_size = 10  # a header that declares less than the member inflates to
        with pytest.raises(zipfile.BadZipFile):
            inspect_ai._inflate(z, info)


def test_an_inspect_json_past_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.json"
    with open(path, "wb") as fh:
        fh.write(b'{"version": 2, "status": "success", "eval": {"task": "t"}, "samples": [')
        fh.truncate(512 << 20)  # sparse: 512 MiB that cost nothing to write
    assert inspect_ai.sniff(path, [])  # the control: it is taken for an Inspect log
    code = (
        f"{PEAK}"
        "from workbench.importers import inspect_ai\n"
        "from workbench.trace.errors import TraceError\n"
        f"try:\n    inspect_ai.load({str(path)!r})\nexcept TraceError as exc:\n    print(exc)\n"
        "print(peak_mb())\n"
    )
    done = _child(code)
    said, peak_mb = done.stdout.splitlines()
    assert said == (
        f"{path}: a 536,870,912-byte JSON document: larger than the 67,108,864-byte limit for a document read whole"
    )
    assert int(peak_mb) < 300


def _label(tmp_path: Path, results: str) -> subprocess.CompletedProcess[str]:
    from workbench.paths import bundled_traces

    code = (
        "import sys\nfrom workbench.cli import main\n"
        f"sys.exit(main(['label', {str(bundled_traces())!r}, '--results', {results!r}, '--out', "
        f"{str(tmp_path / 'out')!r}]))\n"
    )
    return _child(code, timeout=120)


def test_label_results_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "results.json"
    os.mkfifo(fifo)
    done = _label(tmp_path, str(fifo))  # before: blocked forever on open
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [f"workbench label: {fifo}: not read: a FIFO (named pipe)"]


def test_label_results_refuses_a_device(tmp_path: Path) -> None:
    done = _label(tmp_path, "/dev/zero")  # before: 2.9 GB, then MemoryError
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == ["workbench label: /dev/zero: not read: a device"]


def test_label_results_refuses_an_over_large_table(tmp_path: Path) -> None:
    table = tmp_path / "results.csv"
    with open(table, "wb") as fh:
        fh.write(b"instance_id,resolved\n")
        fh.truncate(583 << 20)
    done = _label(tmp_path, str(table))
    assert done.returncode == 1
    assert done.stderr.strip().splitlines() == [
        f"workbench label: {table}: a 611,319,808-byte results table: larger than the 67,108,864-byte limit "
        "for a document read whole"
    ]


def test_open_bytes_checks_the_opened_descriptor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "swapped"
    os.mkfifo(fifo)
    # the swap happened after the path was checked: only the check on the descriptor is left to catch it
    monkeypatch.setattr(limits, "check_regular", lambda path: None)
    with pytest.raises(
        TraceError, match="not read: a FIFO \\(named pipe\\) \\(swapped in after it was checked\\)"
    ):
        limits.open_bytes(fifo)
    assert read_prefix(fifo) == b""


SWAPPER = """
import os, sys
from pathlib import Path
root = Path(sys.argv[1])
target, keep = root / "input.json", root / "regular.keep"
spare = root / "spare"
i = 0
while True:  # the name alternates between the regular file and a FIFO as fast as the kernel allows
    if i % 2:
        os.link(keep, spare)
    else:
        os.mkfifo(spare)
    os.replace(spare, target)
    i += 1
"""

READER = """
import os, sys
from pathlib import Path
from workbench.importers._common import read_prefix
from workbench.trace.limits import read_document
from workbench.trace.errors import TraceError
target = Path(sys.argv[1]) / "input.json"
read = refused = 0
for n in range(int(sys.argv[2])):
    assert read_prefix(target) in (b"", b'{"ok": 1}')
    try:
        assert read_document(target) == b'{"ok": 1}'
        read += 1
    except (TraceError, FileNotFoundError):
        refused += 1
print(read, refused)
"""


def test_a_tight_swap_loop_never_blocks_a_reader_on_a_fifo(tmp_path: Path) -> None:
    (tmp_path / "regular.keep").write_bytes(b'{"ok": 1}')
    os.link(tmp_path / "regular.keep", tmp_path / "input.json")
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(tmp_path)])
    try:
        done = subprocess.run(
            [sys.executable, "-c", READER, str(tmp_path), "2000"], capture_output=True, text=True, timeout=300
        )
    finally:
        swapper.kill()
        swapper.wait()
    assert done.returncode == 0, done.stderr
    read, refused = map(int, done.stdout.split())
    assert read + refused == 2_000  # every attempt returned: none blocked on a FIFO, none read one


def test_the_worst_interleaving_2000_times_zero_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The swap placed exactly between the path check and the open, on every attempt: the check passes on the
    # regular file, then the name is a FIFO when it is opened.
    target, keep, fifo = tmp_path / "input.json", tmp_path / "keep", tmp_path / "fifo"
    keep.write_bytes(b'{"ok": 1}')
    checked = limits.check_regular

    def check_then_swap(path: Path) -> None:
        checked(path)
        os.mkfifo(fifo)
        os.replace(fifo, path)

    monkeypatch.setattr(limits, "check_regular", check_then_swap)
    wins = 0
    for _ in range(2_000):
        os.link(keep, tmp_path / "next")
        os.replace(tmp_path / "next", target)
        try:
            with limits.open_bytes(target) as fh:
                fh.read()
            wins += 1
        except TraceError as exc:
            assert "(swapped in after it was checked)" in str(exc)
    assert wins == 0
    # the control: the name really is a FIFO at the open, which a plain open() would block on
    import stat

    assert stat.S_ISFIFO(os.stat(target).st_mode)


def test_documents_within_the_limit_still_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"a": 1}))
    assert limits.read_document(path) == b'{"a": 1}'
