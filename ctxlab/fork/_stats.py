"""Intervals for pass rates: how sure a handful of runs lets you be, and how many runs a
sharper answer needs.

- **One branch's pass rate**: the Wilson score interval (Wilson, 1927, JASA 22:209–212), the
  interval of every rate the score test does not reject; it stays inside [0, 1] and gives 10 of
  10 an upper bound of 1 and a lower bound below it, where the textbook (Wald) interval says
  "1 to 1".
- **A branch against the reference, paired by run** (run k of each): Newcombe's square-and-add
  interval for paired proportions, his method 10 (Newcombe, 1998, Stat Med 17:2635–2650; Altman
  et al., *Statistics with Confidence*, 2nd ed., 2000, ch. 6): each rate's Wilson interval,
  combined with the runs' correlation (φ, corrected for continuity as Newcombe's method says).
- **Unpaired** (the branches ran different numbers of runs): Newcombe's hybrid score interval
  (Newcombe, 1998, Stat Med 17:873–890, method 10), the same square-and-add without φ.
- **Runs needed**: the fewest runs whose Wilson interval, at a given rate, is at most ± a width.

No maintained Python library fits without weight: statsmodels has the Wilson interval
(``proportion_confint(method="wilson")``) but neither of Newcombe's differences, and would bring
scipy and patsy (some 100 MB) into a package that needs neither. So the formulas are here, the
normal quantile from the standard library (`statistics.NormalDist`), and the tests check them
against an independent inversion of the score test and published worked examples.

Without data there is no interval: 0 runs with a verdict give NaN bounds, never a crash.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import finite, shown, whole_number

__all__ = [
    "CONFIDENCE",
    "Interval",
    "paired_difference",
    "runs_needed",
    "unpaired_difference",
    "wilson",
]

CONFIDENCE = 0.95
"""The confidence of every interval unless another is given."""

_MOST_RUNS = 10_000_000
"""Past any number of runs anyone will make (a width of 1e-9 would ask for 10^18)."""


@dataclass(frozen=True)
class Interval:
    """An estimate and its confidence interval (NaN, all three, when there was no data)."""

    estimate: float
    low: float
    high: float

    @property
    def known(self) -> bool:
        """Whether there was data to give an interval."""
        return not math.isnan(self.estimate)

    def __str__(self) -> str:
        if not self.known:
            return "no interval (no data)"
        return f"{self.estimate:.3f} [{self.low:.3f}, {self.high:.3f}]"


NO_INTERVAL = Interval(math.nan, math.nan, math.nan)
"""What 0 runs with a verdict give."""


def checked_confidence(value: Any) -> float:
    """``value`` as a confidence level: a number strictly between 0 and 1 (e.g. 0.95)."""
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not (number and finite(value) and 0 < value < 1):
        msg = f"confidence must be a number between 0 and 1 (e.g. 0.95), got {shown(value)}"
        raise UsageError(msg)
    return float(value)


def _z(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (1.96 for 0.95)."""
    return NormalDist().inv_cdf(0.5 + checked_confidence(confidence) / 2)


def wilson(passed: int, runs: int, confidence: float = CONFIDENCE) -> Interval:
    """The pass rate ``passed / runs`` and its Wilson score interval (see the module); NaN for
    0 runs. ``runs`` counts the runs with a verdict only."""
    runs = whole_number(runs, "runs", high=_MOST_RUNS)
    passed = whole_number(passed, "passed", high=runs)
    z = _z(confidence)
    if runs == 0:
        return NO_INTERVAL
    rate = passed / runs
    z2 = z * z
    centre = (rate + z2 / (2 * runs)) / (1 + z2 / runs)
    half = z / (1 + z2 / runs) * math.sqrt(rate * (1 - rate) / runs + z2 / (4 * runs * runs))
    # At 0 or n passed the bound is the rate itself: said exactly, not 1 - 1e-17.
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == runs else min(1.0, centre + half)
    return Interval(rate, low, high)


def paired_difference(
    pairs: Sequence[tuple[bool, bool]], confidence: float = CONFIDENCE
) -> Interval:
    """The difference of two pass rates measured on the same runs — ``(this, reference)``
    verdicts, one pair per run number — and Newcombe's paired interval (see the module)."""
    n = len(pairs)
    both = sum(a and b for a, b in pairs)
    only_this = sum(a and not b for a, b in pairs)
    only_ref = sum(b and not a for a, b in pairs)
    neither = n - both - only_this - only_ref
    this = wilson(both + only_this, n, confidence)
    ref = wilson(both + only_ref, n, confidence)
    if n == 0:
        return NO_INTERVAL
    phi = 0.0
    margins = (both + only_this) * (only_ref + neither) * (both + only_ref) * (only_this + neither)
    if margins > 0:
        cross = both * neither - only_this * only_ref
        # Newcombe's continuity correction: a small positive association counts as none.
        if cross > n / 2:
            phi = (cross - n / 2) / math.sqrt(margins)
        elif cross < 0:
            phi = cross / math.sqrt(margins)
    return _square_and_add(this, ref, phi)


def unpaired_difference(
    passed: int, runs: int, ref_passed: int, ref_runs: int, confidence: float = CONFIDENCE
) -> Interval:
    """The difference of two pass rates from separate runs, ``passed / runs`` less
    ``ref_passed / ref_runs``, and Newcombe's hybrid score interval (see the module); NaN when
    either has no runs."""
    this = wilson(passed, runs, confidence)
    ref = wilson(ref_passed, ref_runs, confidence)
    if not (this.known and ref.known):
        return NO_INTERVAL
    return _square_and_add(this, ref, 0.0)


def _square_and_add(this: Interval, ref: Interval, phi: float) -> Interval:
    """Two rates' Wilson intervals combined into one for their difference (φ: how the two
    rates go together; 0 for independent runs)."""
    down, up = this.estimate - this.low, this.high - this.estimate
    ref_down, ref_up = ref.estimate - ref.low, ref.high - ref.estimate
    lower = math.sqrt(max(0.0, down**2 - 2 * phi * down * ref_up + ref_up**2))
    upper = math.sqrt(max(0.0, up**2 - 2 * phi * up * ref_down + ref_down**2))
    difference = this.estimate - ref.estimate
    return Interval(difference, max(-1.0, difference - lower), min(1.0, difference + upper))


def runs_needed(rate: float, width: float, confidence: float = CONFIDENCE) -> int:
    """How many runs (with a verdict) a pass rate of ``rate`` needs for its Wilson interval to
    be at most ± ``width`` (half its length; e.g. 0.10) at ``confidence``. At a rate of 0.5, the
    most any rate needs: ±0.10 needs 93 runs, ±0.05 needs 381."""
    number = not isinstance(rate, bool) and isinstance(rate, int | float)
    if not (number and finite(rate) and 0 <= rate <= 1):
        msg = f"rate must be a pass rate from 0 to 1 (e.g. 0.7), got {shown(rate)}"
        raise UsageError(msg)
    number = not isinstance(width, bool) and isinstance(width, int | float)
    if not (number and finite(width) and 0.0005 <= width <= 1):
        msg = (
            f"width must be the interval's half-length, from 0.0005 to 1 (e.g. 0.10 for "
            f"±0.10), got {shown(width)}"
        )
        raise UsageError(msg)
    z = _z(confidence)
    # The half-length shrinks as runs grow: the fewest runs within the width, by bisection.
    low, high = 1, 1
    while _half_length(rate, high, z) > width:
        low, high = high + 1, high * 2
    while low < high:
        middle = (low + high) // 2
        if _half_length(rate, middle, z) > width:
            low = middle + 1
        else:
            high = middle
    return low


def _half_length(rate: float, runs: int, z: float) -> float:
    """Half the length of the Wilson interval of ``rate`` over ``runs`` runs (before it is
    clipped to [0, 1]: the planning figure)."""
    z2 = z * z
    return z / (1 + z2 / runs) * math.sqrt(rate * (1 - rate) / runs + z2 / (4 * runs * runs))
