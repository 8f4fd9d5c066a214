"""The context map: ctxlab's own anywidget view of one request as a strip of items.

The front end is a plain ES module and a CSS file in the repository's top-level ``widgets/``
folder (shipped inside the package as ``ctxlab/widgets/static``): no build step, no network.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import traitlets

from ctxlab.manifest import ContextManifest, transform_info
from ctxlab.util._checks import instance_of
from ctxlab.util._html import PLACEMENT_COLORS, PLACEMENT_LABELS

__all__ = ["ContextMap", "map_items", "map_segments"]


def _static() -> Path:
    packaged = Path(__file__).parent / "static"
    if (packaged / "context_map.js").is_file():
        return packaged
    return Path(__file__).resolve().parents[2] / "widgets"  # a source checkout


def map_items(manifest: ContextManifest) -> list[dict[str, Any]]:
    """The manifest's items as map segments, plus ghosts for what transforms took away."""
    instance_of(manifest, ContextManifest, "manifest", "a ContextManifest (a step's manifest)")
    items: list[dict[str, Any]] = [
        {
            "id": item.id,
            "placement": item.placement,
            "tokens": item.tokens,
            "source": item.source_id or "",
            "revision": item.revision or "",
            "ghost": "",
        }
        for item in manifest.items
    ]
    for transform in manifest.transforms:
        info = transform_info(transform.kind)
        if not info.label or not transform.tokens_before:
            continue
        removed = transform.tokens_before - (transform.tokens_after or 0)
        if removed <= 0:
            continue
        items.append(
            {
                "id": f"ghost/{transform.kind}/{transform.target}",
                "placement": info.placement,
                "tokens": removed,
                "source": transform.target,
                "revision": "",
                "ghost": info.label,
            }
        )
    _shrink_ghosts(items, max(manifest.input_limit, 1))
    return items


GHOST_SHARE = 0.25
"""The most of the strip what was taken away may take: a 55,000-token offloaded output must
not squeeze what was sent, and the threshold marks, into a corner."""


def _shrink_ghosts(items: list[dict[str, Any]], limit: int) -> None:
    # ``width``: the tokens a segment is drawn as (its ``tokens`` stay the true count, shown on
    # hover). Ghosts past their share are drawn smaller, in proportion.
    sent = sum(i["tokens"] for i in items if not i["ghost"])
    ghosts = sum(i["tokens"] for i in items if i["ghost"])
    room = GHOST_SHARE * max(sent, limit)
    factor = min(1.0, room / ghosts) if ghosts else 1.0
    for item in items:
        item["width"] = item["tokens"] * factor if item["ghost"] else item["tokens"]


HEADROOM = 1.08
"""The strip spans this much more than the request's total or limit, whichever is larger."""
STRIP_PIXELS = 2_000
"""The widest a strip is drawn, in pixels: items narrower than one of them at that width are
drawn together (`map_segments`)."""


def map_segments(items: list[dict[str, Any]], scale: int) -> list[dict[str, Any]]:
    """What the strip draws: each item as its segment, except that runs of neighbouring items
    narrower than a pixel (`STRIP_PIXELS` over ``scale``), of one placement and alike ghosted,
    are one segment per pixel — ``count`` items from ``id`` to ``last``, their tokens summed.

    A request of a long recording holds thousands of items of a few hundred tokens in a strip
    of millions: one element each was 1.4 MB of widget state and 10,000 elements no eye could
    tell apart. Every segment keeps its place and width, so the strip looks the same."""
    pixel = scale / STRIP_PIXELS
    out: list[dict[str, Any]] = []
    run: dict[str, Any] | None = None
    for item in items:
        narrow = item["width"] < pixel
        if (
            narrow
            and run is not None
            and run["width"] < pixel
            and (run["placement"], run["ghost"]) == (item["placement"], item["ghost"])
        ):
            run.update(
                count=run["count"] + 1,
                last=item["id"],
                tokens=run["tokens"] + item["tokens"],
                width=run["width"] + item["width"],
                source="",
                revision="",
            )
            continue
        run = {**item, "count": 1, "last": item["id"]} if narrow else None
        out.append(run if run is not None else item)
    # A run of one is its item, as it was.
    return [
        {k: v for k, v in s.items() if k not in ("count", "last")} if s.get("count") == 1 else s
        for s in out
    ]


class ContextMap(anywidget.AnyWidget):
    """One request as a strip: segments sized by tokens, coloured by placement; click selects."""

    _esm = _static() / "context_map.js"
    _css = _static() / "context_map.css"
    items = traitlets.List(trait=traitlets.Dict())
    """Every item of the request, with its ghosts (`map_items`; kept in the kernel)."""
    segments = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    """What the front end draws (`map_segments`)."""
    count = traitlets.Int(0).tag(sync=True)
    """How many items (and ghosts) `segments` draw."""
    current = traitlets.Dict().tag(sync=True)
    """The selected item (empty when none is): described under the strip, outlined in it."""
    selected = traitlets.Unicode("").tag(sync=True)
    colors = traitlets.Dict(dict(PLACEMENT_COLORS)).tag(sync=True)
    """Placement → colour, from the one table every view uses."""
    labels = traitlets.Dict(dict(PLACEMENT_LABELS)).tag(sync=True)
    """Placement → its words in the legend and on hover, where they differ from its name
    (``unrecorded``: "not recorded")."""
    marks = traitlets.Dict().tag(sync=True)
    scale = traitlets.Int(1).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._showing = False  # `show` sets items and scale, then segments once
        self.observe(lambda _: self._resegment(), names=["items", "scale"])
        self.observe(lambda _: self._find_current(), names=["selected"])
        self._segment()

    def _resegment(self) -> None:
        if not self._showing:
            self._segment()

    def _segment(self) -> None:
        with self.hold_sync():
            self.segments = map_segments(self.items, self.scale)
            self.count = len(self.items)
            self._find_current()

    def _find_current(self) -> None:
        # The selected item, with the segment that draws it (``segment``: its index).
        position = next((n for n, i in enumerate(self.items) if i["id"] == self.selected), None)
        if position is None:
            self.current = {}
            return
        drawn = 0
        for index, segment in enumerate(self.segments):
            drawn += segment.get("count", 1)
            if drawn > position:
                self.current = {**self.items[position], "segment": index}
                return

    def show(self, manifest: ContextManifest) -> None:
        """Display ``manifest``'s request, scaled to its input limit."""
        items = map_items(manifest)
        total = sum(i["width"] for i in items)
        lines = manifest.thresholds
        with self.hold_sync():
            # Items and scale set, then segmented once, not once per trait (10,000 items at
            # 5,000 requests).
            self._showing = True
            try:
                self.items = items
                # None where the request carries no lines (a recording as recorded: its
                # agent's own are not in the file): the map says "unknown", never a line at 0.
                self.marks = {
                    "usage notice": lines.notice_tokens if lines else None,
                    "trigger": lines.trigger_tokens if lines else None,
                    "input limit": manifest.input_limit,
                }
                # Headroom past the largest of total and limit: the input-limit mark and its
                # label stay inside the strip instead of on its right edge.
                self.scale = max(round(max(total, manifest.input_limit, 1) * HEADROOM), 1)
            finally:
                self._showing = False
            self._segment()
