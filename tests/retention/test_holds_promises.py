"""`holds`, the retention grade's test of whether a text keeps an item, against a reference
written here as a regular expression: the item occurs where a word character at either of its
ends does not continue a longer word of the text — anywhere in the text, at its first or last
character included; a path also by its last two components. And the pinned text (the user's
first message kept verbatim beside the summary) graded apart, for paths and ``output_only``."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.messages import AssistantMessage, HintBlock, UserMessage
from ctxlab.retention import holds, measure_retention
from ctxlab.retention._measure import (
    CategoryRetention,
    Retention,
    _in_words,
    _words,
    request_text,
)
from tests.helpers import exchange, tool_call

ALPHABET = "ab_1 ./-"


def _reference(text: str, item: str) -> bool:
    before = r"(?<!\w)" if re.match(r"\w", item[0], re.ASCII) else ""
    after = r"(?!\w)" if re.match(r"\w", item[-1], re.ASCII) else ""
    return re.search(before + re.escape(item) + after, text, re.ASCII) is not None


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(ALPHABET, max_size=14), st.text(ALPHABET, min_size=1, max_size=4))
def test_a_text_holds_an_item_where_it_occurs_as_whole_words(text: str, item: str) -> None:
    assert holds(text, item) == _reference(text, item)


@settings(max_examples=200, deadline=None, database=None)
@given(
    st.text(ALPHABET, max_size=14),
    st.lists(st.text("ab1.", min_size=1, max_size=3), min_size=1, max_size=4),
)
def test_a_path_is_held_whole_or_by_its_last_two_components(text: str, parts: list[str]) -> None:
    item = "/".join(parts)
    short = "/".join(p for p in parts if p != ".")  # "." components are no part of the path
    tail = "/".join(short.split("/")[-2:]) if short else ""
    expected = _reference(text, item) or (bool(tail) and _reference(text, tail))
    assert holds(text, item, path=True) == expected


def test_the_edges_of_the_text_and_a_later_occurrence_count() -> None:
    assert holds("ab", "b") is False and holds("a b", "b") is True
    assert holds("b a", "b") is True  # at the first character
    assert holds("xb b", "b") is True  # the first occurrence continues a word, a later one not
    assert holds("b xb", "b") is True  # the first one counts, a later one does not
    assert holds("ba", "b") is False and holds("ab.", "b.") is False
    assert holds("", "b") is False and holds("b", "") is False


def test_output_only_paths_are_words_of_the_text_or_its_longer_paths() -> None:
    words = _words("see /testbed/pkg/mod/file.py:12: and ./notes.txt.")
    assert _in_words(words, "pkg/mod/file.py") and _in_words(words, "mod/file.py")
    assert _in_words(words, "./other/mod/file.py")  # its last two components
    assert _in_words(words, "./mod/file.py") and _in_words(words, "mod//file.py")
    assert _in_words(words, "notes.txt")
    assert not _in_words(words, "file.py/x") and not _in_words(words, "other/file.py")
    assert not _in_words({"a.py"}, "src/a.py")  # one component is not enough for a path


def _span() -> list[UserMessage | AssistantMessage]:
    return [
        UserMessage(content="Fix the bug in src/app/models.py."),
        *exchange("r", "Read", "see pkg/mod/util.py", file_path="/testbed/src/app/models.py"),
    ]


def test_the_pinned_text_is_graded_apart_for_paths_and_outputs() -> None:
    pinned = "Task: fix /work/src/app/models.py; context in /x/pkg/mod/util.py."
    graded = measure_retention(_span(), "A summary naming nothing.", (), pinned=pinned)
    files, outputs = graded["files"], graded["output_only"]
    assert (files.total, files.in_pinned, files.in_summary, files.kept) == (1, 1, 0, 1)
    assert (outputs.total, outputs.in_pinned, outputs.kept) == (1, 1, 1)
    # A pinned text naming none of them keeps none; without one, nothing is pinned.
    for other in ("Task: something else.", ""):
        graded = measure_retention(_span(), "A summary naming nothing.", (), pinned=other)
        assert graded["files"].in_pinned == 0 and graded["output_only"].in_pinned == 0
        assert graded["files"].lost == ("/testbed/src/app/models.py",)


def test_the_shares_are_means_over_the_categories_with_items_and_each_row_says_its_figures() -> (
    None
):
    categories = {
        "files": CategoryRetention(total=4, kept=3, in_summary=2, in_pinned=1, in_tail=1),
        "commands": CategoryRetention(total=2, kept=1, in_summary=1, in_tail=0),
        "errors": CategoryRetention(),
    }
    graded = Retention(categories)
    assert graded.share("files", "commands", "errors") == (0.75 + 0.5) / 2
    assert graded.control_share("files", "commands") == (0.25 + 0.0) / 2
    assert graded.share("errors") is None
    assert graded.rows() == [
        {
            "category": "files",
            "total": 4,
            "kept": 3,
            "in_summary": 2,
            "in_pinned": 1,
            "in_tail": 1,
            "share": 0.75,
            "control": 0.25,
        },
        {
            "category": "commands",
            "total": 2,
            "kept": 1,
            "in_summary": 1,
            "in_pinned": 0,
            "in_tail": 0,
            "share": 0.5,
            "control": 0.0,
        },
    ]


def test_a_hint_and_a_calls_arguments_are_text_the_request_holds() -> None:
    kept: list[UserMessage | AssistantMessage] = [
        UserMessage(content=(HintBlock(hint="Remember src/app/models.py"),)),
        tool_call("e", "Edit", edits=[{"path": "pkg/mod/util.py"}]),
    ]
    assert request_text(kept) == "Remember src/app/models.py pkg/mod/util.py"
    graded = measure_retention(_span(), "A summary naming nothing.", kept)
    assert (graded["files"].in_tail, graded["output_only"].in_tail) == (1, 1)
