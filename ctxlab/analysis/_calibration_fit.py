"""The fit of one model's billed requests: ``billed ≈ fixed + ratio × estimate`` (see
`ctxlab.calibrate`), its points and its spread — what `Calibration` and its out-of-sample
forecasts (`ctxlab.analysis._forecast`) are built from."""

from __future__ import annotations

import itertools
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ctxlab.analysis._calibration_breaks import SegmentLevels
from ctxlab.messages import MAX_TOKENS
from ctxlab.util._checks import whole_number

__all__ = [
    "ANCHORED",
    "ASSUMED",
    "FLAG_ERROR",
    "GROWTH",
    "RATIO_RANGE",
    "CalibrationFit",
    "CalibrationPoint",
    "fit_model",
    "predict",
]

FLAG_ERROR = 0.10
"""A calibrated estimate further than this share from the bill is flagged."""
ANCHOR = 3
"""The first requests the fixed part is read from."""
_MIN_CONTENT = 2_000
"""Estimated tokens of content from which a request's ratio counts (below, the fixed part
dominates and the ratio is noise)."""
_ROUNDS = 6
_SETTLED = 0.001
"""A last round that moves the ratio by this share at most has settled it; one that moves it
more must move it at most `_CONVERGING` times as far as the round before (the rounds converge,
and fast enough that the rest is small)."""
_CONVERGING = 0.9
RATIO_RANGE = (0.25, 4.0)
"""The billed tokens per counted token a fit may find. Two counts of one text differ by far
less (Claude's count of the corpus's sessions is 1.2–1.5 times cl100k's, Gemini's 1.1–1.3; a
character-based `ApproximateCounter` within 2–3 times): a ratio outside was misled — by
requests too small to tell it from the fixed part, or by content the file does not show — and
is not used."""
ANCHORED = "the first requests"
"""`CalibrationFit.ratio_from`: read from the first segment's requests, against the fixed
part the first requests measure."""
GROWTH = "the bill's growth"
"""`CalibrationFit.ratio_from`: how the bill grew between consecutive requests."""
ASSUMED = "assumed"
"""`CalibrationFit.ratio_from`: nothing told the ratio from the fixed part: 1.0, assumed."""


@dataclass(frozen=True)
class CalibrationPoint:
    """One request whose usage was recorded."""

    number: int
    """The request's number (the Lab's ``step``, the plot's x)."""
    estimate: int
    """ctxlab's estimate of what the file shows of the request."""
    billed: int
    """The provider's input + cache reads + cache writes."""
    segment: int = 0
    """The recorded compactions before it."""
    model: str | None = None
    note: str = ""
    """Why it may not fit (a compaction just before, images), for the flag."""
    reply: int | None = None
    """The message index of the reply the request produced, where known."""


@dataclass(frozen=True)
class CalibrationFit:
    """The fit for one model of a session."""

    model: str | None
    ratio: float
    """Billed tokens per estimated token."""
    ratio_spread: tuple[float, float]
    """The interquartile range of the per-request ratios ``(billed − fixed) ÷ estimate``."""
    fixed: dict[int, float]
    """The unrecorded fixed part (billed tokens), by segment."""
    fixed_spread: dict[int, tuple[float, float]]
    """The interquartile range of ``billed − ratio × estimate``, by segment."""
    requests: int
    """The requests it was fitted on."""
    ratio_from: str = ANCHORED
    """Where the ratio was read: `ANCHORED`, `GROWTH`, or `ASSUMED` (1.0: nothing told it)."""

    def calibrated(self, estimate: int, segment: int = 0) -> int:
        """The bill this fit expects for a request estimated at ``estimate``."""
        estimate = whole_number(estimate, "estimate", high=sys.maxsize)
        segment = whole_number(segment, "segment", high=MAX_TOKENS)
        fixed = self.fixed.get(segment)
        if fixed is None:  # a segment with no usage: the nearest earlier one's part
            # (before the first segment with usage, the first: the nearest one there is)
            known = [s for s in self.fixed if s <= segment] or sorted(self.fixed)[:1]
            fixed = self.fixed[max(known)] if known else 0.0
        return round(fixed + self.ratio * estimate)


def fit_model(model: str | None, points: list[CalibrationPoint]) -> CalibrationFit:
    """The fit of ``model`` over its ``points`` (in request order; see `ctxlab.calibrate`)."""
    segments: dict[int, list[CalibrationPoint]] = {}
    for point in points:
        segments.setdefault(point.segment, []).append(point)
    first = segments[min(segments)]
    ratio, ratios, source, fixed_first = _ratio(first, segments)
    fixed: dict[int, float] = {}
    fixed_spread: dict[int, tuple[float, float]] = {}
    for segment, group in segments.items():
        # A segment's fixed part is its first level's: before the bill breaks, if it does
        # (`ctxlab.analysis._calibration_breaks` describes the requests after).
        cut = _first_break(group, ratio)
        parts = [p.billed - ratio * p.estimate for p in group[:cut]]
        # After a recorded compaction the agent re-attaches what the file does not show (Claude
        # Code: recent files, todos): measured over the segment, not assumed.
        fixed[segment] = fixed_first if group is first else statistics.median(parts)
        fixed_spread[segment] = _iqr(parts)
    return CalibrationFit(
        model, ratio, _iqr(ratios or [ratio]), fixed, fixed_spread, len(points), source
    )


_Found = tuple[list[float], float | None]
"""Per-request ratios and, when they were read against it, the first segment's fixed part."""


def _ratio(
    first: list[CalibrationPoint], segments: dict[int, list[CalibrationPoint]]
) -> tuple[float, list[float], str, float]:
    """The ratio, the per-request values it is the median of, where it was read from, and the
    first segment's fixed part.

    From the first segment's requests large enough for their content to dominate, against the
    fixed part the first requests measure — when the two settle on a plausible ratio; else from
    how the bill grew between consecutive requests of a segment (the fixed part cancels out);
    else from the first segment's requests counted above nothing; else 1.0, assumed."""
    large = [p for p in first if p.estimate >= _MIN_CONTENT]
    tries: tuple[tuple[Callable[[], _Found | None], str], ...] = (
        (lambda: _anchored(first, large), ANCHORED),
        (lambda: (_within_ratios(segments), None), GROWTH),
        (lambda: _anchored(first, [p for p in first if p.estimate > 0]), ANCHORED),
    )
    for attempt, source in tries:  # in order, each computed only when the one before failed
        found = attempt()
        if found is not None and found[0] and _plausible(statistics.median(found[0])):
            ratios, fixed = found
            ratio = statistics.median(ratios)
            if source == ANCHORED and _first_break(first, ratio, steady=False) is not None:
                # The large requests carried what the file does not show (a ratio read over
                # them drifts, and breaks the bill everywhere: steady or not).
                continue
            if fixed is None:
                anchors = _anchors(first, ratio)
                fixed = statistics.median(p.billed - ratio * p.estimate for p in anchors)
            return ratio, ratios, source, fixed
    fixed = statistics.median(p.billed - p.estimate for p in _anchors(first, 1.0))
    return 1.0, [], ASSUMED, fixed


def _anchored(first: list[CalibrationPoint], large: list[CalibrationPoint]) -> _Found | None:
    """Each of ``large``'s ratio ``(billed − fixed) ÷ estimate`` and the fixed part the first
    requests measure; None when the rounds move the ratio further each time.

    The first requests are mostly the fixed part (their content is small): their bill less
    ratio × content is it. The ratio is then each request's bill less that part, per estimated
    token. Both depend on each other; a few rounds settle them when the first requests are
    small beside ``large``. When they are not (a session whose every request is small), each
    round moves the ratio further than the one before — 15 million tokens were forecast for a
    request billed 10,588 —: not settling, not used."""
    if not large:
        return None
    ratio, fixed = 1.0, 0.0
    ratios: list[float] = []
    steps: list[float] = []
    for _ in range(_ROUNDS):
        fixed = statistics.median(p.billed - ratio * p.estimate for p in first[:ANCHOR])
        ratios = [(p.billed - fixed) / p.estimate for p in large]
        moved = max(statistics.median(ratios), 1e-6)
        steps.append(abs(moved - ratio))
        ratio = moved
    settling = steps[-1] <= _SETTLED * ratio or steps[-1] <= _CONVERGING * steps[-2]
    return (ratios, fixed) if settling else None


def _first_break(first: list[CalibrationPoint], ratio: float, *, steady: bool = True) -> int | None:
    """Where a segment's bill first breaks from ``ratio`` (its index in ``first``, the
    segment's requests; `ctxlab.analysis._calibration_breaks`), or None: what the requests
    carried beyond the file changed there, so a ratio read against the first requests' fixed
    part spans it, and the fixed part is read from the requests before it. ``steady``: only
    where the breaks are few enough to be levels (bills dealt to the wrong requests break
    everywhere)."""
    group = SegmentLevels(ratio)
    for point in first:
        group.add(point)
    if not group.breaks or (steady and not group.steady):
        return None
    return next(n for n, p in enumerate(first) if p.number == group.breaks[0])


def _anchors(first: list[CalibrationPoint], ratio: float) -> list[CalibrationPoint]:
    """The first requests the fixed part is read from: the first `ANCHOR`, or fewer when the
    bill breaks before them."""
    cut = _first_break(first, ratio)
    return first[: ANCHOR if cut is None else min(ANCHOR, cut)]


def _plausible(ratio: float) -> bool:
    return RATIO_RANGE[0] <= ratio <= RATIO_RANGE[1]


def _within_ratios(segments: dict[int, list[CalibrationPoint]]) -> list[float]:
    """Billed tokens per counted token between consecutive requests of one segment (where the
    count grew by at least `_MIN_CONTENT`: a small step is mostly noise)."""
    return [
        (b.billed - a.billed) / (b.estimate - a.estimate)
        for group in segments.values()
        for a, b in itertools.pairwise(group)
        if b.estimate - a.estimate >= _MIN_CONTENT // 2
    ]


def _iqr(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    quartiles = statistics.quantiles(values, n=4)
    return quartiles[0], quartiles[2]


def predict(
    fits: Sequence[CalibrationFit], estimate: int, segment: int = 0, model: str | None = None
) -> int | None:
    """What ``fits`` expect the bill of a request of ``model`` in ``segment`` to be: its
    model's fit, else the first fit's (None without any)."""
    fit = next((f for f in fits if f.model == model), None) if model is not None else None
    fit = fit or (fits[0] if fits else None)
    return fit.calibrated(estimate, segment) if fit is not None else None
