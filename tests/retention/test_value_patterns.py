"""The patterns for the values and names an agent wrote — the grader's for numbers and for
identifiers, the summarizer's for both at once (``ctxlab.pipeline._span_text``) — each with its
look-behind written once before the branches (for speed), find what the same pattern written
branch by branch finds: on every text of the corpus, on made-up texts, and on the runs that
once took quadratic time (which they now read in linear time). The summarizer's `find_values`
(its pattern, or the pattern's ASCII twin on an ASCII text) is held to the same definition."""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._span_text import _VALUE, find_values
from ctxlab.retention._extract import _IDENTIFIER, _NUMBER
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts
from tests.hostile import FAILING_RUNS, assert_linear
from tests.strategies import SETTINGS

# The definitions: each branch with its own look-behind.
NUMBER = r"(?<![\w.])v?\d+(?:\.\d+)+(?![\w.]*\w)|(?<![\w.])\d{2,}(?![\w.]*\w)"
IDENTIFIER = (
    r"(?<![\w.])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?!\w)"
    r"|(?<![\w.])_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w)"
    r"|(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w)"
)
VALUE = r"(?<![\w.])(?:v?\d+(?:\.\d+)+|\d{2,})(?![\w.]*\w)|" + IDENTIFIER
# Each pattern, its definition, and what it must find in the text around a failing run below.
PAIRS = [
    pytest.param(_NUMBER, re.compile(NUMBER), {"42", "1.2.3", "v2.0"}, id="number"),
    pytest.param(_IDENTIFIER, re.compile(IDENTIFIER), {"FooBar", "FooBar.x"}, id="identifier"),
    pytest.param(
        _VALUE, re.compile(VALUE), {"42", "1.2.3", "v2.0", "FooBar", "FooBar.x"}, id="value"
    ),
    # What the summarizer calls: an ASCII text read by the ASCII twin (the made-up texts mix
    # both kinds: "é" is one of their pieces).
    pytest.param(
        SimpleNamespace(findall=find_values),
        re.compile(VALUE),
        {"42", "1.2.3", "v2.0", "FooBar", "FooBar.x"},
        id="find_values",
    ),
]
PIECES = st.sampled_from([*"aZ_.1 9v/-\n", "ab_cd", "FooBar", "1.2.3", "x.y", "42", "é"])


@requires_corpus
@pytest.mark.parametrize(("pattern", "plain", "found"), PAIRS)
def test_the_same_matches_on_every_corpus_text(
    pattern: re.Pattern[str], plain: re.Pattern[str], found: set[str]
) -> None:
    texts = corpus_texts()
    assert len(texts) > 5_000
    assert [pattern.findall(t) for t in texts] == [plain.findall(t) for t in texts]


@pytest.mark.parametrize(("pattern", "plain", "found"), PAIRS)
@SETTINGS
@given(text=st.lists(PIECES, max_size=20).map("".join))
def test_the_same_matches_on_made_up_text(
    pattern: re.Pattern[str], plain: re.Pattern[str], found: set[str], text: str
) -> None:
    assert pattern.findall(text) == plain.findall(text)


@pytest.mark.parametrize(("prefix", "unit", "end"), FAILING_RUNS)
@pytest.mark.parametrize("pattern", [p.values[0] for p in PAIRS], ids=[p.id for p in PAIRS])
def test_a_run_ended_by_a_failing_character_is_read_in_linear_time(
    pattern: re.Pattern[str], prefix: str, unit: str, end: str
) -> None:
    # Issue 51: '1' * k + 'x' took 9-24x the time for 4x the length (6.8 s at 20,000 digits).
    def make(n: int) -> Callable[[], object]:
        text = prefix + unit * (n // len(unit)) + end
        return lambda: pattern.findall(text)

    assert_linear(make, 20_000, 2.0)


@pytest.mark.parametrize(("prefix", "unit", "end"), FAILING_RUNS)
@pytest.mark.parametrize(("pattern", "plain", "found"), PAIRS)
def test_the_failing_runs_read_as_the_definition(
    pattern: re.Pattern[str],
    plain: re.Pattern[str],
    found: set[str],
    prefix: str,
    unit: str,
    end: str,
) -> None:
    # Short, where the definition is fast; values before and after so that each has a match.
    text = f"see 42 and {prefix}{unit * 30}{end} then 1.2.3, v2.0. and FooBar and FooBar.x"
    assert pattern.findall(text) == plain.findall(text)
    assert found <= set(pattern.findall(text))
