"""The items table's rules (`DataTable`), Python's alone: the front end draws `order`."""

from __future__ import annotations

import pytest

pytest.importorskip("anywidget")

from ctxlab.widgets._table import DataTable


def _table() -> DataTable:
    return DataTable(
        columns=["id", "tokens", "tool"],
        rows=[
            ["a", 30, "grep"],
            ["b", None, "Bash"],
            ["c", 4, "apply_patch"],
            ["d", 120, ""],
            ["e", 4, "bash"],
        ],
        key="id",
    )


def test_the_order_is_every_row_until_a_filter_or_sort() -> None:
    table = _table()
    assert table.order == [0, 1, 2, 3, 4]
    assert table.visible_rows() == table.rows


def test_text_sorts_case_insensitively_with_empty_cells_last_both_ways() -> None:
    table = _table()
    table.sort = ["tool", "asc"]
    assert [r[0] for r in table.visible_rows()] == ["c", "b", "e", "a", "d"]
    table.sort = ["tool", "desc"]
    # Ties ("Bash", "bash") keep the rows' own order in either direction; the empty cell last.
    assert [r[0] for r in table.visible_rows()] == ["a", "b", "e", "c", "d"]


def test_numbers_sort_numerically_and_the_filter_matches_any_cell_in_any_case() -> None:
    table = _table()
    table.sort = ["tokens", "asc"]
    assert table.order == [2, 4, 0, 3, 1]  # 4, 4, 30, 120, then the empty cell
    table.filter = "  BASH "
    assert table.order == [4, 1]  # sorted by tokens, the empty one last
    table.sort = ["", ""]
    assert table.order == [1, 4]
    table.rows = [["x", 1, "bash"]]
    assert table.order == [0] and table.visible_rows() == [["x", 1, "bash"]]


def test_a_sort_on_an_unknown_column_is_refused_with_the_columns() -> None:
    import traitlets

    with pytest.raises(traitlets.TraitError, match=r"cannot sort by 'size'.*'tokens'"):
        _table().sort = ["size", "asc"]
