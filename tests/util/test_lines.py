"""`lines_holding`: each line pattern of the summarizer and the grader finds, in the lines it
keeps, exactly what it finds in the whole output — on every corpus tool output and on texts made
to trip it (blank runs, ``E`` prefixes, a word at a line's end, no newline at the end)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io._transcript import load_transcript
from ctxlab.messages import UserMessage
from ctxlab.pipeline import _span
from ctxlab.retention import _extract
from ctxlab.util._lines import lines_holding
from tests.conftest import corpus_files, requires_corpus


def _error_line(found: str) -> str:
    # The grader's own reading of a match (collapsed, an ``E`` prefix off), as `_scan_outcomes`.
    return re.sub(r"^E\s+", "", _extract.collapse(found))


def _first(pattern: re.Pattern[str]) -> Callable[[str], Any]:
    def search(text: str) -> Any:
        match = pattern.search(text)
        return match and match.groups()

    return search


def _all(
    pattern: re.Pattern[str], read: Callable[[Any], Any] = lambda m: m
) -> Callable[[str], Any]:
    return lambda text: [read(m) for m in pattern.findall(text)]


# (what it is, the scan, the words its matches hold, its optional line prefix): as called
SCANS = [
    ("summary: failure lines", _all(_span._FAILURE), _span._FAILURE_WORDS, ("E",)),
    ("summary: test tallies", _span._tallies, _span._TALLY_WORDS, ()),
    ("summary: exit code", _first(_span._EXIT), _span._EXIT_WORDS, ()),
    ("grader: error lines", _all(_extract._ERROR_LINE, _error_line), _extract._ERROR_WORDS, ("E",)),
]


def test_a_hand_made_output() -> None:
    text = "ok\n\n  \nE   ValueError: bad\nmore\nFAILED x::y - boom\ntail error: gone"
    assert lines_holding(text, ("Error", "FAIL")) == "\n  \nE   ValueError: bad\nFAILED x::y - boom"
    assert lines_holding(text, ("rror: ",)) == "\n  \nE   ValueError: bad\ntail error: gone"
    assert lines_holding(text, ("nothing",)) == ""
    assert lines_holding("Error", ("Error",)) == "Error"
    assert lines_holding("E\n\nE\nx: Error", ("Error",), lead=("E",)) == "E\n\nE\nx: Error"
    assert lines_holding("E\n\nE\nx: Error", ("Error",)) == "x: Error"


@requires_corpus
@pytest.mark.parametrize("scan", SCANS, ids=[s[0] for s in SCANS])
def test_every_corpus_output_scans_the_same(
    scan: tuple[str, Callable[[str], Any], Any, Any],
) -> None:
    _name, read, words, lead = scan
    outputs = {
        result.text[:60_000]
        for path in corpus_files()
        for message in load_transcript(path).messages
        if isinstance(message, UserMessage)
        for result in message.tool_results
    }
    assert len(outputs) > 1_500
    found = 0
    for text in outputs:
        whole = read(text)
        assert read(lines_holding(text, words, lead=lead)) == whole, text[:200]
        found += bool(whole)
    assert found > 40  # the scans find things: the comparison is not of empty lists


LINE = st.sampled_from(
    [
        "",
        "   ",
        "\t",
        "E",
        "E   ",
        "E   ValueError: bad value",
        "E   some error: here",
        "Traceback (most recent call last):",
        "  File 'a.py', line 3",
        "KeyError: 'x'",
        "FAILED tests/t.py::test_a - AssertionError",
        "FAILED (failures=2)",
        "OK",
        "OK (skipped=1)",
        "Ran 3 tests in 0.01s",
        "===== 2 failed, 1 passed in 0.3s =====",
        "== error ==",
        "fatal: not a git repository",
        "<returncode>1</returncode>",
        "exit code 2",
        "Exit status: -1",
        "plain output line",
        "an Error inside",
        "ERROR",
        "x" * 30 + "rror: ",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINE, max_size=14), st.sampled_from(["\n", "\n\n", "\n \n"]), st.booleans())
def test_made_up_outputs_scan_the_same(lines: list[str], sep: str, newline_at_end: bool) -> None:
    text = sep.join(lines) + ("\n" if newline_at_end else "")
    for name, read, words, lead in SCANS:
        assert read(lines_holding(text, words, lead=lead)) == read(text), (name, text)
