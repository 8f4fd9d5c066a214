"""The grader's patterns for numbers and identifiers, their look-behind written once before
the branches (for speed), find what the patterns written branch by branch find — on every text
of the corpus and on made-up texts. (The summarizer's own pattern is tested beside it.)"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.retention._extract import _IDENTIFIER, _NUMBER
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts
from tests.strategies import SETTINGS

# The definitions: each branch with its own look-behind.
PLAIN_NUMBER = re.compile(r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.]*\w)|(?<![\w.])\d{2,}(?![\w.]*\w)")
PLAIN_IDENTIFIER = re.compile(
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?!\w)"
    r"|(?<![\w.])_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w)"
    r"|(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w)"
)
PAIRS = [(_NUMBER, PLAIN_NUMBER), (_IDENTIFIER, PLAIN_IDENTIFIER)]
PIECES = st.sampled_from([*"aZ_.1 9v/-\n", "ab_cd", "FooBar", "1.2.3", "x.y", "42", "é"])


@requires_corpus
@pytest.mark.parametrize(("pattern", "plain"), PAIRS, ids=["number", "identifier"])
def test_the_same_matches_on_every_corpus_text(
    pattern: re.Pattern[str], plain: re.Pattern[str]
) -> None:
    texts = corpus_texts()
    assert len(texts) > 5_000
    assert [pattern.findall(t) for t in texts] == [plain.findall(t) for t in texts]


@SETTINGS
@given(st.lists(PIECES, max_size=20).map("".join))
def test_the_same_matches_on_made_up_text(text: str) -> None:
    for pattern, plain in PAIRS:
        assert pattern.findall(text) == plain.findall(text)
