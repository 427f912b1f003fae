"""A person's view: JupyterLab in headless Chromium with notebook 02 open, run, and the explorer used.

A copy of notebook 02 is served by a JupyterLab started on loopback; Debian's chromium (driven by Playwright, no
browser download) opens it, runs every cell from the Run menu with a live kernel, checks that no cell raised,
saves a screenshot of the first rendered timeline (``out/browser/jupyterlab_02.png``), then changes the
explorer's rule set in the page and checks that the decisions it shows update
(``out/browser/jupyterlab_02_explorer.png``). Skipped with a reason where chromium or playwright is absent.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "02_replay_one_run.ipynb"
SHOT = REPO / "out" / "browser" / "jupyterlab_02.png"
EXPLORER_SHOT = REPO / "out" / "browser" / "jupyterlab_02_explorer.png"
FAILURE_SHOT = REPO / "out" / "browser" / "jupyterlab_02_failure.png"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(root: Path) -> Path:
    """JupyterLab user settings for a quiet, fully rendered page."""
    for folder, name, value in (
        ("@jupyterlab/apputils-extension", "notification", {"fetchNews": "false"}),  # no news pop-up
        ("@jupyterlab/notebook-extension", "tracker", {"windowingMode": "none"}),  # render every cell
    ):
        (root / folder).mkdir(parents=True, exist_ok=True)
        (root / folder / f"{name}.jupyterlab-settings").write_text(json.dumps(value))
    return root


@pytest.fixture()
def lab(tmp_path: Path):
    served = tmp_path / "lab"
    served.mkdir()
    shutil.copy(NOTEBOOK, served / NOTEBOOK.name)  # a copy: autosave never touches the repository's notebook
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(_settings(tmp_path / "settings")),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    port, token = _free_port(), "workbench-browser-test"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={served}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            try:
                if (
                    httpx.get(f"http://127.0.0.1:{port}/api/status?token={token}", timeout=2).status_code
                    == 200
                ):
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not start within 90 s")
        yield f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}?token={token}"
    finally:
        proc.terminate()
        proc.wait(15)


# Every image decoded and two frames painted since: what the screenshot shows is what the page holds.
SETTLED = """() => new Promise(done => {
    const images = [...document.querySelectorAll('.jp-OutputArea-output img')];
    if (!images.every(i => i.complete && i.naturalWidth > 0)) return done(false);
    requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
})"""


def _settle(page) -> None:  # type: ignore[no-untyped-def]
    """The kernel idle (the explorer's chart is redrawn after its text) and the page painted."""
    page.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=120_000)
    page.wait_for_function(SETTLED, timeout=60_000)


@pytest.mark.timeout(420)
def test_notebook_02_runs_and_the_explorer_responds_in_jupyterlab(lab: str) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
            ],
        )
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        page.goto(lab)
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
        # The kernel must be connected before "Run All" means anything (a click before that is ignored).
        page.wait_for_selector(".jp-StatusBar-TextItem:has-text('| Idle')", timeout=120_000)
        for _attempt in range(3):
            # Run every cell, as a person would from the Run menu, with a live kernel.
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
            page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()
            try:  # the first code cell gets an execution count once the kernel has taken the request
                page.wait_for_selector(".jp-InputPrompt:has-text('[1]')", timeout=60_000)
                break
            except sync_api.Error:
                continue
        # The explorer is the last cell: its slider appears once everything above it has run.
        try:
            page.wait_for_selector(".jp-OutputArea-output .widget-slider", timeout=300_000)
        except sync_api.Error:
            FAILURE_SHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(FAILURE_SHOT))
            shown = page.locator(".jp-OutputArea-output").all_inner_texts()
            pytest.fail(
                f"the explorer never rendered (screenshot {FAILURE_SHOT}); last outputs: {shown[-3:]}"
            )
        title = page.locator(".jp-MarkdownOutput h1").first.inner_text()
        errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.error']").count()
        images = page.locator(".jp-OutputArea-output img").count()
        page.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
        _settle(page)
        SHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOT))

        explorer = page.locator(".jp-OutputArea-output .widget-vbox").first
        explorer.scroll_into_view_if_needed()
        before = explorer.inner_text()
        # Change the rule set in the page: the explorer must replay under ink-s9 and show it.
        explorer.locator("select").nth(1).select_option("ink-s9")
        page.wait_for_function(
            "el => el.innerText.includes('ink-s9 g=')", arg=explorer.element_handle(), timeout=60_000
        )
        after = explorer.inner_text()
        _settle(page)
        page.screenshot(path=str(EXPLORER_SHOT))
        browser.close()
    assert "Replay one run" in title
    assert errors == 0
    assert images >= 3  # the runaway's timeline under each of the three policies
    assert "current g=250,000" in before and "1,442,112" in before  # where the notebook left it
    assert "ink-s9 g=250,000" in after and "1,442,112" not in after
    assert SHOT.stat().st_size > 50_000 and EXPLORER_SHOT.stat().st_size > 50_000
