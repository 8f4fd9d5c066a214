"""The pieces every static view is made of: escaped text, tables, inline-styled bars, the
placement colours. What a notebook shows without a kernel (GitHub, nbviewer, an exported HTML
file) is built from these next to each type (`manifest_html` in ``manifest/``, `config_html` in
``config/``, the Lab's snapshot in ``widgets/``): plain HTML, no JavaScript, every text escaped.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "MAX_ROWS",
    "PLACEMENT_COLORS",
    "PLACEMENT_LABELS",
    "STYLE",
    "bar_html",
    "escape",
    "table_html",
]

STYLE = "border-collapse:collapse;font-size:12px"
"""The style of every static table."""
MAX_ROWS = 40
"""Rows a static table shows before it says how many more."""
PLACEMENT_COLORS = {
    "unrecorded": "#9d9da1",
    "system": "#4c78a8",
    "tools": "#72b7b2",
    "summary": "#b279a2",
    "conversation": "#f58518",
    "transient": "#54a24b",
    "references": "#eeca3b",
}
"""One colour per placement, for every view: the Lab's plot, the static snapshot (and the
context map's front end, `widgets/context_map.js`, which receives them as its `colors` trait)."""
PLACEMENT_LABELS = {"unrecorded": "not recorded"}
"""How a view names a placement whose name is not its label (the legend's words)."""


def escape(value: Any) -> str:
    """``value`` as escaped text (None as nothing)."""
    return html.escape("" if value is None else str(value))


def table_html(rows: Iterable[Sequence[Any]], columns: Sequence[str], limit: int = MAX_ROWS) -> str:
    """An escaped HTML table (at most ``limit`` rows, then a line saying how many more)."""
    rows = list(rows)
    head = "".join(f"<th style='text-align:left;padding:2px 6px'>{escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td style='padding:2px 6px'>{escape(v)}</td>" for v in row) + "</tr>"
        for row in rows[:limit]
    )
    more = (
        f"<tr><td colspan='{len(columns)}'><i>… {len(rows) - limit} more</i></td></tr>"
        if len(rows) > limit
        else ""
    )
    return (
        f"<table style='{STYLE}'><thead><tr>{head}</tr></thead><tbody>{body}{more}</tbody></table>"
    )


def bar_html(totals: Mapping[str, int], scale: int) -> str:
    """One bar: ``totals`` by placement, each as its share of ``scale``."""
    parts = "".join(
        f"<span title='{escape(p)}: {t}' style='display:inline-block;height:10px;"
        f"width:{100 * t / max(scale, 1):.2f}%;background:{PLACEMENT_COLORS.get(p, '#999')}'></span>"
        for p, t in totals.items()
        if t
    )
    return f"<div style='width:100%;background:#eee;white-space:nowrap'>{parts}</div>"
