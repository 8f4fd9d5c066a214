"""The lowest layer: escaped HTML pieces and JSON Lines reading."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.util._html import MAX_ROWS, bar_html, escape, table_html
from ctxlab.util._jsonl import json_lines, read_text

XSS = "<img src=x onerror=alert(1)>"


def test_every_cell_and_header_is_escaped_and_long_tables_say_how_many_more() -> None:
    page = table_html([[XSS, None]] * (MAX_ROWS + 3), [XSS, "b"])
    assert XSS not in page and "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<tr>") == MAX_ROWS + 2  # the header, the rows shown, the "more" line
    assert "… 3 more" in page
    assert escape(None) == "" and escape("a&b") == "a&amp;b"


def test_a_bar_is_its_placements_as_shares_of_the_scale() -> None:
    bar = bar_html({"system": 250, "conversation": 750, "tools": 0}, 2_000)
    assert "width:12.50%" in bar and "width:37.50%" in bar and "tools" not in bar


def test_json_lines_name_the_file_and_line_of_what_is_wrong(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    assert json_lines(path, '{"a": 1}\n\n[2]\n') == [(1, {"a": 1}), (3, [2])]
    with pytest.raises(MessageFormatError, match=r"s.jsonl line 2: "):
        json_lines(path, '{"a": 1}\n{oops\n')
    path.write_bytes(b'{"a": 1}\n{"b": "\xff"}\n')
    with pytest.raises(MessageFormatError, match=r"line 2: not UTF-8 text"):
        read_text(path)
    with pytest.raises(MessageFormatError, match="cannot read"):
        read_text(tmp_path / "missing.jsonl")
