"""`DataTable`: a sortable, filterable table of text cells, ctxlab's own anywidget.

Chosen over a grid package (ipydatagrid, itables): the tables here hold at most a few hundred
rows of short text, so a plain HTML table renders them at once; a grid widget would add a
dependency and a front end of its own (ipydatagrid does not render in Colab), while this one
runs wherever anywidget does. Clicking a header sorts (ascending, descending, original order),
the filter box keeps the rows containing its text, clicking a row selects it. The rules live
here only: the front end writes ``filter`` and ``sort``, Python answers with ``order`` (the
visible rows' indices), and ``widgets/table.js`` draws the rows in that order — so
`visible_rows` is what the reader sees by construction.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ctxlab.widgets._map import _static

__all__ = ["DataTable"]

SORT_DIRECTIONS = ("asc", "desc")


def _empty(value: Any) -> bool:
    return value is None or value == ""


def _sort_key(value: Any) -> tuple[int, float, str]:
    # Numbers numerically, text case-insensitively (the order of widgets/table.js's compare).
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value).lower())


class DataTable(anywidget.AnyWidget):
    """Rows of cells under ``columns``; ``key`` names the column that identifies a row."""

    _esm = _static() / "table.js"
    _css = _static() / "table.css"
    columns = traitlets.List(trait=traitlets.Unicode()).tag(sync=True)
    rows = traitlets.List(trait=traitlets.List()).tag(sync=True)
    key = traitlets.Unicode("").tag(sync=True)
    """The column whose value a click on the row puts in `selected`."""
    filter = traitlets.Unicode("").tag(sync=True)
    """Keep the rows whose cells contain this text (case-insensitive)."""
    sort = traitlets.List(trait=traitlets.Unicode(), default_value=["", ""]).tag(sync=True)
    """``[column, "asc" | "desc"]``; ``["", ""]`` keeps the rows' own order."""
    selected = traitlets.Unicode("").tag(sync=True)
    css_class = traitlets.Unicode("").tag(sync=True)
    order = traitlets.List(trait=traitlets.Int()).tag(sync=True)
    """The indices into `rows` of the rows shown, in the order shown (set here, from
    `filter` and `sort`; the front end only draws it)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.observe(lambda _: self._reorder(), names=["rows", "columns", "filter", "sort"])
        self._reorder()

    def _reorder(self) -> None:
        self.order = self._visible_indices()

    @traitlets.validate("sort")
    def _valid_sort(self, proposal: dict[str, Any]) -> list[str]:
        value = list(proposal["value"])
        if value in ([], ["", ""]):
            return ["", ""]
        if len(value) != 2 or value[1] not in SORT_DIRECTIONS:
            msg = f'sort must be [column, "asc" or "desc"], or ["", ""]; got {value!r}'
            raise traitlets.TraitError(msg)
        if value[0] not in self.columns:
            msg = f"cannot sort by {value[0]!r}: the columns are {list(self.columns)}"
            raise traitlets.TraitError(msg)
        return value

    def visible_rows(self) -> list[list[Any]]:
        """The rows as shown: filtered by `filter`, ordered by `sort` (`order`'s rows)."""
        return [self.rows[i] for i in self.order]

    def _visible_indices(self) -> list[int]:
        # Filter: a row whose cells, joined, contain the needle (case-insensitive). Sort: by
        # one column, numbers before text, text case-insensitively, empty cells last in either
        # direction, ties in the rows' own order.
        needle = self.filter.strip().lower()
        rows = self.rows
        kept = [
            index
            for index, row in enumerate(rows)
            if not needle or needle in " ".join("" if c is None else str(c) for c in row).lower()
        ]
        column, direction = self.sort if len(self.sort) == 2 else ("", "")
        if column in self.columns and direction in SORT_DIRECTIONS:
            at = self.columns.index(column)
            filled = [i for i in kept if not _empty(rows[i][at])]
            empty = [i for i in kept if _empty(rows[i][at])]
            filled.sort(key=lambda i: _sort_key(rows[i][at]), reverse=direction == "desc")
            kept = filled + empty
        return kept


class Opener:
    """Calls back on a view's ``{"type": "open", "id": ...}`` message: a click on an item,
    already selected or not (a click on the selected one changes no trait)."""

    def __init__(self, widget: Any) -> None:
        self._callbacks: list[Callable[[str], None]] = []
        widget.on_msg(self._message)

    def __call__(self, callback: Callable[[str], None]) -> None:
        self._callbacks.append(callback)

    def _message(self, _: Any, content: dict[str, Any], buffers: list[bytes]) -> None:
        if isinstance(content, dict) and content.get("type") == "open":
            for callback in self._callbacks:
                callback(str(content.get("id") or ""))
