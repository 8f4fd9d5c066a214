"""The plot view: plotly.js on request instead of in the widget state, figures as buffers."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("plotly")

import plotly.graph_objects as go

from ctxlab.exceptions import UsageError
from ctxlab.widgets._plot import LivePlot, PlotView, _plotly_js


def _capture(plot: LivePlot) -> list[tuple[dict[str, object], list[object]]]:
    sent: list[tuple[dict[str, object], list[object]]] = []
    plot.view._send = lambda msg, buffers=None: sent.append((msg, list(buffers or [])))  # type: ignore[method-assign]
    return sent


def test_the_saved_state_is_small_and_plotly_js_comes_on_request() -> None:
    plot = LivePlot(go.Figure(go.Scatter(x=[0, 1], y=[3, 4], name="a")))
    # What a notebook saves: the module and the figure, not the 5 MB bundle.
    assert len(plot.view._esm) < 20_000
    # The CDN fallback (no kernel) asks for the version of the plotly.js this kernel sends.
    assert plot.view.plotly_js_version == "4.1.1"
    sent = _capture(plot)
    plot.view._message(plot.view, {"type": "need-plotly"}, [])
    message, buffers = sent[-1]
    assert message["content"] == {"type": "plotly-js"}  # type: ignore[comparison-overlap]
    script = bytes(buffers[0])  # type: ignore[arg-type]
    # plotly's basic bundle, vendored (1.2 MB, where the full one is 4.8 MB).
    assert script.startswith(b"/**\n* plotly.js (basic - minified) v4.1.1\n")
    assert script == (Path(__file__).parents[2] / "widgets" / "plotly-basic.min.js").read_bytes()


def test_the_vendored_bundle_is_the_one_make_vendor_plotly_pins() -> None:
    # `make vendor-plotly` re-makes the file from npm and checks it against this digest: the
    # committed file is that build's output, byte for byte.
    makefile = (Path(__file__).parents[2] / "Makefile").read_text()
    pinned = re.search(r"^PLOTLY_BASIC_SHA256 := ([0-9a-f]{64})$", makefile, re.M)
    assert pinned is not None
    assert hashlib.sha256(_plotly_js()).hexdigest() == pinned.group(1)
    assert "PLOTLY_BASIC := plotly.js-basic-dist-min@4.1.1" in makefile


@pytest.mark.parametrize("late", [False, True])
def test_a_trace_the_basic_bundle_cannot_draw_is_refused_by_name(late: bool) -> None:
    # Given to the figure, or added to the traces afterwards: the page would leave it out
    # without a word.
    heatmap = go.Heatmap(z=[[1, 2]], name="grid").to_plotly_json()
    plot = LivePlot(go.Figure(go.Bar(x=[1], y=[2], name="b")))
    with pytest.raises(
        UsageError,
        match=r"no 'heatmap' trace \(trace 'grid'\); use one of \['bar', 'pie', 'scatter'\]",
    ):
        if late:
            plot.data.append(heatmap)
            plot.push()
        else:
            plot.set_figure(go.Figure(heatmap))
    assert plot.trace("b")["type"] == "bar"  # the figure before is kept
    assert [t["name"] for t in plot.data] == ["b"]  # and only it: the refused trace is gone
    plot.trace("b")["y"] = [5]
    plot.push()  # the plot still updates (review of stop 65: every later push raised)
    assert list(plot.view.data[0]["y"]) == [5]


def test_edits_reach_the_view_as_typed_buffers_and_layout_only_when_changed() -> None:
    plot = LivePlot(go.Figure(go.Scatter(x=[], y=[], name="a")))
    sent = _capture(plot)
    with plot.batch_update():
        plot.trace("a")["y"] = np.arange(3, dtype=np.int64)
    state = sent[-1][0]["state"]
    assert set(state) == {"data"}  # type: ignore[arg-type]
    assert np.frombuffer(sent[-1][1][0], dtype=np.int32).tolist() == [0, 1, 2]  # type: ignore[call-overload]
    # A count past int32 (a file's bill of 2⁴⁰) goes as float64, exact — never wrapped round.
    with plot.batch_update():
        plot.trace("a")["y"] = np.array([1, 2**40 + 3], dtype=np.int64)
    assert sent[-1][0]["state"]["data"][0]["y"]["dtype"] == "float64"  # type: ignore[index]
    assert np.frombuffer(sent[-1][1][0], dtype=np.float64).tolist() == [1, 2**40 + 3]  # type: ignore[call-overload]
    with plot.batch_update():
        plot.relayout(shapes=[{"type": "line", "x0": 1}])
    assert sent[-1][0]["state"]["figure_layout"]["shapes"][0]["x0"] == 1  # type: ignore[index]
    before = len(sent)
    plot.push()  # nothing changed: nothing sent
    assert len(sent) == before


def test_clicks_from_the_browser_reach_handlers_and_junk_is_ignored() -> None:
    plot = LivePlot()
    clicks: list[tuple[float, str]] = []
    plot.view.on_click(lambda x, name: clicks.append((x, name)))
    plot.view._message(plot.view, {"type": "click", "x": 3, "trace": "system"}, [])
    plot.view._message(plot.view, {"type": "click", "x": "<b>"}, [])
    plot.view._message(plot.view, "not a dict", [])
    assert clicks == [(3.0, "system")]


def test_no_view_trait_shadows_a_trait_of_the_widget_itself() -> None:
    # A plotly layout dict synced as ``layout`` replaced the widget's own `ipywidgets.Layout`:
    # the front end unpacked it as a model and raised at every view.
    import anywidget
    import ipywidgets

    from ctxlab.widgets._map import ContextMap
    from ctxlab.widgets._table import DataTable

    own = set(ipywidgets.DOMWidget.class_trait_names()) | set(
        anywidget.AnyWidget.class_trait_names()
    )
    for cls in (PlotView, ContextMap, DataTable):
        added = set(cls.class_trait_names(sync=True)) - set(anywidget.AnyWidget.class_trait_names())
        assert added, cls
        redefined = {
            name
            for name in cls.class_trait_names(sync=True)
            if name in own
            and name not in ("_esm", "_css", "_anywidget_id")
            and type(cls.class_traits()[name]) is not type(anywidget.AnyWidget.class_traits()[name])
        }
        assert not redefined, (cls.__name__, redefined)
    assert isinstance(PlotView().layout, ipywidgets.Layout)


def _points(trace: dict[str, object]) -> int:
    # How many x values a trace's wire form holds (an array goes as {dtype, buffer}).
    x = trace.get("x")
    return memoryview(x["buffer"]).nbytes if isinstance(x, dict) else len(x or ())  # type: ignore[arg-type]


def test_a_recordings_first_lab_sends_plotly_js_ahead_once_per_kernel(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Sent while the cell still runs (before the requests are drawn): the page loads it
    # meanwhile instead of asking when the cell has ended. Once per kernel: a second Lab's
    # page has it (a page that missed it asks, `test_the_saved_state_...`).
    import asyncio
    from pathlib import Path

    from ctxlab import load
    from ctxlab.widgets import Lab

    monkeypatch.setattr(PlotView, "_sent_ahead", False)
    sent: list[tuple[object, bool]] = []

    def send(self: PlotView, content: object, buffers: list[bytes] | None = None) -> None:
        drawn = any(_points(trace) for trace in self.data)
        sent.append((content, drawn))
        assert bytes(buffers[0] if buffers else b"") == _plotly_js()

    monkeypatch.setattr(PlotView, "send", send)
    session = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    first = asyncio.run(Lab.open(load(session), context_window=200_000))
    assert sent == [({"type": "plotly-js"}, False)]
    assert any(_points(trace) for trace in first.budget.plot.view.data)  # drawn after it
    asyncio.run(Lab.open(load(session), context_window=200_000))
    assert len(sent) == 1
