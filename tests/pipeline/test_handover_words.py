"""The summarizer writes a value under "Values and names" only when the summary does not
already hold it as a word: found with `str.find` and the characters around each hit, which must
agree with the definition — the set of runs of word characters and dots, end dots left out."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._written import written_as_word
from tests.strategies import SETTINGS

PIECES = st.sampled_from([*"ab._ -/é1\n:", "ab", "a.b", "..", "²", "٣", "x_y"])


def _words(text: str) -> set[str]:
    return {w.strip(".") for w in re.findall(r"[\w.]+", text)}


@SETTINGS
@given(st.lists(PIECES, max_size=14).map("".join), st.lists(PIECES, max_size=5).map("".join))
def test_a_value_is_written_exactly_when_it_is_one_of_the_words(text: str, value: str) -> None:
    assert written_as_word(text, value) == (value in _words(text))


def test_the_cases_that_matter() -> None:
    summary = "$ pytest tests/test_a.py  → 3 failed. Changed src/a.py: x → y; v1.2.3, done..."
    assert written_as_word(summary, "v1.2.3")
    assert written_as_word(summary, "done")  # its end dots are not part of the word
    assert written_as_word("src/a.py", "a.py")  # "/" ends a word
    assert not written_as_word("test_a.py", "a.py")  # inside a longer name it is not written
    assert not written_as_word("v1.2.3", "1.2")
    assert not written_as_word("a.b", "b") and not written_as_word("a..b", "a")
    assert not written_as_word("x", "x-y")  # never a word: "-" is not a word character
    assert written_as_word("é1 done", "é1")  # word characters are Unicode's
    assert not written_as_word("xé1", "é1")
