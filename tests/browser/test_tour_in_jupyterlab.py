"""The notebooks in real JupyterLab, in headless Chromium: the dashboard renders and works.

Starts JupyterLab on 127.0.0.1 (`tests.browser.jupyter`: a free port; a temporary root holding a
copy of the notebooks and the session fixtures they read), opens a notebook in a workspace of its own, runs all cells, and
checks. The tour: the budget plot has one x per reasoning request, hovering the plot reads a
request's total and its share of the limit, a click on the items table's tokens header sorts it
both ways and typing filters it, a click on a map segment opens its block in the Context tab,
moving the trigger slider moves the trigger line before Apply (the plot and the Config tab say
"not applied" until Apply), "Compact now" adds a compaction
marker, and a tool output holding ``<img src=x onerror=alert(1)>`` shows as text and fires no
dialog. Your own sessions: a Claude Code session opened in the Lab draws the provider's billed
usage beside the estimate. Forks: the fork lab overlays each run's curve and marks where its
context parts from the reference, and the Lab's Fork button forks at the selected request and
opens the outcomes. Screenshots are kept as the tests' artifacts in
``$CTXLAB_ARTIFACTS`` (default ``build/browser-artifacts/<test>``); every server started is
stopped.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.browser.jupyter import CHROMIUM_ARGS, running_jupyterlab
from tests.helpers import offline_context

CHROMIUM = Path(os.environ.get("CTXLAB_CHROMIUM", "/usr/bin/chromium"))
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
if not CHROMIUM.exists() and os.environ.get("CTXLAB_REQUIRE_BROWSER"):
    pytest.fail(f"CTXLAB_REQUIRE_BROWSER is set but there is no Chromium at {CHROMIUM}")
if not CHROMIUM.exists():
    pytest.skip(
        f"no Chromium at {CHROMIUM}: apt-get install chromium (.ci/run does), or set CTXLAB_CHROMIUM",
        allow_module_level=True,
    )

REPO = Path(__file__).parents[2]
TOUR = REPO / "notebooks" / "01_tour.ipynb"
SESSIONS = REPO / "notebooks" / "03_your_own_sessions.ipynb"
FORKS = REPO / "notebooks" / "12_forks.ipynb"
ARGS = CHROMIUM_ARGS
XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp_path = tmp_path_factory.mktemp("jupyterlab")
    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    for notebook in (TOUR, SESSIONS, FORKS):
        shutil.copy(notebook, root / "notebooks" / notebook.name)
    shutil.copytree(REPO / "tests" / "fixtures", root / "tests" / "fixtures")
    # No "get notified about Jupyter news?" toast over the dashboard in the screenshots.
    settings = tmp_path / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
    options = {
        "LabApp.workspaces_dir": str(tmp_path / "workspaces"),
        "LabApp.user_settings_dir": str(tmp_path / "settings"),
    }
    env = {**os.environ, "ANTHROPIC_API_KEY": ""}
    try:
        with running_jupyterlab(
            root, tmp_path / "jupyterlab.log", options=options, env=env
        ) as base:
            yield base
    except RuntimeError as exc:  # it did not start: the test fails saying where its log is
        pytest.fail(str(exc))


TOKENS_COLUMN = (
    "() => { const t = document.querySelector('table.ctxlab-items');"
    " const at = [...t.tHead.rows[0].cells].findIndex(c => c.dataset.column === 'tokens');"
    " return [...t.tBodies[0].rows].map(r => Number(r.cells[at].textContent)); }"
)
"""The tokens column of the first items table, as the reader sees it (JS)."""


def _hover(page: Any, box: dict[str, float], shown: str) -> None:
    """Move over the plot as a hand does, in small steps, until ``shown`` (JS) is true.

    A redraw (the kernel's last updates can still be arriving) clears a hover label, so the
    pointer moves again rather than waiting on one move.
    """
    for attempt in range(10):
        page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
        x = box["x"] + box["width"] * (0.5 + 0.02 * attempt)
        page.mouse.move(x, box["y"] + box["height"] * 0.5, steps=8)
        if page.evaluate(f"() => {shown}"):
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"no hover label with {shown!r} after 10 moves over the plot")


def _plot_counts(page: object) -> dict[str, int]:
    return page.evaluate(  # type: ignore[attr-defined, no-any-return]
        """() => {
            const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.data);
            if (!gd) return {};
            const out = {};
            for (const t of gd.data) out[t.name] = t.x ? t.x.length : 0;
            return out;
        }"""
    )


def _run_all(page: Any, base: str, notebook: str) -> None:
    """Open ``notebook`` in a fresh workspace of its own (nothing restored from another test),
    wait for its kernel, run all cells."""
    name = notebook.split(".")[0].replace("_", "-")
    page.goto(
        f"{base}/lab/workspaces/{name}/tree/notebooks/{notebook}?reset",
        wait_until="domcontentloaded",
    )
    page.wait_for_function(
        "window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        f" && window.jupyterapp.shell.currentWidget.context.path.endsWith('{notebook}')",
        timeout=90_000,
    )
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=90_000)
    page.evaluate(
        """async () => {
            const nb = window.jupyterapp.shell.currentWidget;
            await nb.context.ready; await nb.sessionContext.ready;
            while (!nb.sessionContext.session?.kernel
                   || nb.sessionContext.session.kernel.status !== 'idle')
                await new Promise(r => setTimeout(r, 100));
        }"""
    )
    page.evaluate("window.jupyterapp.commands.execute('notebook:run-all-cells')")


@contextmanager
def _notebook_run(base: str, notebook: str, dialogs: list[str] | None = None) -> Iterator[Any]:
    """A page of the JupyterLab at ``base`` running all of ``notebook``'s cells (headless
    Chromium, closed after); the messages of any dialog it opens go to ``dialogs``."""
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            if dialogs is not None:
                page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            _run_all(page, base, notebook)
            yield page
        finally:
            browser.close()


@pytest.fixture
def shots(request: pytest.FixtureRequest) -> Path:
    """Where a test's screenshots are kept, after the run too: the test's artifacts.

    ``$CTXLAB_ARTIFACTS`` (default ``build/browser-artifacts``) / the test's name; CI keeps it.
    """
    root = Path(os.environ.get("CTXLAB_ARTIFACTS", REPO / "build" / "browser-artifacts"))
    folder = root / request.node.name
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def test_tour_runs_and_the_dashboard_works(jupyterlab: str, shots: Path) -> None:
    dialogs: list[str] = []
    with _notebook_run(jupyterlab, TOUR.name, dialogs) as page:
        # The last cell prints this; everything before it has run.
        page.wait_for_function("document.body.innerText.includes('window 32000')", timeout=180_000)
        page.screenshot(path=str(shots / "after-run.png"))
        text = page.inner_text(".jp-Notebook")
        assert "Traceback" not in text, text[text.find("Traceback") - 500 :][:3000]
        requests = int(re.search(r"(\d+) requests in all", text).group(1))  # type: ignore[union-attr]

        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=30_000)
        page.wait_for_function(
            f"""() => {{
                const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.data);
                const t = gd && gd.data.find(t => t.name === 'conversation');
                return t && t.x && t.x.length === {requests};
            }}""",
            timeout=30_000,
        )
        counts = _plot_counts(page)
        assert counts["system"] == counts["conversation"] == requests
        assert counts["input limit"] == requests + 1
        assert page.locator("table.ctxlab-items").count() >= 1
        assert page.locator(".widget-slider").count() >= 3
        assert page.locator(".ctxlab-map .ctxlab-seg").count() >= 3

        # "Compact now" in the browser adds a compaction marker to the plot.
        before = counts["compaction"]
        page.get_by_role("button", name="Compact now").first.click()
        page.wait_for_function(
            f"""() => {{
                const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.data);
                const t = gd && gd.data.find(t => t.name === 'compaction');
                return t && t.x && t.x.length === {before + 1};
            }}""",
            timeout=30_000,
        )

        # Hovering the plot reads, for that request, its total and its share of the limit.
        drag = page.locator(".js-plotly-plot .nsewdrag").first
        drag.scroll_into_view_if_needed()
        box = drag.bounding_box()
        assert box is not None
        _hover(
            page,
            box,
            "[...document.querySelectorAll('.hoverlayer')].some(h =>"
            " h.textContent.includes('% of the input limit')"
            " && h.textContent.includes('total'))",
        )
        page.screenshot(path=str(shots / "hover.png"))

        # The items table: a header click sorts (ascending, then descending), typing filters.
        page.get_by_role("tab", name="Manifest").first.click()
        header = page.locator("table.ctxlab-items th[data-column='tokens']").first
        header.scroll_into_view_if_needed()
        header.click()
        page.wait_for_function(
            f"() => {{ const v = ({TOKENS_COLUMN})(); return v.length > 2"
            " && v.every((x, i) => i === 0 || v[i - 1] <= x); }"
        )
        header.click()
        page.wait_for_function(
            f"() => {{ const v = ({TOKENS_COLUMN})(); return v.length > 2"
            " && v.every((x, i) => i === 0 || v[i - 1] >= x)"
            " && v[0] > v[v.length - 1]; }"
        )
        assert "▼" in header.inner_text()
        every = len(page.evaluate(f"({TOKENS_COLUMN})"))
        page.locator(".ctxlab-table-filter").first.fill("tool result of")
        page.wait_for_function(
            "() => { const rows = [...document.querySelector('table.ctxlab-items')"
            ".tBodies[0].rows]; return rows.length > 0 && rows.length < "
            + str(every)
            + " && rows.every(r => r.cells[2].textContent.startsWith('tool result of')); }"
        )
        page.screenshot(path=str(shots / "table-sorted-filtered.png"))
        page.locator(".ctxlab-table-filter").first.fill("")

        # A click on a map segment opens its block at the top of the Context tab.
        segment = page.locator(".ctxlab-map .ctxlab-seg:not(.ghost)").nth(1)
        segment.scroll_into_view_if_needed()
        segment.click()
        page.wait_for_selector(".ctxlab-context .ctxlab-focus", timeout=15_000)
        focus = page.locator(".ctxlab-context .ctxlab-focus").first
        assert "Selected item" in focus.inner_text()
        assert focus.locator("details[open]").count() >= 1
        page.screenshot(path=str(shots / "map-click.png"))

        # Moving the trigger slider moves the trigger line's next point before Apply, and
        # the plot and the Config tab say it is not applied; Apply applies it.
        last_trigger = (
            "() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]"
            ".find(g => g.data); const t = gd.data.find(t => t.name === 'trigger');"
            " return t.y[t.y.length - 1]; }"
        )
        said_over_next = (
            "() => [...document.querySelectorAll('.js-plotly-plot .annotation-text')]"
            ".map(a => a.textContent).join(' | ')"
        )
        before_trigger = page.evaluate(last_trigger)
        page.get_by_role("tab", name="Config").first.click()
        slider = page.locator(".widget-slider", has_text="Trigger ratio").first
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle").first
        handle.focus()
        for _ in range(10):
            handle.press("ArrowLeft")
        # The tour applied 0.5: ten steps left is 0.40, the line at 4/5 of where it was.
        moved = round(before_trigger * 0.8)
        page.wait_for_function(f"() => ({last_trigger})() === {moved}", timeout=15_000)
        page.wait_for_function(f"() => ({said_over_next})().includes('not applied')")
        status = page.locator(".widget-html", has_text="Not applied: trigger ratio 0.40")
        assert "(in force: 0.50)" in status.first.inner_text()
        page.screenshot(path=str(shots / "slider-not-applied.png"))
        page.get_by_role("button", name="Apply").first.click()
        page.wait_for_function(
            f"() => !({said_over_next})().includes('not applied')", timeout=15_000
        )
        assert page.evaluate(last_trigger) == moved
        page.get_by_text("Applied: in force from the next request").first.wait_for()
        page.screenshot(path=str(shots / "slider.png"))

        # The untrusted template is shown as text in the Context tab, never as markup.
        page.get_by_role("tab", name="Context").first.click()
        context = page.locator(".ctxlab-context").first
        context.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "context.png"))
        assert XSS in (context.text_content() or "")  # collapsed <details> included
        assert page.locator('.ctxlab-context img, img[src="x"]').count() == 0
        page.wait_for_timeout(500)
        assert dialogs == []
        page.screenshot(path=str(shots / "final.png"), full_page=True)
    assert (shots / "final.png").stat().st_size > 0


def test_a_claude_code_session_shows_its_billed_usage(jupyterlab: str, shots: Path) -> None:
    with _notebook_run(jupyterlab, SESSIONS.name) as page:
        try:
            page.wait_for_function(
                "document.body.innerText.includes('followed 5 requests')", timeout=120_000
            )
        finally:
            page.screenshot(path=str(shots / "sessions-run.png"), full_page=True)
            text = page.inner_text(".jp-Notebook")
            (shots / "sessions.txt").write_text(text)
        assert "Traceback" not in text, text[text.find("Traceback") - 500 :][:3000]
        # The first Lab is the Claude Code session: five requests, the billed input drawn.
        usage = page.evaluate(
            """() => {
                const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.data);
                const t = gd && gd.data.find(t => t.name === 'provider usage');
                const c = gd && gd.data.find(t => t.name === 'conversation');
                return t && {x: t.x.length, y: [...t.y], steps: c.x.length};
            }"""
        )
        page.screenshot(path=str(shots / "sessions.png"), full_page=True)
        assert usage == {"x": 5, "y": [14230, 19950, 20056, 14358, 14414], "steps": 5}

        # The recording's content reaches the panels: an item preview in the Manifest tab.
        # (JupyterLab renders only the cells in view: go back to the first Lab's cell.)
        _scroll_to(page, "lab = await Lab.open(claude")
        page.wait_for_selector(".ctxlab-notes", state="visible", timeout=30_000)
        # Every Lab's header has notes now (the clock's): the recording's says what it lacks.
        notes = page.locator(".ctxlab-notes", has_text="not recorded")
        lab = page.locator(".widget-vbox", has=notes).last
        lab.scroll_into_view_if_needed()
        header = lab.locator(".ctxlab-notes").first.inner_text()
        assert "not recorded (System prompt, tool schemas): 14," in header, header
        assert "1 recorded compaction" in header, header
        whats = page.evaluate(
            "() => [...document.querySelector('table.ctxlab-items').tBodies[0].rows]"
            ".map(r => r.cells[2].textContent)"
        )
        assert any(w.startswith("user: The ingest workers time out") for w in whats), whats
        # The session's own compaction is marked on the plot, between requests 2 and 3.
        marker = page.evaluate(
            """() => {
                const gd = [...document.querySelectorAll('.js-plotly-plot')].find(g => g.data);
                const t = gd.data.find(t => t.name === 'recorded compaction');
                return t && {x: [...t.x], text: [...t.text]};
            }"""
        )
        assert marker["x"] == [2.5], marker
        assert marker["text"][0].startswith("recorded compaction (manual) before request 3")
        assert page.locator(".ctxlab-static:visible").count() == 0  # the widgets render
        # Tall enough for the whole Lab: JupyterLab clips what is outside its panel.
        page.set_viewport_size({"width": 1400, "height": 2400})
        page.wait_for_timeout(500)
        lab.scroll_into_view_if_needed()
        lab.screenshot(path=str(shots / "recording-lab.png"))
        if os.environ.get("CTXLAB_UPDATE_DOCS_SCREENSHOT"):
            # The picture of the getting-started page (docs/images/lab.png).
            lab.screenshot(path=str(REPO / "docs" / "images" / "lab.png"))
        page.set_viewport_size({"width": 1400, "height": 1000})

        # A block of the recording in the Context tab.
        page.get_by_role("tab", name="Context").first.click()
        context = page.locator(".ctxlab-context").first
        context.wait_for(timeout=15_000)
        assert "ingest workers time out" in (context.text_content() or "")
        page.screenshot(path=str(shots / "recording-context.png"))

        # Apply replays the recording, with progress in the status line.
        page.evaluate(
            r"""() => {
                window.ctxlabStatus = [];
                // What each change put on the page (the status line is an HTML widget,
                // whose new value arrives as new nodes): read the nodes added, which keep
                // their text after a later value replaces them.
                new MutationObserver(records => {
                    for (const r of records) {
                        for (const node of r.addedNodes) {
                            const text = (node.textContent || '').slice(0, 300);
                            const m = text.match(/replaying \d+ requests…/);
                            if (m && !window.ctxlabStatus.includes(m[0]))
                                window.ctxlabStatus.push(m[0]);
                        }
                    }
                }).observe(document.body, {subtree: true, childList: true});
            }"""
        )
        page.get_by_role("tab", name="Config").first.click()
        page.get_by_role("button", name="Apply").first.click()
        page.wait_for_function(
            "document.body.innerText.includes('replaying 5 requests… done · read-only "
            "recording · 5 requests replayed under the config in force')",
            timeout=30_000,
        )
        # The running progress ("replaying 5 requests… k done") lasts milliseconds on 5
        # requests and may be painted over before an observer sees it: its sequence is
        # asserted from Python (tests/widgets/test_recording_lab.py), the finished line
        # above; what an observer saw is kept as an artifact.
        (shots / "status-seen.txt").write_text("\n".join(page.evaluate("window.ctxlabStatus")))
        page.screenshot(path=str(shots / "recording-applied.png"))


TRACES = (
    "() => [...document.querySelectorAll('.js-plotly-plot')].filter(g => g.data)"
    ".map(g => Object.fromEntries(g.data.map(t => [t.name, t.x ? [...t.x] : []])))"
)
"""Each drawn plotly figure's traces (JS): name → x values."""


def test_forks_overlay_their_runs_and_the_lab_forks_at_a_button(
    jupyterlab: str, shots: Path
) -> None:
    with _notebook_run(jupyterlab, FORKS.name) as page:
        try:
            page.wait_for_function(
                # The last cell's (the fork of a recording handed over to Claude).
                "document.body.innerText.includes('set ANTHROPIC_API_KEY to hand the recording')",
                timeout=240_000,
            )
        finally:
            page.screenshot(path=str(shots / "forks-run.png"))
        text = page.inner_text(".jp-Notebook")
        assert "Traceback" not in text, text[text.find("Traceback") - 500 :][:3000]
        # The report's cell is far above the last one (JupyterLab renders only the cells
        # in view): brought into view, its output read.
        _scroll_to(page, "report = forked.report(")
        page.wait_for_function(
            "document.body.innerText.includes('forks done: 9 runs')", timeout=30_000
        )
        text = page.inner_text(".jp-Notebook")
        assert "Traceback" not in text, text[text.find("Traceback") - 500 :][:3000]
        # The fork lab: each run's curve, and an ✕ where a run's context parts from the
        # reference's — at the fork (request 2), for the three runs of two branches.
        _scroll_to(page, "forked = ForkLab(")
        page.wait_for_function(
            f"() => ({TRACES})().some(f => 'original · run 2' in f)", timeout=60_000
        )
        figure = next(f for f in page.evaluate(TRACES) if "original · run 2" in f)
        assert figure["context parts from the reference"] == [2] * 6, figure
        assert figure["eager compaction · run 0"] == list(range(14))
        page.screenshot(path=str(shots / "fork-lab.png"))
        # The Lab's Fork tab: the button names the selected request; a click forks there.
        _scroll_to(page, "from pathlib import Path")  # the cell that shows the Lab
        page.get_by_role("tab", name="Fork").first.click()
        button = page.get_by_role("button", name="Fork at request 2").first
        button.scroll_into_view_if_needed()
        button.click()
        # 1 of 1 passed: the 95 % Wilson interval is 1 / (1 + z²) = 0.21 to 1.
        page.wait_for_function(
            "document.body.innerText.includes('done: passed the check — original 1/1 "
            "(95%: 0.21–1.00), observation_masking 1/1 (95%: 0.21–1.00)')",
            timeout=120_000,
        )
        # The tab now shows the button's fork (one run each), not the cell's (two each).
        page.wait_for_function(
            f"() => ({TRACES})().some(f => 'observation_masking · run 0' in f"
            " && !('observation_masking · run 1' in f))",
            timeout=60_000,
        )
        page.screenshot(path=str(shots / "lab-fork.png"))


def _scroll_to(page: Any, start: str) -> None:
    """Bring the cell whose source starts with ``start`` into view (JupyterLab renders only
    the cells in view)."""
    page.evaluate(
        """async (start) => {
            const nb = window.jupyterapp.shell.currentWidget.content;
            const at = nb.widgets.findIndex(c => c.model.sharedModel.source.startsWith(start));
            nb.activeCellIndex = at;
            await nb.scrollToItem(at, 'start');
        }""",
        start,
    )


def test_the_executed_tour_converted_to_html_reads_offline(tmp_path: Path, shots: Path) -> None:
    """nbconvert's HTML of the executed tour (widget state stored, as ``jupyter nbconvert
    --execute`` does), opened with the network blocked: the Lab's snapshot shows the session's
    final request count."""
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    notebook = nbformat.read(TOUR, as_version=4)
    NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(TOUR.parent)}},
    ).execute()
    assert "widgets" in notebook.metadata  # the state nbconvert's page would draw widgets from
    body, _ = HTMLExporter().from_notebook_node(notebook)
    page_path = tmp_path / "tour.html"
    page_path.write_text(body, encoding="utf-8")
    printed = "\n".join(
        o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs
    )
    requests = int(re.search(r"(\d+) requests in all", printed).group(1))  # type: ignore[union-attr]
    blocked: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=ARGS)
        try:
            page = offline_context(browser, blocked).new_page()
            page.goto(page_path.as_uri(), wait_until="load")
            page.wait_for_timeout(1000)
            snapshot = page.locator(".ctxlab-static").first
            assert snapshot.is_visible()
            text = snapshot.inner_text()
            page.screenshot(path=str(shots / "tour-offline.png"), full_page=True)
            assert f"{requests} requests" in text, text[:500]
            assert "no requests yet" not in text
        finally:
            browser.close()
    assert blocked  # the page did try its CDNs: the snapshot shows without them
