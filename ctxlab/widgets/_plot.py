"""A live plotly figure whose widget state does not carry plotly.js.

plotly's ``FigureWidget`` keeps its ~5 MB JavaScript bundle in the widget's state, so a notebook
saved with widget state (what ``nbconvert --execute`` and JupyterLab's "save widget state" do) is
5 MB per notebook. `LivePlot` keeps a plain ``go.Figure`` on the Python side and shows it in
`PlotView`, a small anywidget (``widgets/plot.js``): the kernel sends plotly.js once per page as
a custom message, which is never saved, and the figure travels as synced state with its arrays as
binary buffers. Without a kernel, a viewer of the saved state falls back to plotly's CDN.

The plotly.js sent is plotly's *basic* bundle (``widgets/plotly-basic.min.js``, vendored by
``make vendor-plotly``): scatter, bar and pie traces with every layout component, 1.2 MB where
the full bundle is 4.8 MB — the first plot of a page waited for the page to load and compile it.
A figure with another trace type is refused with `UsageError` (the page could not draw it).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar

import anywidget
import numpy as np
import plotly.graph_objects as go
import traitlets

from ctxlab.exceptions import UsageError
from ctxlab.widgets._map import _static

__all__ = ["LivePlot", "PlotView"]


BASIC_TRACES = frozenset({"scatter", "bar", "pie"})
"""The trace types plotly.js's basic bundle draws (what the page is sent)."""


@functools.cache
def _plotly_js() -> bytes:
    return (_static() / "plotly-basic.min.js").read_bytes()


def _bundle_version() -> str:
    """The version of the plotly.js sent, from its banner (``plotly.js (basic - minified) v4.1.1``)."""
    # Bounded ([^)]{0,40}): linear on any text (tests/util/test_regex_audit.py).
    with (_static() / "plotly-basic.min.js").open("rb") as bundle:  # its head: read at import
        found = re.search(rb"plotly\.js \(basic[^)]{0,40}\) v(\d+\.\d+\.\d+)", bundle.read(300))
    if found is None:  # a re-vendored file of another shape: `make vendor-plotly` pins it
        msg = "widgets/plotly-basic.min.js has no plotly.js banner: re-make it with `make vendor-plotly`"
        raise RuntimeError(msg)
    return found.group(1).decode()


def _check_traces(data: list[dict[str, Any]]) -> None:
    """Refuse a trace the page's plotly.js cannot draw: it would be left out without a word."""
    for trace in data:
        kind = trace.get("type", "scatter")
        if kind not in BASIC_TRACES:
            msg = (
                f"a LivePlot draws with plotly.js's basic bundle, which has no {kind!r} trace "
                f"(trace {trace.get('name')!r}); use one of {sorted(BASIC_TRACES)}, or show the "
                "figure with plotly itself (fig.show())"
            )
            raise UsageError(msg)


def _to_wire(value: Any) -> Any:
    """JSON-ready figure state: NumPy arrays become ``{dtype, buffer}`` (sent as binary)."""
    if isinstance(value, np.ndarray):
        if value.dtype == np.int64:
            # JavaScript has no int64 typed array; token counts and indices fit in int32 — a
            # count past it (a file's bill of 2⁴⁰ tokens) goes as float64, never wrapped round.
            fits = not value.size or (value.min() >= -(2**31) and value.max() < 2**31)
            value = value.astype(np.int32 if fits else np.float64)
        if value.dtype.kind in "iuf" and value.ndim == 1:
            contiguous = np.ascontiguousarray(value)
            return {"dtype": str(contiguous.dtype), "buffer": contiguous.data}
        return value.tolist()
    if isinstance(value, dict):
        return {key: _to_wire(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        # Hover texts and labels (hundreds at a long session) are sent as they are: a fresh
        # list, without a call per item.
        if all(type(item) is str for item in value):
            return list(value)
        return [_to_wire(item) for item in value]
    return value


def _same(new: Any, old: Any) -> bool:
    """Whether two wire values are the same, arrays byte for byte (NaN equal to NaN)."""
    if type(new) is not type(old):
        return False
    if isinstance(new, dict):
        return new.keys() == old.keys() and all(_same(new[k], old[k]) for k in new)
    if isinstance(new, list):
        return len(new) == len(old) and all(map(_same, new, old))
    if isinstance(new, memoryview):
        return bool(new.format == old.format and new.tobytes() == old.tobytes())
    if isinstance(new, float) and new != new:
        return bool(old != old)
    return bool(new == old)


class PlotView(anywidget.AnyWidget):
    """Draws a figure's ``data`` and ``layout`` with plotly.js, full width."""

    _esm = _static() / "plot.js"
    # Two traits: a new selection line changes only the layout, new points only the data, and
    # traitlets sends only the one that changed (the layout's template alone is ~8 kB).
    data: traitlets.List[Any] = traitlets.List().tag(sync=True)
    figure_layout = traitlets.Dict().tag(sync=True)
    """plotly's layout of the figure. Not ``layout``: that trait is the widget's own
    `ipywidgets.Layout` (a model the front end unpacks); a dict in its place made the page raise
    "Cannot read properties of undefined (reading 'then')" at every view."""
    plotly_js_version = traitlets.Unicode(_bundle_version()).tag(sync=True)
    """The version of the plotly.js the kernel sends (the vendored basic bundle's): the CDN
    fallback loads the full bundle of that version."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._click_handlers: list[Callable[[float, str], None]] = []
        self.on_msg(self._message)

    _sent_ahead: ClassVar[bool] = False
    """Whether this kernel sent plotly.js ahead already (`send_plotly_ahead`)."""

    def send_plotly_ahead(self) -> bool:
        """Send plotly.js to the page now, unasked — once per kernel: the page loads it while
        the kernel still runs the cell (a long recording's replay), where a view asks for it
        only once displayed, when the cell has ended, and then waits for it. A page that missed
        it (opened later, or reloaded) asks, as before. Returns whether it was sent."""
        if PlotView._sent_ahead:
            return False
        PlotView._sent_ahead = True
        self.send({"type": "plotly-js"}, buffers=[_plotly_js()])
        return True

    def on_click(self, handler: Callable[[float, str], None]) -> None:
        """Call ``handler(x, trace_name)`` when a point is clicked in the browser."""
        self._click_handlers.append(handler)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        if content.get("type") == "need-plotly":
            self.send({"type": "plotly-js"}, buffers=[_plotly_js()])
        elif content.get("type") == "click":
            x = content.get("x")
            if isinstance(x, int | float):
                for handler in self._click_handlers:
                    handler(float(x), str(content.get("trace", "")))


class LivePlot:
    """A figure as plain plotly JSON, edited from Python, and the `PlotView` that shows it.

    Built from a validated ``go.Figure``; after that the hot path is plain dicts and NumPy
    arrays (plotly's validation of every assignment cost more than the rest of a Lab update).
    Edit traces through `trace` and the layout through `relayout`, inside ``with
    plot.batch_update():`` or followed by `push`.
    """

    def __init__(self, figure: go.Figure | None = None) -> None:
        self.view = PlotView()
        self.data: list[dict[str, Any]] = []
        self.layout: dict[str, Any] = {}
        self._layout_changed = True
        self.set_figure(figure if figure is not None else go.Figure())

    def set_figure(self, figure: go.Figure) -> None:
        """Replace every trace and the layout with ``figure``'s, and show it."""
        plotly_json = figure.to_plotly_json()
        _check_traces(plotly_json["data"])
        self.data = list(plotly_json["data"])
        self.layout = dict(plotly_json["layout"])
        self._layout_changed = True
        self.push()

    def trace(self, name: str) -> dict[str, Any]:
        """The trace called ``name`` (or whose ``uid`` is ``name``: a trace whose legend name
        changes keeps its uid), as a dict to edit (``trace["y"] = array``)."""
        return next(t for t in self.data if name in (t.get("uid"), t.get("name")))

    def relayout(self, **changes: Any) -> None:
        """Set top-level layout keys (``shapes=[...]``, ``xaxis={...}``)."""
        self.layout.update(changes)
        self._layout_changed = True

    @contextmanager
    def batch_update(self) -> Iterator[LivePlot]:
        """Edit traces and layout; the view is updated once, on leaving the block."""
        yield self
        self.push()

    def push(self) -> None:
        """Send the current figure to the view: the traces, and the layout if it changed."""
        # Converted here, not in a serializer: the new value is a fresh structure that traitlets
        # can compare with the old one (the traces are edited in place).
        try:
            _check_traces(self.data)
        except UsageError:
            # The traces it cannot draw leave with the error: kept, every later push would
            # fail on them and the plot would never update again.
            self.data = [t for t in self.data if t.get("type", "scatter") in BASIC_TRACES]
            raise
        with self.view.hold_sync():
            data = _to_wire(self.data)
            # Sent only when a trace changed: traitlets' own comparison finds a line of NaN
            # (a recording's unknown trigger) unequal to itself, and a click that moves only
            # the selection line sent every array again (0.6 MB at 5,000 requests).
            if not _same(data, self.view.data):
                self.view.data = data
            if self._layout_changed:
                self.view.figure_layout = _to_wire(self.layout)
                self._layout_changed = False
