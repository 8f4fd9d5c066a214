"""A message's preview reads a bounded head of its text, and says exactly what flattening the
whole text would (`_preview`: the items table describes every item of a request when a
5,000-request recording opens, 10,000 tool outputs)."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.manifest._explain import _PREVIEW, _preview
from tests.strategies import SETTINGS


def _reference(text: str) -> str:
    # The definition: the whole text's whitespace collapsed, cut at 80 characters.
    flat = " ".join(text.split())
    return flat if len(flat) <= _PREVIEW else flat[: _PREVIEW - 1] + "…"


# Words and runs of whitespace of every kind (Unicode's too), long enough to cross the head.
_pieces = st.lists(
    st.one_of(
        st.text(alphabet=st.characters(codec=None, categories=None), max_size=30),
        st.text(alphabet=" \n\t\r\x0b\x0c\x1c\x85\u2028\u3000", min_size=1, max_size=400),
        st.sampled_from(["x" * 79, "y" * 80, "z" * 81, "w" * 319, "v" * 320, "u" * 321]),
    ),
    max_size=12,
)


@SETTINGS
@given(_pieces)
def test_a_preview_is_the_whole_text_flattened_and_cut(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert _preview(text) == _reference(text)


def test_a_preview_of_a_long_text_that_is_mostly_whitespace_reads_past_the_head() -> None:
    text = "a" + " " * 10_000 + "b"
    assert _preview(text) == "a b"


def _seconds(text: str) -> float:
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(20):
            _preview(text)
        best = min(best, time.perf_counter() - started)
    return best


def test_a_previews_cost_does_not_grow_with_its_text() -> None:
    # Same sitting, best of 5: a 4 MB tool output against a 400-character one. Reading the
    # whole text (the old `" ".join(text.split())`) made it about 10,000 times dearer.
    short = "word " * 80
    long = "word " * 800_000
    assert _preview(long) == _reference(long)
    assert _seconds(long) < 20 * _seconds(short)


def test_a_long_text_led_by_whitespace_is_not_read_whole() -> None:
    # Review of stop 63: a head that flattens short (a tool output led by blank lines or
    # indentation) was answered by flattening the whole text, 10,000 times dearer at 4 MB.
    short = "word " * 80
    for lead in (" " * 400, "{\n" + "        \n" * 40):
        long = lead + "word " * 800_000
        assert _preview(long) == _reference(long)
        assert _seconds(long) < 20 * _seconds(short), repr(lead[:10])
