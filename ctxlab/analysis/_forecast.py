"""Calibration judged out of sample: each billed request forecast from a fit that never saw it.

A fit scored on the requests it was fitted on says little about the next request (a ratio and
a fixed part fitted to 150 requests reproduce those 150 within a percent whatever they are).
What a user needs is the estimate for a request not billed yet, so every request is forecast
from a fit of the requests *before* it (prequential: the first request has none, and is not
forecast), or from another session's fit (what a user does with yesterday's calibration).

Where the bill broke from the fit within a segment — the recorded agent changed what it sent
beyond the file without recording it (`ctxlab.analysis._calibration_breaks`) — a request is
forecast from the level of the bill since the break, still only ever from earlier requests.

Refitting before every request costs the square of the requests; the fit is refitted before
each of the first `_EVERY` requests, before each of the first `ANCHOR` requests of a new
model or segment (where the fit must learn a new fixed part), and then whenever the requests
seen have grown by a tenth — still only ever on earlier requests.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.analysis._calibration_breaks import BillLevels
from ctxlab.analysis._calibration_fit import (
    ANCHOR,
    CalibrationFit,
    CalibrationPoint,
    fit_model,
    predict,
)

__all__ = ["fits_of", "forecasts"]

_EVERY = 32
"""Refit before each of the first requests."""
_GROWTH = 1.1
"""Then refit when the requests seen have grown by this factor."""


def fits_of(points: Sequence[CalibrationPoint]) -> tuple[CalibrationFit, ...]:
    """One fit per model over ``points`` (in request order), the first request's model first."""
    models: dict[str | None, list[CalibrationPoint]] = {}
    for point in points:
        models.setdefault(point.model, []).append(point)
    return tuple(fit_model(model, group) for model, group in models.items())


def forecasts(
    points: Sequence[CalibrationPoint], prior: Sequence[CalibrationFit] | None = None
) -> list[int | None]:
    """The forecast bill of each of ``points`` (in request order): from ``prior`` (another
    session's fits) when given, else from the fits of the points before it; None for a point
    with nothing before it to forecast from."""
    if prior is not None:
        return [predict(prior, p.estimate, p.segment, p.model) for p in points]
    out: list[int | None] = []
    fits: tuple[CalibrationFit, ...] = ()
    fitted_on = 0
    seen: dict[tuple[str | None, int], int] = {}
    levels: BillLevels | None = None
    for index, point in enumerate(points):
        group = (point.model, point.segment)
        due = index < _EVERY or seen.get(group, 0) < ANCHOR or index >= fitted_on * _GROWTH
        if (due and index > fitted_on) or (index and not fits):
            fits, fitted_on = fits_of(points[:index]), index
            # The residuals against the new fit's ratios, from the start (a refit is rare).
            levels = BillLevels(fits)
            for earlier in points[:index]:
                levels.add(earlier)
        if not fits or levels is None:
            out.append(None)
        else:
            # After a break in the bill (`ctxlab.analysis._calibration_breaks`), the level
            # since it; else the fit's.
            after = levels.forecast(point)
            out.append(
                after
                if after is not None
                else predict(fits, point.estimate, point.segment, point.model)
            )
            levels.add(point)
        seen[group] = seen.get(group, 0) + 1
    return out
