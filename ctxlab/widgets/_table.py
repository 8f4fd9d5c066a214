"""`DataTable`: a sortable, filterable table of text cells, ctxlab's own anywidget.

Chosen over a grid package (ipydatagrid, itables): the tables here hold at most a few hundred
rows of short text, so a plain HTML table renders them at once; a grid widget would add a
dependency and a front end of its own (ipydatagrid does not render in Colab), while this one
runs wherever anywidget does. Clicking a header sorts (ascending, descending, original order),
the filter box keeps the rows containing its text, clicking a row selects it. The rules live
here only: the front end writes ``filter``, ``sort`` and ``page``, Python answers with the
rows of that page in their order (``page_rows``, from ``order``: the visible rows' indices),
and ``widgets/table.js`` draws them — so `visible_rows` is what the reader sees, page by page,
by construction.

Paged, because a request of a long recording holds thousands of items: the rows themselves
stay in the kernel and only the page shown travels to the page (``PAGE_SIZE`` rows; 10,000
items of a 5,000-request recording were 2.2 MB of widget state, drawn as 70,000 cells before
the budget plot could draw). A selected row's page is shown (a click on the map opens it).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from ctxlab.widgets._map import _static

__all__ = ["DataTable"]

SORT_DIRECTIONS = ("asc", "desc")
PAGE_SIZE = 100
"""Rows on one page of the table (the rest are asked for by the pager)."""


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
    rows = traitlets.List(trait=traitlets.List())
    """Every row (kept in the kernel: the front end gets `page_rows`)."""
    key = traitlets.Unicode("").tag(sync=True)
    """The column whose value a click on the row puts in `selected`."""
    filter = traitlets.Unicode("").tag(sync=True)
    """Keep the rows whose cells contain this text (case-insensitive)."""
    sort = traitlets.List(trait=traitlets.Unicode(), default_value=["", ""]).tag(sync=True)
    """``[column, "asc" | "desc"]``; ``["", ""]`` keeps the rows' own order."""
    selected = traitlets.Unicode("").tag(sync=True)
    css_class = traitlets.Unicode("").tag(sync=True)
    order = traitlets.List(trait=traitlets.Int())
    """The indices into `rows` of the rows shown, in the order shown (set here, from
    `filter` and `sort`)."""
    page = traitlets.Int(0).tag(sync=True)
    """The page shown (from 0; the front end's pager writes it, Python keeps it in range)."""
    page_size = traitlets.Int(PAGE_SIZE).tag(sync=True)
    page_rows = traitlets.List(trait=traitlets.List()).tag(sync=True)
    """The rows of `page`, in `order` (what the front end draws)."""
    shown = traitlets.Int(0).tag(sync=True)
    """How many rows the filter keeps (of `total`)."""
    total = traitlets.Int(0).tag(sync=True)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.observe(lambda _: self._reorder(), names=["rows", "columns", "filter", "sort"])
        self.observe(lambda _: self._paginate(), names=["page", "page_size"])
        self.observe(lambda _: self._show_selected(), names=["selected"])
        self._reorder()

    def _reorder(self) -> None:
        with self.hold_sync():
            self.order = self._visible_indices()
            self.total, self.shown = len(self.rows), len(self.order)
            # New rows or a new filter or sort: back to the selected row's page, else the first.
            self.page = self._page_of(self.selected) or 0
            self._paginate()

    def _paginate(self) -> None:
        size = max(self.page_size, 1)
        last = max(len(self.order) - 1, 0) // size
        if not 0 <= self.page <= last:
            self.page = min(max(self.page, 0), last)  # observed: paginates again
            return
        start = self.page * size
        self.page_rows = [self.rows[i] for i in self.order[start : start + size]]

    def _page_of(self, row_id: str) -> int | None:
        at = self.columns.index(self.key) if self.key in self.columns else -1
        if not row_id or at < 0:
            return None
        for position, index in enumerate(self.order):
            if str(self.rows[index][at]) == row_id:
                return position // max(self.page_size, 1)
        return None

    def _show_selected(self) -> None:
        page = self._page_of(self.selected)
        if page is not None:
            self.page = page

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
        """The rows as shown: filtered by `filter`, ordered by `sort` (`order`'s rows), over
        every page."""
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
