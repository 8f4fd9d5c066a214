"""The words a value can be (`_written.named_words`, issue 54 i68-summ): a summary's words read
without the plain ones ("the", "Then"), which no value is. Checked against `words_of` (every
word, the reader before) over generated texts with capitals, digits, dots and non-ASCII
letters, and `unwritten` against the implementation before, kept here."""

from __future__ import annotations

import re
from collections.abc import Iterable

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.pipeline._span_text import find_values
from ctxlab.pipeline._written import FINDS, named_words, unwritten, written_as_word
from tests.pipeline.written_reference import words_of

ALPHABET = "aTb_.1 é-/xZ\n"
_PLAIN = re.compile(r"[A-Za-z][a-z]*")


def unwritten_before(values: Iterable[str], text: str) -> list[str]:
    """`unwritten` before i68-summ: many values checked against every word of the text."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) <= FINDS:
        return [v for v in distinct if not written_as_word(text, v)]
    words = words_of(text)
    return [v for v in distinct if not (v in words if v else written_as_word(text, v))]


@settings(max_examples=500, deadline=None, database=None)
@given(st.text(ALPHABET, max_size=60))
def test_the_named_words_are_every_word_not_plain_and_perhaps_a_few_plain(text: str) -> None:
    every, named = words_of(text), named_words(text)
    assert named <= every
    assert {w for w in every if not _PLAIN.fullmatch(w)} == {
        w for w in named if not _PLAIN.fullmatch(w)
    }


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(ALPHABET, max_size=80), st.lists(st.text(ALPHABET, max_size=6), max_size=30))
def test_the_unwritten_values_are_those_before(text: str, extra: list[str]) -> None:
    # The span's own values of the text (what the summarizer checks) and arbitrary ones (plain
    # words, the empty one), many of them: the words read once.
    padding = [f"Pad{i}_x" for i in range(FINDS + 1)]
    values = [*find_values(text), *extra, *padding]
    assert unwritten(values, text) == unwritten_before(values, text)
    parts = text.split(" ")
    assert unwritten(values, text, parts=parts) == unwritten_before(values, text)


def test_plain_words_are_left_out_and_names_kept() -> None:
    text = "Then run the FooBar check on v1.2 and foo_bar.baz: done. Now x_1, e.g. Ab"
    named = named_words(text)
    assert named >= {"FooBar", "v1.2", "foo_bar.baz", "x_1", "e.g", "done"}
    assert not named & {"Then", "run", "the", "check", "on", "and", "Now", "Ab"}
    # A plain value is still found written (searched for), and a missing one is not.
    values = ["the", "check", "missing", "FooBar", "Zed9", *(f"p{i}_q" for i in range(FINDS))]
    assert unwritten(values, text)[:2] == ["missing", "Zed9"]
