"""What the page spends on plotly.js before a Lab's first plot: the basic bundle the kernel sends
(``widgets/plotly-basic.min.js``) against the plotly package's full bundle (sent before).

    python benchmarks/plotly_bundle_bench.py [--requests 5000] [--repeat 5]

In headless Chromium (Debian's), each repeat opens a fresh page for each bundle, alternating
which goes first (every contender cold: a new page has no compiled script), and times in the
page (1) loading the bundle as the widget does — a ``blob:`` script made from its bytes, until
``window.Plotly`` is defined (parse, compile, run) — and (2) drawing the budget figure of a Lab
over a stitched recording of ``--requests`` requests (``Plotly.newPlot`` until it resolves),
then the same figure again on that page (warm). Both bundles draw the same figure from the same
JSON. Prints min and median of each, the basic ÷ full ratios of the medians, and the machine's
load (the load is said beside every figure: the machine's 2 cores are shared).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
from importlib import resources
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from tests.browser.jupyter import CHROMIUM_ARGS  # noqa: E402

BUNDLES = {
    "basic": HERE.parent / "widgets" / "plotly-basic.min.js",
    "full": Path(str(resources.files("plotly").joinpath("package_data/plotly.min.js"))),
}

# The bytes reach the page first (untimed), as the kernel's message would bring them.
RECEIVE = "(b64) => { window.__bundle = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)); }"
LOAD = """async () => {
    const started = performance.now();
    const blob = new Blob([window.__bundle], {type: 'text/javascript'});
    await new Promise((resolve, reject) => {
        const script = document.createElement('script');
        script.src = URL.createObjectURL(blob);
        script.onload = resolve; script.onerror = reject;
        document.head.appendChild(script);
    });
    if (!window.Plotly) throw new Error('no Plotly');
    return performance.now() - started;
}"""
DRAW = """async (figure) => {
    const div = document.getElementById('plot');
    window.Plotly.purge(div);
    const started = performance.now();
    await window.Plotly.newPlot(div, figure.data, {...figure.layout, width: 1200, height: 500});
    return performance.now() - started;
}"""


def budget_figure(requests: int) -> dict[str, Any]:
    """The Lab's budget figure over ``requests`` stitched corpus requests, as plotly JSON."""
    import plotly.io as pio
    from whatif_bench import sessions, stitched

    from ctxlab.widgets import Lab

    session = stitched(sessions() * (1 + requests // 2000), requests)
    lab = asyncio.run(Lab.open(session, context_window=32_000))
    plot = lab.budget.plot
    return dict(
        pio.from_json(pio.to_json({"data": plot.data, "layout": plot.layout})).to_plotly_json()
    )


def measure(figure: dict[str, Any], repeat: int) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per bundle: load, first draw, warm draw; a fresh page for each."""
    from playwright.sync_api import sync_playwright

    times: dict[str, dict[str, list[float]]] = {
        b: {"load": [], "draw": [], "warm draw": []} for b in BUNDLES
    }
    payload = {name: base64.b64encode(path.read_bytes()).decode() for name, path in BUNDLES.items()}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for round_ in range(repeat):
            order = list(BUNDLES) if round_ % 2 == 0 else list(reversed(BUNDLES))
            for name in order:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.set_content("<html><body><div id='plot'></div></body></html>")
                page.evaluate(RECEIVE, payload[name])
                times[name]["load"].append(page.evaluate(LOAD))
                times[name]["draw"].append(page.evaluate(DRAW, figure))
                times[name]["warm draw"].append(page.evaluate(DRAW, figure))
                page.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    figure = budget_figure(args.requests)
    load = os.getloadavg()[0]
    times = measure(figure, args.repeat)
    load = max(load, os.getloadavg()[0])
    sizes = {name: path.stat().st_size / 1e6 for name, path in BUNDLES.items()}
    for what in ("load", "draw", "warm draw"):
        medians = {}
        for name in BUNDLES:
            values = times[name][what]
            medians[name] = statistics.median(values)
            print(
                f"{name} ({sizes[name]:.1f} MB), {what}: min {min(values):.0f} ms, "
                f"median {medians[name]:.0f} ms ({args.repeat} fresh pages)"
            )
        print(f"  {what}: basic ÷ full {medians['basic'] / medians['full']:.2f}; load {load:.1f}")


if __name__ == "__main__":
    main()
