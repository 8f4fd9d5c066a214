"""The teaching series: every exercise's check can fail, and passes with the solution.

Each lesson notebook has an exercise cell (metadata ``ctxlab.exercise``, its solution in
``ctxlab.solution``) and a check cell after it (``ctxlab.check``). nbval runs the notebooks as
committed, placeholder in place: the check cell's stored output ("Not yet…") is compared, so an
unsolved exercise is known to fail its check. Here each lesson runs with its solution instead,
and the check must say ✓.
"""

from __future__ import annotations

from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
LESSONS = sorted(
    path
    for path in NOTEBOOKS.glob("*.ipynb")
    if any(c.metadata.get("ctxlab", {}).get("exercise") for c in nbformat.read(path, 4).cells)
)


def _output(cell: object) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")  # type: ignore[attr-defined]


def test_the_series_is_there() -> None:
    names = [path.stem for path in LESSONS]
    assert len(names) >= 5, names
    for path in LESSONS:
        cells = nbformat.read(path, 4).cells
        kinds = [c.metadata.get("ctxlab", {}) for c in cells]
        exercise = next(i for i, k in enumerate(kinds) if k.get("exercise"))
        assert kinds[exercise + 1].get("check"), f"{path.name}: no check cell after the exercise"
        # As committed, the check says the exercise is not done yet (nbval compares this).
        assert _output(cells[exercise + 1]).startswith("Not yet"), path.name


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_the_solution_passes_the_check(path: Path) -> None:
    notebook = nbformat.read(path, 4)
    for cell in notebook.cells:
        meta = cell.metadata.get("ctxlab", {})
        if meta.get("exercise"):
            cell.source = meta["solution"]
    nbclient.NotebookClient(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOKS)}},
    ).execute()
    check = next(c for c in notebook.cells if c.metadata.get("ctxlab", {}).get("check"))
    assert _output(check).startswith("✓"), _output(check)
