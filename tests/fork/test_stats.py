"""The intervals of `ctxlab.fork._stats`, each checked against what does not share its code:
Wilson's interval found again by inverting the score test it is defined by (bisection, with the
normal quantile from `math.erf`), published worked examples (Newcombe 1998; Fagerland,
Lydersen & Laake 2017), the runs a width needs checked one run either side, and bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.exceptions import UsageError
from ctxlab.fork import runs_needed, wilson
from ctxlab.fork._stats import paired_difference, unpaired_difference


def _quantile(confidence: float) -> float:
    """The two-sided normal quantile, by bisection on the normal CDF (math.erf)."""
    target = 0.5 + confidence / 2
    low, high = 0.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if 0.5 * (1 + math.erf(middle / math.sqrt(2))) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _score_interval(passed: int, runs: int, confidence: float) -> tuple[float, float]:
    """Wilson's interval from its definition: every rate p the score test does not reject,
    (p̂ - p)² <= z² p (1 - p) / n — its two ends found by bisection either side of p̂."""
    z = _quantile(confidence)
    rate = passed / runs

    def accepted(p: float) -> bool:
        return (rate - p) ** 2 <= z * z * p * (1 - p) / runs

    def edge(inside: float, outside: float) -> float:
        for _ in range(200):
            middle = (inside + outside) / 2
            inside, outside = (middle, outside) if accepted(middle) else (inside, middle)
        return (inside + outside) / 2

    low = 0.0 if passed == 0 else edge(rate, 0.0)
    high = 1.0 if passed == runs else edge(rate, 1.0)
    return low, high


@settings(max_examples=300, deadline=None)
@given(
    runs=st.integers(1, 2_000),
    share=st.floats(0, 1),
    confidence=st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99, 0.999]),
)
def test_wilson_is_the_score_test_inverted(runs: int, share: float, confidence: float) -> None:
    passed = round(share * runs)
    interval = wilson(passed, runs, confidence)
    low, high = _score_interval(passed, runs, confidence)
    assert interval.estimate == passed / runs
    assert interval.low == pytest.approx(low, abs=1e-9)
    assert interval.high == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize(
    ("passed", "runs", "low", "high"),
    [
        # Newcombe (1998), Stat Med 17:857-872, Table I, method 3 (the score method);
        # 81/263 is Altman et al., Statistics with Confidence (2000), p. 47.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_gives_the_published_examples(
    passed: int, runs: int, low: float, high: float
) -> None:
    interval = wilson(passed, runs)
    assert round(interval.low, 4) == low
    assert round(interval.high, 4) == high


def test_ten_of_ten_has_an_upper_bound_of_1_and_a_lower_below() -> None:
    interval = wilson(10, 10)
    assert interval.estimate == 1.0
    assert interval.high == 1.0
    z = _quantile(0.95)
    assert interval.low == pytest.approx(10 / (10 + z * z))  # 0.7225
    assert interval.low < 1
    nothing = wilson(0, 10)
    assert nothing.low == 0.0
    assert nothing.high == pytest.approx(z * z / (10 + z * z))


def test_no_verdicts_give_no_interval() -> None:
    interval = wilson(0, 0)
    assert math.isnan(interval.estimate) and math.isnan(interval.low)
    assert math.isnan(interval.high) and not interval.known
    assert str(interval) == "no interval (no data)"
    assert not paired_difference([]).known
    assert not unpaired_difference(3, 4, 0, 0).known
    assert not unpaired_difference(0, 0, 3, 4).known


def test_paired_difference_gives_the_published_example() -> None:
    # Cavo et al. (2012), complete response before and after consolidation: 59 both, 6 only
    # before, 16 only after, 80 neither. Fagerland, Lydersen & Laake, Statistical Analysis of
    # Contingency Tables (2017), ch. 8: Newcombe square-and-add -0.0621 (-0.1186 to -0.0046).
    pairs = [(True, True)] * 59 + [(True, False)] * 6 + [(False, True)] * 16
    pairs += [(False, False)] * 80
    interval = paired_difference(pairs)
    assert round(interval.estimate, 4) == -0.0621
    assert (round(interval.low, 4), round(interval.high, 4)) == (-0.1186, -0.0046)


def test_paired_runs_that_agree_give_a_narrower_interval_than_unpaired() -> None:
    # The same marginals (12 of 20 against 8 of 20): runs that pass and fail together say the
    # difference more surely than separate runs would.
    together = [(True, True)] * 8 + [(True, False)] * 4 + [(False, False)] * 8
    paired = paired_difference(together)
    apart = unpaired_difference(12, 20, 8, 20)
    assert paired.estimate == apart.estimate == pytest.approx(0.2)
    assert paired.high - paired.low < apart.high - apart.low
    assert paired.low > 0 > apart.low  # paired, the branch is better; unpaired, not sure


@pytest.mark.parametrize(
    ("counts", "low", "high"),
    [
        # Newcombe (1998), Stat Med 17:873-890, Table II, method 10.
        ((56, 70, 48, 80), 0.0524, 0.3339),
        ((9, 10, 3, 10), 0.1705, 0.8090),
        # Perondi et al. (2004) in Fagerland et al. (2017), ch. 4: 0.1765 (0.0189 to 0.3404).
        ((7, 34, 1, 34), 0.0189, 0.3404),
    ],
)
def test_unpaired_difference_gives_the_published_examples(
    counts: tuple[int, int, int, int], low: float, high: float
) -> None:
    interval = unpaired_difference(*counts)
    assert interval.estimate == pytest.approx(counts[0] / counts[1] - counts[2] / counts[3])
    assert (round(interval.low, 4), round(interval.high, 4)) == (low, high)


def test_runs_needed_at_a_rate_of_one_half() -> None:
    assert runs_needed(0.5, 0.10) == 93
    assert runs_needed(0.5, 0.05) == 381
    assert runs_needed(1.0, 0.10) == 16  # z² / (2 (n + z²)) <= 0.1
    assert runs_needed(0.5, 0.10, confidence=0.99) == 160


@settings(max_examples=200, deadline=None)
@given(rate=st.floats(0, 1), width=st.floats(0.02, 0.5))
def test_runs_needed_is_the_fewest_within_the_width(rate: float, width: float) -> None:
    runs = runs_needed(rate, width)

    def half(n: int) -> float:
        # The interval at a rate of exactly `rate` over n runs, from the score test's bounds.
        z = _quantile(0.95)
        centre = (rate + z * z / (2 * n)) / (1 + z * z / n)
        return centre - _bound_below(rate, n, z)

    assert half(runs) <= width + 1e-9
    if runs > 1:
        assert half(runs - 1) > width - 1e-9


def _bound_below(rate: float, runs: int, z: float) -> float:
    # The lower root of (rate - p)² = z² p (1 - p) / runs, by bisection on [0, rate].
    low, high = -1.0, rate
    for _ in range(200):
        middle = (low + high) / 2
        far = (rate - middle) ** 2 > z * z * middle * (1 - middle) / runs
        low, high = (middle, high) if far else (low, middle)
    return (low + high) / 2


@pytest.mark.parametrize(
    ("call", "said"),
    [
        (lambda: wilson(11, 10), "passed must be a whole number from 0 to 10"),
        (lambda: wilson(1, -1), "runs must be a whole number"),
        (lambda: wilson(1, 2, confidence=1), "confidence must be a number between 0 and 1"),
        (lambda: wilson(1, 2, confidence=math.nan), "confidence must be"),
        (lambda: wilson(True, 2), "passed must be a whole number"),
        (lambda: runs_needed(1.5, 0.1), "rate must be a pass rate from 0 to 1"),
        (lambda: runs_needed(math.nan, 0.1), "rate must be"),
        (lambda: runs_needed(0.5, 0), "width must be the interval's half-length"),
        (lambda: runs_needed(0.5, 0.1, confidence=95), "confidence must be"),
    ],
)
def test_bad_input_is_refused_by_name(call: object, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        call()  # type: ignore[operator]
