"""The Lab's and the what-if lab's views in real JupyterLab, in headless Chromium, in a notebook
whose last cell keeps the kernel busy (a "Run All" where a later cell runs long).

The kernel answers the views' request for plotly.js only once the cells queued before it end:
the plots must say why nothing is drawn yet, then draw — not stay blank for good, as they did
when the wait passed 4 s. On the way: no view raises an error in the page (every budget panel
used to), a recording as recorded draws no trigger or usage-notice line it does not know (its
legend says "unknown") and no "next request", its header names the model the file says
answered, and the what-if draws the bill inside its axis, keeps its table inside the output
and names what one config dropped.
The JupyterLab server and the helpers are those of `test_tour_in_jupyterlab` (its server from
`tests/browser/jupyter.py`, which uploads the notebook).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.browser.jupyter import upload
from tests.browser.test_tour_in_jupyterlab import (
    ARGS,
    CHROMIUM,
    _run_all,
    jupyterlab,  # noqa: F401 - the server fixture, used by name
    playwright,
    shots,  # noqa: F401 - the artifacts fixture, used by name
)

BUSY_SECONDS = 20
"""How long the last cell keeps the kernel busy: well past the views' 4 s wait."""
NOTEBOOK = "views_busy_kernel.ipynb"
CELLS = [
    # The kernel sends plotly.js ahead once (`PlotView.send_plotly_ahead`, from the Lab's read):
    # when that copy reached the page before the what-if's 4 s wait ended, no view ever waited
    # and this test timed out (once in CI). Marked as sent, the page asks, as a page opened
    # after that copy (or reloaded) does: the path this test is about, every run.
    "from ctxlab.widgets._plot import PlotView\n"
    "PlotView._sent_ahead = True\n"
    "from ctxlab import load\n"
    "from ctxlab.widgets import Lab, WhatIfLab\n"
    "session = load('../tests/fixtures/sessions/claude_code_session.jsonl')\n"
    "what = await WhatIfLab.open(session, context_window=32_000)\n"
    "what.step.value = 4\n"
    "what.diff_b.value = 'agentscope'\n"
    "what",
    "lab = await Lab.open(session, context_window=200_000, view='recorded')\nlab",
    f"import time\ntime.sleep({BUSY_SECONDS})\nprint('the busy cell ended')",
]


def _plot(page: Any, title: str) -> Any:
    """The traces (by legend name, and by uid where the trace has one: a line whose legend says
    "unknown") and axes of the plot whose legend or uids hold ``title`` (JS values)."""
    return page.evaluate(
        """(title) => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')]
                .find(g => g.data && g.data.some(t => t.name === title || t.uid === title));
            if (!gd) return null;
            const traces = {};
            for (const t of gd.data) {
                const trace = {x: Array.from(t.x || []),
                    y: Array.from(t.y || []).map(v => Number.isNaN(v) ? 'NaN' : v)};
                traces[t.name] = trace;
                if (t.uid) traces[t.uid] = trace;
            }
            return {traces, range: gd._fullLayout.yaxis.range,
                    names: gd.data.map(t => t.name),
                    annotations: (gd.layout.annotations || []).map(a => a.text)};
        }""",
        title,
    )


def test_the_views_draw_when_a_busy_kernel_is_free_and_raise_nothing(
    jupyterlab: str,  # noqa: F811 - the fixture imported above
    shots: Path,  # noqa: F811
) -> None:
    upload(jupyterlab, f"notebooks/{NOTEBOOK}", CELLS)
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 2400})
            page.on("pageerror", lambda e: errors.append(f"{e}\n{e.stack}"))
            _run_all(page, jupyterlab, NOTEBOOK)
            # While the busy cell runs, a plot says why it is not drawn yet. Read at the instant
            # one says so (another may draw meanwhile: plotly.js answered before the busy cell
            # started reaches every plot): each plot either says why it waits and draws nothing,
            # or has drawn and says nothing — never both, never neither.
            states = page.wait_for_function(
                """() => {
                    const states = [...document.querySelectorAll('.ctxlab-plot')].map(d => {
                        const s = d.previousElementSibling;  // the view's status, then its plot
                        const said = !!s && s.style.display !== 'none'
                            && s.textContent.includes('busy running a cell');
                        const shown = !!s && s.style.display !== 'none' && s.textContent.trim() !== '';
                        return [said, shown, !!d.querySelector('.main-svg')];
                    });
                    return states.some(([said]) => said) ? states : null;
                }""",
                # From "Run All": the first two cells (a what-if replayed, a Lab opened) run
                # before any view waits; under load they took more than the default 30 s.
                timeout=(BUSY_SECONDS + 120) * 1000,
            ).json_value()
            assert len(states) == 2, states  # the what-if's plot and the Lab's
            assert all(shown != drawn for _, shown, drawn in states), states
            page.screenshot(path=str(shots / "waiting.png"))
            page.wait_for_function(
                "document.body.innerText.includes('the busy cell ended')",
                timeout=(BUSY_SECONDS + 120) * 1000,
            )
            # The kernel is free: it sends plotly.js, and both plots draw.
            page.wait_for_function(
                "(() => { const plots = [...document.querySelectorAll('.ctxlab-plot')];"
                " return plots.length === 2 && plots.every(d => d.querySelector('.main-svg')); })()",
                timeout=60_000,
            )
            statuses = page.evaluate(
                "() => [...document.querySelectorAll('.ctxlab-plot-status')]"
                ".map(s => s.style.display === 'none' ? '' : s.textContent)"
            )
            assert statuses == ["", ""], statuses
            page.screenshot(path=str(shots / "drawn.png"))
            text = page.inner_text(".jp-Notebook")
            assert "Traceback" not in text, text[text.find("Traceback") - 500 :][:3000]

            # The recording as recorded: no line it does not know, no next request.
            budget = _plot(page, "usage notice")
            names = page.evaluate(
                "() => [...document.querySelectorAll('.js-plotly-plot')]"
                ".map(g => (g.data || []).map(t => t.name))"
            )
            assert budget is not None, names
            for name in ("usage notice", "trigger"):
                assert budget["traces"][name]["y"] == ["NaN"] * 5, (name, budget["traces"][name])
                assert f"{name}: unknown" in budget["names"], budget["names"]  # never 0
            assert budget["traces"]["input limit"]["y"] == [200_000] * 5
            assert "next request" not in budget["annotations"]
            header = page.locator(".ctxlab-notes").first.locator("xpath=..").inner_text()
            assert "model claude-sonnet-4-6 (recorded)" in header and "replay of" not in header
            assert "view: as recorded" in header

            # The what-if: the bill inside the axis, the table inside the output.
            whatif = _plot(page, "billed (as recorded)")
            assert whatif is not None
            billed = max(whatif["traces"]["billed (as recorded)"]["y"])
            assert billed == 20_056 and whatif["range"][1] >= billed, whatif["range"]
            inside = page.evaluate(
                """() => [...document.querySelectorAll('table.ctxlab-whatif, table.ctxlab-diff')]
                    .map(t => {
                        const box = t.closest('.ctxlab-scroll').getBoundingClientRect();
                        const out = t.closest('.jp-OutputArea-output').getBoundingClientRect();
                        return [t.className, box.right <= out.right + 1, t.scrollWidth];
                    })"""
            )
            assert len(inside) == 2 and all(ok for _, ok, _ in inside), inside
            # What one config sent that the other did not, readable: kind, source, text.
            diff = page.evaluate(
                """() => { const t = document.querySelector('table.ctxlab-diff');
                    const head = [...t.tHead.rows[0].cells].map(c => c.textContent);
                    const at = head.indexOf('what');
                    return {head, whats: [...t.tBodies[0].rows].map(r => r.cells[at].textContent)};
                }"""
            )
            assert diff["head"][:5] == ["side", "kind", "source", "what", "tokens"], diff
            assert diff["whats"] and all(w and not w.startswith("message/") for w in diff["whats"])
            page.locator("table.ctxlab-diff").scroll_into_view_if_needed()
            page.screenshot(path=str(shots / "whatif-diff.png"))
        finally:
            browser.close()
    assert not errors, errors
