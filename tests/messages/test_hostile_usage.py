"""Token counts no text can have — above `MAX_TOKENS`, thirty thousand digits — are refused
with a short message naming the field, however they arrive (a number, a string, a float)."""

from __future__ import annotations

import time

import pytest

from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import MAX_TOKENS, token_count


@pytest.mark.parametrize(
    "value", [MAX_TOKENS + 1, 2**63, 10**30, float(2**63), str(2**63), "9" * 30_000, -1]
)
def test_a_count_above_any_text_is_refused_naming_its_field(value: object) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match="usage field 'output_tokens' is ") as caught:
        token_count(value, "output_tokens")
    assert time.perf_counter() - started < 1.0
    assert len(str(caught.value)) < 200  # thirty thousand digits are not quoted whole
    assert f"from 0 to {MAX_TOKENS:,}" in str(caught.value)


def test_the_largest_count_is_taken() -> None:
    assert token_count(MAX_TOKENS, "f") == MAX_TOKENS
    assert token_count(str(MAX_TOKENS), "f") == MAX_TOKENS
    assert token_count(float(MAX_TOKENS), "f") == MAX_TOKENS


def test_provider_usage_refuses_a_huge_count() -> None:
    with pytest.raises(ValueError, match="'cache_read_input_tokens' is a number of 100 bits"):
        ProviderUsage(1, 1, 2**99)
    assert ProviderUsage(1, 1, MAX_TOKENS).total_input_tokens == MAX_TOKENS + 1
