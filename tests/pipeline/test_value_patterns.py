"""The summarizer's pattern for the values and names an agent wrote, its look-behind written
once before the branches (for speed), finds what the pattern written branch by branch finds —
on every text of the corpus and on made-up texts."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._span import _VALUE
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts
from tests.strategies import SETTINGS

# The definition: each branch with its own look-behind.
PLAIN = re.compile(
    r"(?<![\w.])(?:v?\d+(?:\.\d+)+|\d{2,})(?![\w.]*\w)"
    r"|(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?!\w)"
    r"|(?<![\w.])_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w)"
    r"|(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w)"
)
PIECES = st.sampled_from([*"aZ_.1 9v/-\n", "ab_cd", "FooBar", "1.2.3", "x.y", "42", "é"])


@requires_corpus
def test_the_same_values_on_every_corpus_text() -> None:
    texts = corpus_texts()
    assert len(texts) > 5_000
    assert [_VALUE.findall(t) for t in texts] == [PLAIN.findall(t) for t in texts]


@SETTINGS
@given(st.lists(PIECES, max_size=20).map("".join))
def test_the_same_values_on_made_up_text(text: str) -> None:
    assert _VALUE.findall(text) == PLAIN.findall(text)
