"""The plots look the same with plotly.js's basic bundle (what the kernel sends the page) as
with the full bundle the plotly package ships (what it sent before): the widgets' own figures —
a recording's budget plot with its compaction marks and selection line, the what-if lab's
lines and bill — are drawn by each bundle in headless Chromium and their pictures compared
pixel for pixel.

Control: a heatmap (a trace type the basic bundle lacks) draws a different picture, so the
comparison sees what a missing trace type would change.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from importlib import resources
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from tests.browser.jupyter import CHROMIUM_ARGS

CHROMIUM = Path(os.environ.get("CTXLAB_CHROMIUM", "/usr/bin/chromium"))
sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
if not CHROMIUM.exists() and os.environ.get("CTXLAB_REQUIRE_BROWSER"):
    pytest.fail(f"CTXLAB_REQUIRE_BROWSER is set but there is no Chromium at {CHROMIUM}")
if not CHROMIUM.exists():
    pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium", allow_module_level=True)

BASIC = Path(__file__).parents[2] / "widgets" / "plotly-basic.min.js"
FULL = Path(str(resources.files("plotly").joinpath("package_data/plotly.min.js")))
SESSION = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


@pytest.fixture(scope="module")
def pages() -> Iterator[dict[str, Any]]:
    """A page with each bundle loaded, the same size."""
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        opened = {}
        for name, bundle in (("basic", BASIC), ("full", FULL)):
            page = browser.new_page(viewport={"width": 1000, "height": 700})
            page.set_content("<html><body style='margin:0'><div id='plot'></div></body></html>")
            page.add_script_tag(path=str(bundle))
            opened[name] = page
        yield opened
        browser.close()


def _picture(page: Any, figure: dict[str, Any]) -> bytes:
    """``figure`` drawn alone at 900 × 500 (no animation), as PNG bytes."""
    page.evaluate(
        """async (figure) => {
            const div = document.getElementById('plot');
            window.Plotly.purge(div);
            const layout = {...figure.layout, width: 900, height: 500, transition: {duration: 0}};
            await window.Plotly.newPlot(div, figure.data, layout, {displaylogo: false});
        }""",
        figure,
    )
    return bytes(page.locator("#plot").screenshot())


def _figure(data: list[dict[str, Any]], layout: dict[str, Any]) -> dict[str, Any]:
    # plotly's own encoder: the NumPy arrays the LivePlot keeps become plain lists.
    return dict(pio.from_json(pio.to_json({"data": data, "layout": layout})).to_plotly_json())


def _widget_figures() -> dict[str, dict[str, Any]]:
    from ctxlab import load
    from ctxlab.widgets import Lab, WhatIfLab

    session = load(SESSION)
    lab = asyncio.run(Lab.open(session, context_window=32_000))
    what = asyncio.run(WhatIfLab.open(session, context_window=32_000))
    figures = {
        "recording": _figure(lab.budget.plot.data, lab.budget.plot.layout),
        "what-if": _figure(what.plot.data, what.plot.layout),
    }
    lab.select(2)  # another selection line
    figures["recording, request 2"] = _figure(lab.budget.plot.data, lab.budget.plot.layout)
    return figures


def test_the_widgets_figures_look_the_same_with_the_basic_bundle(pages: dict[str, Any]) -> None:
    # In a thread of its own: playwright's sync API keeps an event loop running in this one.
    with ThreadPoolExecutor(1) as pool:
        figures = pool.submit(_widget_figures).result()
    for name, figure in figures.items():
        assert figure["data"], name  # a figure with lines, not an empty frame
        basic, full = (_picture(pages[b], figure) for b in ("basic", "full"))
        assert basic == full, f"{name}: the basic bundle draws it differently"
        # Drawn, not two blank frames: the same layout without its traces looks otherwise.
        assert full != _picture(pages["full"], {"data": [], "layout": figure["layout"]}), name
        if os.environ.get("CTXLAB_SHOTS"):  # to look at them
            Path(os.environ["CTXLAB_SHOTS"], f"bundle-{name}.png").write_bytes(basic)


def test_control_a_trace_type_the_basic_bundle_lacks_changes_the_picture(
    pages: dict[str, Any],
) -> None:
    figure = go.Figure(go.Heatmap(z=[[1, 2], [3, 4]])).to_plotly_json()
    basic, full = (_picture(pages[b], figure) for b in ("basic", "full"))
    assert basic != full
