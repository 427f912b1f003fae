"""Every notebook runs on a corpus it was never written for, as an analyst would run it:
``papermill NOTEBOOK out.ipynb -p corpus DIR``, DIR a folder of labelled native traces this test writes. In the
saved notebook every chart is an image (not a ``<Figure ...>`` repr), every widget has a readable text fallback
(not the widget tree), and every progress bar ends at its total."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
papermill = pytest.importorskip("papermill")

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9]*.ipynb"))
BAR = re.compile(r"(\d+)/(\d+) \[")  # tqdm's "n/total [elapsed..." readout


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """4 labelled synthetic runs (2 resolved, 2 unresolved, a priced model), written as native traces: the fewest
    that run every cell; 30 gave the same charts, widgets and bars at more cost."""
    from workbench.scenarios.labelled import labelled_runs
    from workbench.trace import write_run

    root = tmp_path_factory.mktemp("my-runs")
    runs = labelled_runs(4, seed=7)
    assert sorted(r.outcome.label for r in runs) == ["resolved", "resolved", "unresolved", "unresolved"]
    for run in runs:
        write_run(run, root / f"{run.run_id}.jsonl")
    return root


def test_every_notebook_has_a_parameters_cell_first() -> None:
    for path in NOTEBOOKS:
        nb = nbformat.read(path, 4)
        first = next(c for c in nb.cells if c.cell_type == "code")
        assert "parameters" in first.metadata.get("tags", []), path.name
        assert 'corpus = os.environ.get("WORKBENCH_CORPUS", "")' in first.source, path.name


def _outputs(nb):  # type: ignore[no-untyped-def]
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            yield i, out


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs_on_my_corpus(path: Path, corpus: Path, tmp_path: Path) -> None:
    out = tmp_path / path.name
    papermill.execute_notebook(
        str(path), str(out), parameters={"corpus": str(corpus)}, kernel_name="python3", progress_bar=False,
        cwd=str(path.parent),
    )  # fmt: skip
    nb = nbformat.read(out, 4)
    injected = next(c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", []))
    assert str(corpus) in injected.source
    images = 0
    for i, o in _outputs(nb):
        data = o.get("data", {})
        text = data.get("text/plain", "")
        if "image/png" in data:
            images += 1
        else:
            assert not text.startswith("<Figure"), f"{path.name} cell {i}: a chart saved as its repr: {text}"
        if "application/vnd.jupyter.widget-view+json" in data:
            assert not re.match(r"\w+\(children=", text), f"{path.name} cell {i}: widget saved as its repr"
        stream = o.get("text", "") if o.get("output_type") == "stream" else ""
        readouts = BAR.findall(stream)
        if readouts:  # a text bar (no widgets): its last readout is its total
            assert readouts[-1][0] == readouts[-1][1], f"{path.name} cell {i}: {stream[-200:]}"
    # a widget bar's text is its first frame; the saved widget state holds where it ended
    state = (
        nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {}).get("state", {})
    )
    bars = [
        m["state"] for m in state.values() if m["model_name"] in ("FloatProgressModel", "IntProgressModel")
    ]
    assert [(b["value"], b["max"]) for b in bars if b["value"] != b["max"]] == [], path.name
    if any("progress=True" in c.source for c in nb.cells if c.cell_type == "code"):
        assert bars or any(BAR.search(o.get("text", "")) for _, o in _outputs(nb)), (
            f"{path.name}: no progress bar"
        )
    charts = sum(
        1
        for c in nb.cells
        if c.cell_type == "code" and re.search(r"\w+_chart\(|run_timeline\(|stop_heatmap\(", c.source)
    )
    assert images >= min(1, charts), path.name
