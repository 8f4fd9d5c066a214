"""`ApproximateCounter` refuses a ratio no count can come from — NaN (every count a crash),
infinity (every count 0), 0 or less, text, a bool — with a `UsageError` naming it."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter
from ctxlab.exceptions import UsageError
from ctxlab.tokens import TokenCount, TokenCounter
from tests.hostile import says


@pytest.mark.parametrize("ratio", [math.nan, math.inf, -math.inf, 0, -1, "4", True, None])
def test_a_ratio_no_count_can_come_from_is_refused(ratio: Any) -> None:
    with pytest.raises(UsageError) as caught:
        ApproximateCounter(ratio)
    says(str(caught.value), "chars_per_token must be a positive, finite number", repr(ratio))


def test_a_whole_or_fractional_ratio_counts() -> None:
    assert ApproximateCounter(2).count_text("abcde") == 3
    assert ApproximateCounter(0.5).count_text("abc") == 6
    assert ApproximateCounter(4).method == "approximate:chars/4"


@settings(database=None, max_examples=80, deadline=None)
@given(
    text=st.text(max_size=300),
    ratio=st.floats(min_value=0.01, max_value=50, allow_nan=False, allow_infinity=False),
)
def test_a_count_is_the_characters_over_the_ratio_rounded_up(text: str, ratio: float) -> None:
    counter = ApproximateCounter(ratio)
    expected = math.ceil(len(text) / ratio)
    assert counter.count_text(text) == expected
    assert counter.count(text) == TokenCount(expected, f"approximate:chars/{ratio:g}", False)
    assert counter.exact is False and isinstance(counter, TokenCounter)


def test_the_method_names_the_ratio() -> None:
    assert ApproximateCounter(3.5).method == "approximate:chars/3.5"
    assert ApproximateCounter().method == "approximate:chars/4"
    assert ApproximateCounter().count_text("abcde") == 2
    assert ApproximateCounter(3).chars_per_token == 3.0
    with pytest.raises(UsageError) as caught:
        ApproximateCounter(-2)
    assert str(caught.value) == (
        "chars_per_token must be a positive, finite number of characters a token "
        "(4 by default), got -2"
    )
