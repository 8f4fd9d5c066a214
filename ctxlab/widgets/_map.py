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

__all__ = ["ContextMap", "map_items"]


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


class ContextMap(anywidget.AnyWidget):
    """One request as a strip: segments sized by tokens, coloured by placement; click selects."""

    _esm = _static() / "context_map.js"
    _css = _static() / "context_map.css"
    items = traitlets.List(trait=traitlets.Dict()).tag(sync=True)
    selected = traitlets.Unicode("").tag(sync=True)
    colors = traitlets.Dict(dict(PLACEMENT_COLORS)).tag(sync=True)
    """Placement → colour, from the one table every view uses."""
    labels = traitlets.Dict(dict(PLACEMENT_LABELS)).tag(sync=True)
    """Placement → its words in the legend and on hover, where they differ from its name
    (``unrecorded``: "not recorded")."""
    marks = traitlets.Dict().tag(sync=True)
    scale = traitlets.Int(1).tag(sync=True)

    def show(self, manifest: ContextManifest) -> None:
        """Display ``manifest``'s request, scaled to its input limit."""
        items = map_items(manifest)
        total = sum(i["width"] for i in items)
        with self.hold_sync():
            self.items = items
            lines = manifest.thresholds
            # None where the request carries no lines (a recording as recorded: its agent's
            # own are not in the file): the map says "unknown", never draws a line at 0.
            self.marks = {
                "usage notice": lines.notice_tokens if lines else None,
                "trigger": lines.trigger_tokens if lines else None,
                "input limit": manifest.input_limit,
            }
            # Headroom past the largest of total and limit: the input-limit mark and its label
            # stay inside the strip instead of on its right edge.
            self.scale = max(round(max(total, manifest.input_limit, 1) * HEADROOM), 1)
