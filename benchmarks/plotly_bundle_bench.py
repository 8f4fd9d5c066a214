"""What the page spends on plotly.js before a Lab's first plot: the basic bundle the kernel sends
(``widgets/plotly-basic.min.js``) against the plotly package's full bundle (sent before).

    python benchmarks/plotly_bundle_bench.py [--requests 5000] [--repeat 5]

In headless Chromium (Debian's), each repeat opens a fresh page for each contender, the order
rotated (every contender cold: a new page has no compiled script), and times in the page
(1) loading the bundle as the widget does — a ``blob:`` script made from its bytes, until
``window.Plotly`` is defined (parse, compile, run) — and (2) drawing the budget figure of a Lab
over a stitched recording of ``--requests`` requests (``Plotly.newPlot`` until it resolves),
then the same figure again on that page. Contenders: the full bundle (what the kernel sent
before), the basic one, and the basic one with the widget's own warm-up (``warmUp`` of
``widgets/plot.js``, imported from it: what the page runs when plotly.js comes before any plot,
while the kernel still reads) between load and draw. All draw the same figure from the same
JSON. Prints min and median of each, ratios of the medians, and the machine's load (the
machine's 2 cores are shared).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import statistics
import sys
import time
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
# The widget's own warm-up (`warmUp` of widgets/plot.js, run when plotly.js arrives before any
# plot), imported from the module itself.
WARM_UP = """async (source) => {
    const url = URL.createObjectURL(new Blob([source], {type: 'text/javascript'}));
    const module = await import(url);
    await module.warmUp(window.Plotly);
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


CONTENDERS = {"full": "full", "basic": "basic", "basic, warmed up": "basic"}
"""Each contender's bundle; "warmed up" runs the widget's `warmUp` between load and draw."""


def _one(page: Any, bundle: str, warm: bool, figure: dict[str, Any]) -> dict[str, float]:
    page.set_content("<html><body><div id='plot'></div></body></html>")
    page.evaluate(RECEIVE, base64.b64encode(BUNDLES[bundle].read_bytes()).decode())
    out = {"load": page.evaluate(LOAD)}
    if warm:
        started = time.perf_counter()
        page.evaluate(WARM_UP, (HERE.parent / "widgets" / "plot.js").read_text())
        out["warm-up"] = (time.perf_counter() - started) * 1000
    out["first draw"] = page.evaluate(DRAW, figure)
    out["second draw"] = page.evaluate(DRAW, figure)
    return out


def measure(figure: dict[str, Any], repeat: int) -> dict[str, dict[str, list[float]]]:
    """Milliseconds per contender: load, warm-up, first draw, second draw; a fresh page each."""
    from playwright.sync_api import sync_playwright

    times: dict[str, dict[str, list[float]]] = {name: {} for name in CONTENDERS}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
        for round_ in range(repeat):
            names = list(CONTENDERS)
            order = names[round_ % len(names) :] + names[: round_ % len(names)]  # rotated
            for name in order:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                result = _one(page, CONTENDERS[name], name.endswith("warmed up"), figure)
                for what, ms in result.items():
                    times[name].setdefault(what, []).append(ms)
                page.close()
        browser.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=6)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    figure = budget_figure(args.requests)
    load = os.getloadavg()[0]
    times = measure(figure, args.repeat)
    load = max(load, os.getloadavg()[0])
    median = {n: {w: statistics.median(v) for w, v in t.items()} for n, t in times.items()}
    for name, whats in times.items():
        size = BUNDLES[CONTENDERS[name]].stat().st_size / 1e6
        shown = ", ".join(
            f"{what} min {min(v):.0f} / median {median[name][what]:.0f} ms"
            for what, v in whats.items()
        )
        print(f"{name} ({size:.1f} MB), {args.repeat} fresh pages: {shown}")
    full, basic, warmed = (median[n] for n in CONTENDERS)
    print(
        f"medians, {args.requests:,} requests: load basic ÷ full {basic['load'] / full['load']:.2f}; "
        f"first draw basic ÷ full {basic['first draw'] / full['first draw']:.2f}, "
        f"warmed up ÷ basic {warmed['first draw'] / basic['first draw']:.2f}; "
        f"load then first draw, warmed up ÷ full "
        f"{(warmed['load'] + warmed['first draw']) / (full['load'] + full['first draw']):.2f}; "
        f"load {load:.1f}"
    )


if __name__ == "__main__":
    main()
