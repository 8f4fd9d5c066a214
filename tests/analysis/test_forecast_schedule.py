"""When the out-of-sample forecasts refit, as `ctxlab.analysis._forecast` documents it: before
each of the first 32 requests, before each of the first 3 requests of a new model or segment,
and otherwise once the requests seen have grown by a tenth — each forecast is then exactly what
a fit of the requests before that refit predicts. The bills here move with every request, so
a fit of one more or one fewer request predicts another figure: a refit moved, added or skipped
shows."""

from __future__ import annotations

from ctxlab.analysis._calibration_fit import CalibrationFit, CalibrationPoint, predict
from ctxlab.analysis._forecast import fits_of, forecasts


def _drifting() -> list[CalibrationPoint]:
    points = []
    for n in range(60):
        if n < 38:  # segment 0: 1.2 per counted token, each bill a little off its own way
            # The first three small (the fixed part is read from them), the rest large: every
            # request tells the fit something, so a fit of one request more moves.
            counted = 2_000 + 1_000 * n if n >= 3 else 40 * n
            off = (n * 7_919) % 201 - 100  # ±100 tokens, no two alike
            points.append(CalibrationPoint(n, counted, round(1_000 + 1.2 * counted) + off, 0, "m"))
        else:  # segment 1 (after a compaction): the fixed part drifts up
            points.append(CalibrationPoint(n, 3_000, 40_000 + 700 * n, 1, "m"))
    return points


def _fitted_on(n: int) -> int:
    """The requests the fit forecasting request ``n`` was made of, worked out by hand from the
    documented schedule (segment 1 starts at request 38)."""
    if n < 32:  # refit before each of the first 32
        return n
    if n < 35:  # 31 × 1.1 = 34.1: the next refit at 35
        return 31
    if n < 38:
        return 35
    if n < 41:  # 38, 39, 40: the first three of segment 1
        return n
    # 40 × 1.1 = 44 (exactly: refit at 44, not 45), then 48.4 → 49, 53.9 → 54, 59.4 → none.
    return max(k for k in (40, 44, 49, 54) if k <= n)


def test_each_forecast_is_the_fit_of_the_requests_before_its_refit() -> None:
    points = _drifting()
    expected = [None] + [
        predict(fits_of(points[: _fitted_on(n)]), p.estimate, p.segment, p.model)
        for n, p in enumerate(points)
        if n
    ]
    assert forecasts(points) == expected
    # The control: the schedule matters, a fit of one request more predicts another figure.
    assert all(
        predict(fits_of(points[: _fitted_on(n) + 1]), p.estimate, p.segment, p.model) != expected[n]
        for n, p in enumerate(points)
        if n
    )


def test_another_sessions_fits_forecast_each_request_by_its_own_model() -> None:
    opus = CalibrationFit("opus", 1.0, (1.0, 1.0), {0: 1_000.0, 1: 5_000.0}, {}, 3)
    haiku = CalibrationFit("haiku", 2.0, (2.0, 2.0), {0: 3_000.0}, {}, 3)
    points = [
        CalibrationPoint(0, 1_000, 1, 0, "haiku"),
        CalibrationPoint(1, 1_000, 1, 1, "opus"),
        CalibrationPoint(2, 1_000, 1, 0, "sonnet"),
    ]
    assert forecasts(points, [opus, haiku]) == [5_000, 6_000, 2_000]
