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
from ctxlab.messages import MAX_TOKENS
from ctxlab.tokens import (
    TiktokenCounter,
    TokenCache,
    TokenCount,
    TokenCounter,
    ToktokCounter,
    toktok_available,
)
from ctxlab.tokens._counter import MIN_CHARS_PER_TOKEN
from tests.hostile import says


@pytest.mark.parametrize("ratio", [math.nan, math.inf, -math.inf, 0, -1, "4", True, None])
def test_a_ratio_no_count_can_come_from_is_refused(ratio: Any) -> None:
    with pytest.raises(UsageError) as caught:
        ApproximateCounter(ratio)
    says(str(caught.value), "chars_per_token must be a positive, finite number", repr(ratio))


@pytest.mark.parametrize("ratio", [1e-300, 5e-324, 0.01, 0.2499])
def test_a_ratio_that_counts_more_tokens_than_any_tokenizer_is_refused(ratio: float) -> None:
    # 1e-300 counted three characters as 3e300 tokens, past MAX_TOKENS (issue 51).
    with pytest.raises(UsageError) as caught:
        ApproximateCounter(ratio)
    says(str(caught.value), "chars_per_token must be at least 0.25", repr(ratio))


def test_the_smallest_ratio_counts_within_what_a_text_can_have() -> None:
    counter = ApproximateCounter(MIN_CHARS_PER_TOKEN)
    assert counter.count_text("abc") == 12
    text = "\U0001f600" * 1_000  # 4 bytes a character: 4,000 bytes, at most a token each
    assert counter.count_text(text) == 4_000 <= len(text.encode()) <= MAX_TOKENS


def test_a_whole_or_fractional_ratio_counts() -> None:
    assert ApproximateCounter(2).count_text("abcde") == 3
    assert ApproximateCounter(0.5).count_text("abc") == 6
    assert ApproximateCounter(4).method == "approximate:chars/4"


@settings(database=None, max_examples=80, deadline=None)
@given(
    text=st.text(max_size=300),
    ratio=st.floats(min_value=0.25, max_value=50, allow_nan=False, allow_infinity=False),
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


@pytest.mark.parametrize("counter", ["cl100k_base", 4, ApproximateCounter, None])
def test_a_cache_of_something_that_counts_nothing_is_refused_at_once(counter: Any) -> None:
    # It was accepted, and failed at the first text as an attribute never found.
    with pytest.raises(UsageError) as caught:
        TokenCache(counter)
    says(str(caught.value), "counter must be a token counter", "ApproximateCounter()")


def test_a_cache_store_that_is_no_store_is_refused() -> None:
    with pytest.raises(UsageError) as caught:
        TokenCache(ApproximateCounter(), store="counts.sqlite")  # type: ignore[arg-type]
    says(str(caught.value), "store must be a CountStore", "'counts.sqlite'")
    assert TokenCache(ApproximateCounter()).text("abcdefgh") == 2  # control


@pytest.mark.parametrize("text", ["a\ud800b", "\udcff\udcfe hello", "ok \ud83d", "\ud800" * 3])
def test_the_default_counter_counts_a_lone_surrogate_as_tiktoken_does(text: str) -> None:
    # A file may hold one (Continue, Goose): the fast counter raised UnicodeEncodeError where
    # tiktoken counts it as U+FFFD — the whole replay failed on one character.
    fast = ToktokCounter() if toktok_available() else pytest.skip("toktok-rs is not installed")
    assert fast.count_text(text) == TiktokenCounter().count_text(text) > 0
    batch = [text] * 3_000  # past the batch size that counts on two threads
    assert fast.count_many(batch) == [TiktokenCounter().count_text(text)] * 3_000


@pytest.mark.parametrize("counter", [ApproximateCounter(), TiktokenCounter()])
@pytest.mark.parametrize("text", [None, 42, b"bytes"])
def test_a_counter_given_no_text_says_so(counter: TokenCounter, text: Any) -> None:
    with pytest.raises(UsageError) as caught:
        counter.count_text(text)
    says(str(caught.value), "a token counter counts text", repr(text))
