"""An executed tour, saved with its widget state as nbconvert and JupyterLab save it, is small."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

TOUR = Path(__file__).resolve().parents[2] / "notebooks" / "01_tour.ipynb"


def test_the_executed_tour_with_widget_state_is_under_a_megabyte(tmp_path: Path) -> None:
    notebook = nbformat.read(TOUR, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    saved = nbformat.writes(notebook)
    state = json.dumps(notebook.metadata.get("widgets", {}))
    # The live plot's state is in there (its figure), but not plotly's 5 MB bundle.
    assert "ctxlab-plot" in state and "Tokens per reasoning request" in state
    assert "plotly.js v" not in saved and "Plotly.register" not in saved
    assert len(saved.encode()) < 1_000_000, f"{len(saved.encode()):,} bytes"
