"""A 5,000-request recording opens in the Lab with little sent to the page: the items table
sends the page shown (the rest on demand), the context map one segment per pixel where items
are narrower, the plot one hover text where every point says the same — and what the reader
sees is unchanged: the first rows, a step's items after selecting it, the item a click on the
map opens, the strip's every boundary."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

import ipywidgets as w
import pytest

from ctxlab import ApproximateCounter, Transcript
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.widgets import Lab
from ctxlab.widgets._map import STRIP_PIXELS, map_items, map_segments
from ctxlab.widgets._table import PAGE_SIZE

REQUESTS = 5_000
STATE_BOUND = 1_000_000
"""Bytes of widget state the page gets when the Lab opens at 5,000 requests (it was 3.7 MB:
every item of the last request twice, as table rows and as map segments; now 0.97 MB, most of
it the plot's arrays, sent binary)."""


def _session(requests: int) -> Transcript:
    """A tool loop of ``requests`` replies: its last request holds 2 × ``requests`` items."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the test.")]
    for n in range(requests):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat f{n}"})
        messages.append(AssistantMessage(content=(use,)))
        result = ToolResultBlock(tool_use_id=f"c{n}", content=f"line {n} of f{n} " * (1 + n % 7))
        messages.append(UserMessage(content=(result,)))
    messages.append(AssistantMessage(content="done"))
    return Transcript("long", {}, "You fix code.", tuple(messages))


@pytest.fixture(scope="module")
def big() -> Iterator[Lab]:
    import asyncio

    lab = asyncio.run(
        Lab.open(_session(REQUESTS), context_window=32_000, counter=ApproximateCounter())
    )
    yield lab
    lab.close()


def _widgets(root: w.Widget) -> Iterator[w.Widget]:
    yield root
    for child in getattr(root, "children", ()):
        yield from _widgets(child)


def _bytes(widget: w.Widget) -> int:
    # What the page receives for the widget: its state as JSON, binary buffers by their size.
    buffers = 0

    def wire(value: Any) -> Any:
        nonlocal buffers
        if isinstance(value, bytes | memoryview):
            buffers += memoryview(value).nbytes
            return None
        if isinstance(value, dict):
            return {k: wire(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [wire(v) for v in value]
        return value

    return len(json.dumps(wire(widget.get_state()), default=str)) + buffers


def test_the_state_sent_when_a_5000_request_recording_opens_is_small(big: Lab) -> None:
    assert len(big.log) == REQUESTS + 1
    assert len(big.log.manifests[-1].items) > 2 * REQUESTS  # what used to be sent twice
    # The last request's panels, filled after the plot (reading one fills them), counted too.
    assert big.manifest.table.total == len(big.log.manifests[-1].items)
    sizes = {type(x).__name__: _bytes(x) for x in _widgets(big.widget)}
    total = sum(_bytes(x) for x in _widgets(big.widget))
    assert total < STATE_BOUND, sorted(sizes.items(), key=lambda kv: -kv[1])[:4]


def test_the_items_table_shows_the_selected_steps_rows_page_by_page(big: Lab) -> None:
    for step in (REQUESTS, 1_234):
        big.select(step)
        ids = list(big.items(step)["id"])  # the items, from the manifest's own frame
        table = big.manifest.table
        assert (table.total, table.shown, table.page) == (len(ids), len(ids), 0)
        assert [row[-1] for row in table.page_rows] == ids[:PAGE_SIZE]
        assert table.visible_rows() == table.rows  # every row is still the kernel's
        table.page = 3  # what the pager asks for
        assert [row[-1] for row in table.page_rows] == ids[3 * PAGE_SIZE : 4 * PAGE_SIZE]
        table.page = 10**6  # past the end: the last page
        assert [row[-1] for row in table.page_rows] == ids[
            (len(ids) - 1) // PAGE_SIZE * PAGE_SIZE :
        ]
    table.filter = "f4321 "
    kept = [r for r in table.rows if any("f4321 " in str(c) for c in r)]
    assert table.shown == len(kept) and table.page == 0
    assert table.page_rows == kept[:PAGE_SIZE]
    table.filter = ""


def test_an_item_opened_from_the_map_is_on_the_page_shown_and_described(big: Lab) -> None:
    big.select(REQUESTS)
    ids = list(big.items(REQUESTS)["id"])
    chosen = ids[777]
    big.map.selected = chosen  # a click on the map
    table = big.manifest.table
    assert table.selected == chosen
    assert table.page == 777 // PAGE_SIZE
    assert chosen in [row[-1] for row in table.page_rows]
    current = big.map.current
    assert current["id"] == chosen
    segment = big.map.segments[current["segment"]]
    # The segment drawn for it spans it: its first item is at or before it, its last after.
    drawn = [s.get("count", 1) for s in big.map.segments[: current["segment"]]]
    first = sum(drawn)
    assert big.map.items[first]["id"] == segment["id"]
    assert first <= 777 + 1 < first + segment.get("count", 1) + 1  # (+1: the system item)


def test_the_strips_segments_keep_every_boundary_a_pixel_can_show(big: Lab) -> None:
    items, segments, scale = big.map.items, big.map.segments, big.map.scale
    assert len(segments) < len(items) / 4
    assert sum(s.get("count", 1) for s in segments) == len(items) == big.map.count
    assert sum(s["tokens"] for s in segments) == sum(i["tokens"] for i in items)
    # Each segment starts where its first item did; one of several items is under 2 pixels.
    edges = list(accumulate(i["width"] for i in items))
    at = list(accumulate(s.get("count", 1) for s in segments))
    assert [pytest.approx(edges[n - 1]) for n in at] == list(
        accumulate(s["width"] for s in segments)
    )
    pixel = scale / STRIP_PIXELS
    assert all(s["width"] < 2 * pixel for s in segments if s.get("count", 1) > 1)
    start = 0
    for segment in segments:
        members = items[start : start + segment.get("count", 1)]
        start += len(members)
        assert members[0]["id"] == segment["id"] and members[-1]["id"] == segment.get(
            "last", segment["id"]
        )
        assert {(m["placement"], m["ghost"]) for m in members} == {
            (segment["placement"], segment["ghost"])
        }


def test_a_request_whose_items_are_all_wide_enough_is_drawn_item_by_item(big: Lab) -> None:
    manifest = big.log.manifests[3]
    items = map_items(manifest)
    assert len(items) > 3
    wide = round(sum(i["width"] for i in items))  # each item is wider than a pixel here
    assert map_segments(items, wide) == items
    # The control: at a scale where each is under a pixel, they are drawn together.
    assert len(map_segments(items, 10**9)) < len(items)


def test_a_click_that_moves_the_selection_sends_no_trace_again(big: Lab) -> None:
    view = big.budget.plot.view
    assert all(y != y for y in big.budget.trace("trigger")["y"])  # a line of NaN: unknown
    sent: list[str] = []
    view.observe(lambda change: sent.append(change["name"]), names=["data", "figure_layout"])
    big.select(17)
    assert sent == ["figure_layout"]  # the selection line, not the 0.6 MB of arrays
    assert view.figure_layout["shapes"][0]["x0"] == 17
    # The control: a trace that changes is sent.
    big.budget.trace("total")["name"] = "total (changed)"
    big.budget.plot.push()
    assert sent[-1] == "data"
    big.budget.trace("total (changed)")["name"] = "total"
    big.budget.plot.push()


def test_a_request_shown_on_the_map_is_segmented_once(
    big: Lab, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab.widgets import _map

    calls: list[int] = []
    segment = _map.map_segments

    def counted(items: Any, scale: int) -> Any:
        calls.append(len(items))
        return segment(items, scale)

    monkeypatch.setattr(_map, "map_segments", counted)
    manifest = big.log.manifests[1_234]
    big.map.show(manifest)
    items = map_items(manifest)
    assert calls == [len(items)]  # not once for the items and again for the scale
    assert big.map.segments == segment(items, big.map.scale)
    assert big.map.count == len(items)
    # Set apart, each trait still segments again (what a caller setting one of them sees).
    big.map.scale = big.map.scale * 2
    assert big.map.segments == segment(items, big.map.scale)
