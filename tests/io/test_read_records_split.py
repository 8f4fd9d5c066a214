"""`read_records` splits a file's text into lines once, for both the check that a document was
cut off and the JSON Lines read: what it answers — records, lines left out, the error of a file
cut off or not JSON — is what splitting it twice answered (the former functions kept here)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import _files
from ctxlab.io._files import read_records
from ctxlab.util import _jsonl
from ctxlab.util._jsonl import cut_off, session_lines
from tests.strategies import SETTINGS

# Every line break of str.splitlines, and whitespace that is none.
_SPACES = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029 \t\xa0"


def _old_is_json_lines(text: str) -> bool:
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    try:
        json.loads(lines[0])
    except (ValueError, RecursionError):
        return False
    return True


def _old_truncated(text: str) -> bool:
    # Whether the former `_raise_if_truncated` raised for ``text``.
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{" or _old_is_json_lines(text):
        return False
    return cut_off(text) is not None


def _old_parsed(text: str) -> tuple[list[tuple[int, Any]], list[int], tuple[int, str]]:
    # The former `_parsed`: records, the numbers of lines not JSON, the last filled line
    # (each line stripped twice).
    records, bad, last = [], [], (0, "")
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        last = (number, line.strip())
        try:
            records.append((number, json.loads(line)))
        except (ValueError, RecursionError):
            bad.append(number)
    return records, bad, last


def _answer(call: Any) -> Any:
    try:
        return ("ok", call())
    except MessageFormatError as exc:
        return ("error", str(exc))


pieces = st.one_of(
    st.sampled_from(['{"a": 1}', "[1, 2]", '{"a": ', '"x"', "{", "[", "]", "}", "1", "nope"]),
    st.text(st.sampled_from(_SPACES), min_size=1, max_size=3),
    st.text(max_size=4),
)


@SETTINGS
@given(st.lists(pieces, max_size=12).map("".join))
@example('{"a": 1}\n{')  # JSON Lines whose last line is cut off: not a document cut off
@example('\u2028 {"a": \n')  # past a line break that is no JSON whitespace
def test_truncation_check_answers_as_before(text: str) -> None:
    new = _answer(lambda: _files._raise_if_truncated(Path("f"), text, text.splitlines()))
    assert (new[0] == "error") == _old_truncated(text)


@SETTINGS
@given(st.lists(pieces, max_size=12).map("".join))
def test_lines_split_once_read_as_before(text: str) -> None:
    old = _answer(lambda: session_lines(Path("f"), text))
    new = _answer(lambda: session_lines(Path("f"), text, text.splitlines()))
    assert new == old


@SETTINGS
@given(st.lists(pieces, max_size=12).map("".join))
@example('{"a": 1}\n{"b": 2}\n  {"c": ')  # a last line cut off past its indent
def test_lines_parsed_as_the_former_parse_did(text: str) -> None:
    # Against the former function, not the new one unsplit (which shares the new loop).
    lines, last = _jsonl._parsed(text, text.splitlines())
    assert (lines.records, [n for n, _ in lines.not_json], last) == _old_parsed(text)


def test_an_indented_last_line_cut_off_is_the_line_cut_off(tmp_path: Path) -> None:
    # Its text past the indent opens an object that stops part way (i67-rev1: no test asked).
    path = tmp_path / "live.jsonl"
    path.write_text('{"a": 1}\n{"b": 2}\n  {"c": ', "utf-8")
    found = read_records(path)
    assert found.records == [(1, {"a": 1}), (2, {"b": 2})]
    assert found.cut_line == 3
    assert found.lines is not None and found.lines.not_json == []


def test_a_document_cut_off_after_a_blank_start_is_said_so(tmp_path: Path) -> None:
    # Its first character past the blank lines opens the document.
    path = tmp_path / "cut.json"
    path.write_text('\n \n  {"messages": [\n  {"role": "user", "content": "hi"}', "utf-8")
    try:
        read_records(path)
    except MessageFormatError as exc:
        assert "ends before its JSON document does (line 4" in str(exc)
    else:
        raise AssertionError("a document cut off was read")


def test_json_lines_with_a_blank_start_are_records(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('\n \n{"a": 1}\n\n{"b": 2}\n', "utf-8")
    found = read_records(path)
    assert found.records == [(3, {"a": 1}), (5, {"b": 2})]
    assert found.document is None


def test_json_lines_whose_last_line_is_cut_off_are_records(tmp_path: Path) -> None:
    # Its first line is a whole value and another follows: JSON Lines, not a document cut off.
    path = tmp_path / "live.jsonl"
    path.write_text('{"a": 1}\n{', "utf-8")
    found = read_records(path)
    assert found.records == [(1, {"a": 1})]
    assert found.cut_line == 2
