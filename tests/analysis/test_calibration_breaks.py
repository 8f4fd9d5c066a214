"""Breaks in the bill (`ctxlab.analysis._calibration_breaks`): where what a recording's requests
carried beyond the file changed without the file saying so — Gemini CLI sends a large tool
output whole, then masks it and rewrites its chat file with the masked form — the fixed part is
measured again from the break, in sample and out of sample; one odd request is no break, and
bills that do not follow the count at all (dealt to the wrong requests) are described by no
level.

The bills are exact (``10,000 + 1.2 × counted``, plus 30,000 while the unrecorded output was
sent), so every figure is asserted to the token. Measured on 13 real Gemini CLI sessions
(``benchmarks/calibration_formats_bench.py``): the two whose outputs were masked went from 19.6
and 18.1 % to 1.6 and 0.4 % out of sample."""

from __future__ import annotations

import random

from ctxlab.analysis._calibration import CalibrationPoint, fit_points
from ctxlab.analysis._calibration_breaks import BREAK_RUN, BREAK_SHARE, bill_breaks
from ctxlab.analysis._forecast import fits_of

EXTRA = 30_000
"""What the requests 20–39 carried that the file does not show."""


def _masked(odd: int | None = None) -> list[CalibrationPoint]:
    points = []
    for n in range(60):
        counted = 100 * n if n < 3 else 2_000 + 1_000 * n  # small first: the fixed part
        billed = 10_000 + round(1.2 * counted) + (EXTRA if 20 <= n < 40 else 0)
        if n == odd:
            billed *= 2  # one request billed twice what the others say
        points.append(CalibrationPoint(n, counted, billed, 0, "m"))
    return points


def test_a_change_the_file_does_not_record_is_a_break_and_the_fixed_part_follows_it() -> None:
    assert (BREAK_SHARE, BREAK_RUN) == (0.10, 2)
    calibration = fit_points(_masked())
    assert calibration.breaks == (20, 40)  # the output sent whole, then masked
    fit = calibration.fit()
    assert fit is not None and (fit.ratio, fit.fixed) == (1.2, {0: 10_000.0})
    rows = calibration.rows
    # In sample, each request by its level: exact.
    assert [r["calibrated"] for r in rows] == [r["billed"] for r in rows]
    # Out of sample, only the first two requests of each level miss (the break is seen once
    # two requests stand off the level before them); the rest are exact.
    missed = [r["step"] for r in rows if r["forecast"] is not None and r["forecast"] != r["billed"]]
    assert missed == [1, 3, 20, 21, 40, 41]  # 1 and 3: the fit still learning the ratio
    assert rows[20]["forecast"] == 10_000 + round(1.2 * 22_000)  # the level before
    assert calibration.describe().splitlines()[1] == (
        "the bill broke from the fit at requests 20, 40: what the requests carried beyond the "
        "file changed without the file saying so; the fixed part is measured again from each"
    )


def test_one_odd_request_is_no_break() -> None:
    points = _masked(odd=50)
    assert bill_breaks(points, fits_of(points)) == (20, 40)
    calibration = fit_points(points)
    assert calibration.rows[50]["calibrated"] != calibration.rows[50]["billed"]
    assert calibration.rows[51]["forecast"] == calibration.rows[51]["billed"]


def test_bills_dealt_to_the_wrong_requests_are_described_by_no_level() -> None:
    # The control: the same bills shuffled among the requests break everywhere — no level
    # holds, none is used, none is reported, and the fit does not reconcile them.
    points = _masked()
    bills = [p.billed for p in points]
    random.Random(5).shuffle(bills)
    shuffled = [
        CalibrationPoint(p.number, p.estimate, b, 0, "m")
        for p, b in zip(points, bills, strict=True)
    ]
    calibration = fit_points(shuffled)
    assert calibration.breaks == ()
    assert calibration.median_error is not None and calibration.median_error > 0.2
    assert calibration.out_of_sample_error is not None and calibration.out_of_sample_error > 0.2


def test_a_break_among_the_first_requests_leaves_the_fixed_part_to_those_before_it() -> None:
    # As in a Gemini CLI 2025-10 session: from its second request on, calls and results the
    # file does not hold add 10,000 tokens; the fixed part is the first request's alone (it
    # was read from the first three, across the break: 2.2 times the first bill).
    points = [CalibrationPoint(0, 400, 8_400, 0, "m")] + [
        CalibrationPoint(n, 400 + 1_000 * n, 18_400 + 1_000 * n, 0, "m") for n in range(1, 12)
    ]
    calibration = fit_points(points)
    fit = calibration.fit()
    assert calibration.breaks == (1,)
    assert fit is not None and (fit.ratio, fit.fixed) == (1.0, {0: 8_000.0})
    assert [r["calibrated"] for r in calibration.rows] == [p.billed for p in points]
