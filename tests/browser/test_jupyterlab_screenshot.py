"""A person's view: JupyterLab in headless Chromium with notebook 02 open and rendered.

The notebook is first executed (nbclient) into a temporary folder so that JupyterLab renders its real outputs;
then JupyterLab is started on loopback, Debian's chromium (driven by Playwright, no browser download) opens the
notebook, waits for the rendered charts, and saves a screenshot to ``out/browser/jupyterlab_02.png``. Skipped
with a reason where chromium or playwright is absent.
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
import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = REPO / "notebooks" / "02_replay_one_run.ipynb"
SHOT = REPO / "out" / "browser" / "jupyterlab_02.png"
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


@pytest.mark.timeout(300)
def test_notebook_02_renders_in_jupyterlab(tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, timeout=240, resources={"metadata": {"path": str(REPO / "notebooks")}}).execute()
    served = tmp_path / "lab"
    served.mkdir()
    nbformat.write(nb, served / NOTEBOOK.name)

    # No news pop-up over the notebook, no update check: a closed network and a clean picture.
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps({"fetchNews": "false"}))
    # Render every cell (JupyterLab 4 otherwise windows cells below the fold out of the page).
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension"
    tracker.mkdir(parents=True)
    (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
    env = {
        **os.environ,
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    port, token = _free_port(), "workbench-browser-test"
    lab = subprocess.Popen(
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
            page.goto(f"http://127.0.0.1:{port}/lab/tree/{NOTEBOOK.name}?token={token}")
            page.wait_for_selector(".jp-OutputArea-output img", timeout=90_000)
            title = page.locator(".jp-MarkdownOutput h1").first.inner_text(timeout=30_000)
            images = page.locator(".jp-OutputArea-output img").count()
            # Show the first timeline, as a person scrolling to it would see it.
            page.locator(".jp-OutputArea-output img").first.scroll_into_view_if_needed()
            page.wait_for_timeout(1000)
            SHOT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOT))
            browser.close()
    finally:
        lab.terminate()
        lab.wait(15)
    assert "Replay one run" in title
    assert images >= 3  # the timeline under each of the three policies
    assert SHOT.stat().st_size > 50_000  # a rendered page, not a blank one
