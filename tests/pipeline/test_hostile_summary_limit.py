"""`ReductionLimits.summary_limit` on a budget it cannot use: found by the public-API fuzz in
a CI run (an integer of 5,000 digits was an `OverflowError` of Python's own)."""

from __future__ import annotations

import pytest

from ctxlab.exceptions import UsageError
from ctxlab.pipeline import ReductionLimits

LIMITS = ReductionLimits(0, 100, 50, 1_000, context_size=2_000)


@pytest.mark.parametrize("budget", [pytest.param(10**5000, id="5000 digits"), -1, "500", True])
def test_a_budget_it_cannot_use_is_named(budget: object) -> None:
    with pytest.raises(UsageError, match="budget must be a whole number from 0 to"):
        LIMITS.summary_limit(budget)  # type: ignore[arg-type]


def test_the_control_a_budget_gives_the_window_less_its_answer() -> None:
    # 2,000 - (500 × 1.2 + 64) = 1,336, over the input limit: the limit.
    assert LIMITS.summary_limit(500) == 1_000
    # 2,000 - (1,000 × 1.2 + 64) = 736.
    assert LIMITS.summary_limit(1_000) == 736
