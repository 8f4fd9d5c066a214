"""Which calibrated estimates are flagged beside their bill (`bill_flag`): a bill of 0, and an
estimate more than `OFF_FACTOR` times above or below the bill — exactly 1.5 times is not, just
past it is — with the figures a reader checks; nothing to compare is no flag."""

from __future__ import annotations

from ctxlab.analysis._calibration import (
    OFF_FACTOR,
    ZERO_BILL,
    CalibrationPoint,
    bill_flag,
    fit_points,
)


def test_an_estimate_is_flagged_only_past_one_and_a_half_times_its_bill_either_way() -> None:
    assert OFF_FACTOR == 1.5
    assert bill_flag(15_000, 10_000) == ""  # exactly 1.5 times
    assert (
        bill_flag(15_001, 10_000) == "calibrated estimate 15,001 is 1.5× above its bill of 10,000"
    )
    assert bill_flag(10_000, 15_000) == ""
    assert (
        bill_flag(10_000, 15_001) == "calibrated estimate 10,000 is 1.5× below its bill of 15,001"
    )
    assert bill_flag(15_003_358, 10_588) == (
        "calibrated estimate 15,003,358 is 1,417.0× above its bill of 10,588"
    )
    assert bill_flag(0, 10_588) == "calibrated estimate 0 against a bill of 10,588"


def test_a_bill_of_zero_is_flagged_and_nothing_to_compare_is_not() -> None:
    assert bill_flag(7_000, 0) == bill_flag(None, 0) == ZERO_BILL
    assert "billed 0 tokens" in ZERO_BILL and "left out of the calibration" in ZERO_BILL
    nan = float("nan")
    assert bill_flag(None, 10_000) == bill_flag(7_000, None) == bill_flag(nan, 10) == ""
    assert bill_flag(7_000, nan) == ""


def test_the_requests_billed_zero_are_named_and_left_out_of_the_fit() -> None:
    points = [CalibrationPoint(n, 1_000 * n, 5_000 + 1_000 * n) for n in range(4)]
    points[2] = CalibrationPoint(2, 2_000, 0)
    calibration = fit_points(points)
    assert calibration.zero_bills == (2,)
    assert [p.number for p in calibration.points] == [0, 1, 3]
    assert calibration.describe().splitlines()[1] == (
        "1 request billed 0 tokens (no usage recorded: request 2): left out"
    )
