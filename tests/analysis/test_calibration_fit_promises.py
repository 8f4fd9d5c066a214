"""The fit of one model's bills, ``billed ≈ fixed + ratio × counted``, on points whose fit can be
worked out by hand: requests counted at 0 tokens bill the fixed part alone (whatever the ratio),
so the ratio is read from the others — from those of at least `_MIN_CONTENT` counted tokens
when there are any (smaller ones are mostly the fixed part), else from every one counted above
nothing. The spreads are interquartile ranges (``statistics.quantiles``, quartiles 1 and 3)."""

from __future__ import annotations

from ctxlab.analysis._calibration_fit import (
    _MIN_CONTENT,
    CalibrationFit,
    CalibrationPoint,
    fit_model,
    predict,
)


def _points(*sizes: tuple[int, int], segment: int = 0) -> list[CalibrationPoint]:
    anchors = [CalibrationPoint(n, 0, 1_000, segment, "m") for n in range(3)]
    rest = [
        CalibrationPoint(3 + n, counted, billed, segment, "m")
        for n, (counted, billed) in enumerate(sizes)
    ]
    return anchors + rest


def test_the_ratio_comes_from_requests_of_at_least_the_minimum_content() -> None:
    assert _MIN_CONTENT == 2_000
    # A request of exactly 2,000 counted tokens is large enough: its ratio (2) alone counts.
    fit = fit_model("m", _points((1_000, 4_000), (2_000, 5_000)))
    assert (fit.ratio, fit.fixed, fit.requests) == (2.0, {0: 1_000.0}, 5)
    assert fit.ratio_spread == (2.0, 2.0)
    # The fixed part's spread is over every request of the segment (here all on the line but
    # the 1,000-token one, 1,000 above it).
    assert fit.fixed_spread == {0: (1_000.0, 1_500.0)}


def test_without_a_large_request_every_request_counted_above_nothing_gives_its_ratio() -> None:
    # Ratios 3 (a request counted at 1 token) and 1: their median, 2.
    fit = fit_model("m", _points((1, 1_003), (1_000, 2_000)))
    assert fit.ratio == 2.0
    assert fit.ratio_spread == (0.5, 3.5)  # quantiles of [1, 3]: 0.5 and 3.5
    # Without any request counted above nothing, the ratio stays 1 and its spread is that 1.
    flat = fit_model("m", _points())
    assert (flat.ratio, flat.ratio_spread, flat.fixed) == (1.0, (1.0, 1.0), {0: 1_000.0})


def test_the_spreads_are_the_interquartile_ranges_of_the_requests_values() -> None:
    # Over a fixed part of 100,000 (the bills within a tenth of one level: no break in the
    # bill, `ctxlab.analysis._calibration_breaks`), ratios 1, 2, 4, 8: median 3, quartiles
    # 1.25 and 7.
    anchors = [CalibrationPoint(n, 0, 100_000, 0, "m") for n in range(3)]
    wide = [
        CalibrationPoint(3 + n, 2_000, 100_000 + 2_000 * r, 0, "m")
        for n, r in enumerate((1, 2, 4, 8))
    ]
    fit = fit_model("m", anchors + wide)
    assert (fit.ratio, fit.ratio_spread) == (3.0, (1.25, 7.0))
    # One request alone: its own value, both ends.
    (single,) = _points()[:1]
    alone = fit_model("m", [single])
    assert (alone.ratio_spread, alone.fixed_spread, alone.requests) == (
        (1.0, 1.0),
        {0: (1_000.0, 1_000.0)},
        1,
    )


def test_a_fit_without_a_fixed_part_expects_ratio_times_the_count() -> None:
    bare = CalibrationFit("m", 1.5, (1.5, 1.5), {}, {}, 0)
    assert [bare.calibrated(1_000, s) for s in (0, 3)] == [1_500, 1_500]


def test_predict_takes_the_named_models_fit_else_the_first_and_segment_0_by_default() -> None:
    first = CalibrationFit("opus", 1.0, (1.0, 1.0), {0: 100.0, 1: 900.0}, {}, 2)
    unnamed = CalibrationFit(None, 2.0, (2.0, 2.0), {0: 5_000.0}, {}, 2)
    assert predict([first, unnamed], 1_000) == 1_100
    assert predict([first, unnamed], 1_000, 1) == 1_900
    # No model named: the first fit, even beside a fit whose model is unknown.
    assert predict([first, unnamed], 1_000, 0, None) == 1_100
    assert predict([unnamed, first], 1_000, 0, "opus") == 1_100
    assert predict([first, unnamed], 1_000, 0, "haiku") == 1_100
    assert predict([], 1_000) is None


def test_after_a_compaction_the_fixed_part_is_measured_again_and_every_request_counts() -> None:
    first = _points((2_000, 5_000))
    after = [
        CalibrationPoint(10 + n, counted, 3_000 + 2 * counted, 1, "m")
        for n, counted in enumerate((0, 500, 4_000))
    ]
    fit = fit_model("m", first + after)
    # The ratio from the first segment (2); the part after the compaction is its own median.
    assert (fit.ratio, fit.fixed, fit.requests) == (2.0, {0: 1_000.0, 1: 3_000.0}, 7)
    assert fit.calibrated(1_000, 1) == 5_000 and fit.calibrated(1_000, 4) == 5_000


def test_small_requests_before_the_first_compaction_leave_the_ratio_to_the_bills_growth() -> None:
    # Sessions compacted early (found by the billed-windows property): small first bills cannot
    # tell the ratio from the fixed part — it stayed near 1, the fixed part absorbed the rest,
    # and a whole-conversation replay was calibrated 10 % under what the provider would bill.
    def billed(segment: int, counted: int) -> int:  # 1.5 × counted over a fixed part
        return (1_000, 1_600)[segment] + round(1.5 * counted)

    for first_sizes in ((16,), (16, 1_200)):
        first = [CalibrationPoint(n, c, billed(0, c), 0, "m") for n, c in enumerate(first_sizes)]
        later = [
            CalibrationPoint(10 + n, c, billed(1, c), 1, "m")
            for n, c in enumerate((20, 1_220, 2_640, 4_000))
        ]
        fit = fit_model("m", first + later)
        assert fit.ratio == 1.5 and fit.ratio_spread == (1.5, 1.5)
        assert fit.fixed == {0: 1_000.0, 1: 1_600.0}
        assert fit.calibrated(5_000) == 8_500  # what the provider would bill
    # Steps under 1,000 counted tokens within a segment are noise, not read.
    small = [CalibrationPoint(n, 10 * n, 1_600 + 30 * n, 1, "m") for n in range(1, 4)]
    assert fit_model("m", [CalibrationPoint(0, 16, 1_024, 0, "m"), *small]).ratio == 1.0
