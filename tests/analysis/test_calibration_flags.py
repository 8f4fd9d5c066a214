"""Which calibrated estimates are flagged beside their bill (`bill_flag`): a bill of 0, and an
estimate more than `OFF_FACTOR` times above or below the bill — exactly 1.5 times is not, just
past it is — with the figures a reader checks; nothing to compare is no flag. And the
calibrated input of a run of requests (`calibrated_total`), request by request."""

from __future__ import annotations

import dataclasses

from ctxlab.analysis._calibration import (
    OFF_FACTOR,
    ZERO_BILL,
    CalibrationFit,
    CalibrationPoint,
    bill_flag,
    calibrated_total,
    fit_points,
)
from ctxlab.manifest import ContextManifest, ManifestItem


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


def test_a_bill_of_one_token_is_a_bill_and_an_estimate_of_one_token_an_estimate() -> None:
    # Only 0 is "no usage": a request billed 1 token is compared like any other, and an
    # estimate of 1 token is read as one.
    assert bill_flag(1, 1) == ""
    assert bill_flag(2, 1) == "calibrated estimate 2 is 2.0× above its bill of 1"
    assert bill_flag(1, 2) == "calibrated estimate 1 is 2.0× below its bill of 2"


def _request(purpose: str, **placed: int) -> ContextManifest:
    """A request of ``purpose`` holding ``placed`` tokens by placement (a conversation of the
    rest), its estimate their sum."""
    items = [
        ManifestItem(f"{placement}/x", "message", placement, tokens, placement)  # type: ignore[arg-type]
        for placement, tokens in placed.items()
    ]
    total = sum(placed.values())
    return ContextManifest("r", purpose, "m", total, 10**6, "approx", False, items, (), "passed")  # type: ignore[arg-type]


FIT = CalibrationFit("m", 1.25, (1.2, 1.3), {0: 7_000.0, 1: 9_000.0}, (), 10)  # type: ignore[arg-type]


def test_the_calibrated_total_adds_the_first_segments_fixed_part_where_the_prefix_is_sent() -> None:
    # ratio × what ctxlab counts besides the unrecorded part, plus the first segment's fixed
    # part (7,000, not 9,000) for every request that sends the session's prefix: a reasoning
    # request always; a summary call when it holds the unrecorded part, a System or tools —
    # however small (1 token) — not when it is the span alone.
    requests = [
        _request("reasoning", unrecorded=5_000, conversation=1_000),
        _request("summary", unrecorded=5_000, conversation=800),
        _request("summary", system=1, conversation=800),
        _request("summary", tools=1, conversation=800),
        _request("summary", tools=300, conversation=800),  # tools alone: no System
        _request("summary", system=300, conversation=800),  # a System alone: no tools
        _request("summary", conversation=800),  # the span alone
    ]
    expected = [
        7_000 + 1.25 * 1_000,
        7_000 + 1.25 * 800,
        7_000 + 1.25 * 801,
        7_000 + 1.25 * 801,
        7_000 + 1.25 * 1_100,
        7_000 + 1.25 * 1_100,
        1.25 * 800,
    ]
    for request, value in zip(requests, expected, strict=True):
        assert calibrated_total(FIT, [request]) == round(value)
    assert calibrated_total(FIT, requests) == sum(round(v) for v in expected)


def test_a_fit_without_a_fixed_part_adds_none() -> None:
    # As its own `calibrated` does: the ratio alone.
    bare = dataclasses.replace(FIT, fixed={})
    request = _request("reasoning", conversation=1_001)
    assert calibrated_total(bare, [request]) == round(1.25 * 1_001) == bare.calibrated(1_001)
