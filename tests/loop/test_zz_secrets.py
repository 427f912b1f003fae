"""Runs last in the loop suite (files run in name order): no trace, log, error text or CLI output the suite
produced holds the API key's value — while the server did receive it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.loop.conftest import SUITE_KEY


def test_no_trace_log_or_error_holds_the_api_key(
    artifacts: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    base = tmp_path_factory.getbasetemp()
    # every trace and log the suite wrote anywhere, and everything under the artifacts folder (errors, CLI output);
    # workspaces are not searched: one test plants the key in a workspace file to prove the trace redacts it
    written = sorted(
        {p for p in base.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".log")}
        | {p for p in artifacts.rglob("*") if p.is_file()}
    )
    traces = [p for p in written if p.suffix == ".jsonl"]
    if len(traces) < 10:
        pytest.skip("run with the whole loop suite: too little was written to search")
    log = artifacts / "workbench.log"
    assert log.exists() and "model call attempt" in log.read_text()  # the retries were logged
    assert (artifacts / "errors.txt").exists() and (artifacts / "cli" / "run.out").exists()
    holding = [str(p) for p in written if SUITE_KEY.encode() in p.read_bytes()]
    assert holding == []
    print(f"searched {len(written)} files ({len(traces)} traces) for the key: none holds it")
