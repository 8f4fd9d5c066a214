"""The summarizer's pattern for the values and names an agent wrote, its look-behind written
once before the branches (for speed), finds what the pattern written branch by branch finds —
on every text of the corpus and on made-up texts."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._span_text import _VALUE
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts
from tests.hostile import FAILING_RUNS, assert_linear
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


@pytest.mark.parametrize(("prefix", "unit", "end"), FAILING_RUNS)
def test_a_run_ended_by_a_failing_character_is_read_in_linear_time(
    prefix: str, unit: str, end: str
) -> None:
    # Issue 51: '1' * k + 'x' took 9-24x the time for 4x the length.
    def make(n: int) -> Callable[[], object]:
        text = prefix + unit * (n // len(unit)) + end
        return lambda: _VALUE.findall(text)

    assert_linear(make, 20_000, 2.0)


@pytest.mark.parametrize(("prefix", "unit", "end"), FAILING_RUNS)
def test_the_failing_runs_read_as_the_definition(prefix: str, unit: str, end: str) -> None:
    # Short, where the definition is fast; values before and after so that each has a match.
    text = f"see 42 and {prefix}{unit * 30}{end} then 1.2.3, v2.0. and FooBar"
    assert _VALUE.findall(text) == PLAIN.findall(text)
    assert {"42", "1.2.3", "v2.0", "FooBar"} <= set(_VALUE.findall(text))
