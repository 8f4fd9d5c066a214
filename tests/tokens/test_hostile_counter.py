"""`ApproximateCounter` refuses a ratio no count can come from — NaN (every count a crash),
infinity (every count 0), 0 or less, text, a bool — with a `UsageError` naming it."""

from __future__ import annotations

import math
from typing import Any

import pytest

from ctxlab import ApproximateCounter
from ctxlab.exceptions import UsageError
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
