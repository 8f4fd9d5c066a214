"""Calibration that cannot explode: a fit whose first requests cannot tell the ratio from the
fixed part does not guess one from them.

A real Gemini CLI session (``tests/fixtures/gemini/aim``: the System prompt and tool schemas
the file does not hold are ~8,750 tokens; its first requests count 5 and 128 tokens) had its
third request forecast at 15,003,358 tokens against a bill of 10,588: the rounds that settle the
fixed part and the ratio together moved the ratio 6.9 times further each round when the
requests they read it from were the very ones the fixed part came from."""

from __future__ import annotations

from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab import calibrate, load
from ctxlab.analysis._calibration_fit import (
    ANCHORED,
    ASSUMED,
    GROWTH,
    RATIO_RANGE,
    CalibrationPoint,
    fit_model,
)
from ctxlab.analysis._forecast import forecasts

GEMINI = Path(__file__).parents[1] / "fixtures" / "gemini" / "aim" / "control_pro.json"


def test_the_real_gemini_session_forecasts_its_third_request_near_its_bill() -> None:
    calibration = calibrate(load(GEMINI))
    third = calibration.rows[2]
    assert (third["estimate"], third["billed"]) == (1_550, 10_588)
    # Fitted on the first two (5 and 128 counted tokens): nothing tells the ratio apart from
    # the fixed part there, so 1.0 is assumed and the forecast is the fixed part plus the count.
    early = fit_model(calibration.points[0].model, list(calibration.points[:2]))
    assert (early.ratio, early.ratio_from) == (1.0, ASSUMED)
    assert early.fixed == {0: (8_756 - 5 + 8_868 - 128) / 2}
    assert third["forecast"] == round(early.fixed[0] + 1_550) == 10_296
    # Every forecast of the session within 5 % of its bill (was: one 1,417 times it).
    assert max(float(r["forecast_error"]) for r in calibration.rows[1:]) < 0.05  # type: ignore[arg-type]
    whole = calibration.fit()
    assert whole is not None and whole.ratio_from == ANCHORED
    assert 1.10 < whole.ratio < 1.16  # Gemini's tokens per cl100k token on this session


def _points(counted_and_billed: list[tuple[int, int]]) -> list[CalibrationPoint]:
    """Requests 0, 1, … of model ``m``, before any compaction: (counted, billed) tokens each."""
    return [
        CalibrationPoint(n, counted, billed, 0, "m")
        for n, (counted, billed) in enumerate(counted_and_billed)
    ]


def test_the_growth_of_the_bill_tells_the_ratio_when_the_first_requests_cannot() -> None:
    # Every request small, but the bill grew by 1.2 per counted token between two of them.
    points = _points([(5, 9_005), (128, 9_154), (1_400, 10_680)])
    fit = fit_model("m", points)
    assert fit.ratio_from == GROWTH and fit.ratio == (10_680 - 9_154) / (1_400 - 128)


def test_a_ratio_no_tokenizer_gives_is_not_used() -> None:
    # Against the first requests' fixed part (1,000), the large ones say 39.5, 20.4 and 14
    # billed tokens per counted token (the file misses most of what they sent): no two
    # tokenizers differ so. The bill's growth between requests (median 1.25) is used instead.
    points = _points([(0, 1_000)] * 3 + [(2_000, 80_000), (4_000, 82_500), (6_000, 85_000)])
    fit = fit_model("m", points)
    assert RATIO_RANGE == (0.25, 4.0)
    assert (fit.ratio, fit.ratio_from, fit.fixed) == (1.25, GROWTH, {0: 1_000.0})


estimates = st.lists(st.integers(0, 60_000), min_size=2, max_size=40).map(sorted)


@settings(max_examples=80, deadline=None)
@given(
    counted=estimates,
    ratio=st.floats(0.8, 1.6),
    fixed=st.integers(1_000, 40_000),
)
@example(counted=[5, 128, 1_550], ratio=1.134, fixed=8_750)  # the Gemini session above
def test_no_forecast_of_a_linear_bill_is_more_than_its_ratio_off(
    counted: list[int], ratio: float, fixed: int
) -> None:
    # Bills exactly fixed + ratio × counted (to the token). Whatever the fit can or cannot tell
    # apart, it never assumes a ratio further from the truth than 1.0 is: no forecast is off by
    # more than the ratio itself (1.6 here) — today's rounds forecast 1,417 times the bill.
    points = _points([(c, max(round(fixed + ratio * c), 1)) for c in counted])
    for point, forecast in zip(points, forecasts(points), strict=True):
        if forecast is None:
            continue
        assert forecast > 0
        off = max(forecast / point.billed, point.billed / forecast)
        assert off <= max(ratio, 1 / ratio) * 1.001, (point, forecast)  # 1.001: rounding
    fit = fit_model("m", points)
    assert RATIO_RANGE[0] <= fit.ratio <= RATIO_RANGE[1]
