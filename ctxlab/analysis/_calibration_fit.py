"""The fit of one model's billed requests: ``billed ≈ fixed + ratio × estimate`` (see
`ctxlab.calibrate`), its points and its spread — what `Calibration` and its out-of-sample
forecasts (`ctxlab.analysis._forecast`) are built from."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FLAG_ERROR",
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

    def calibrated(self, estimate: int, segment: int = 0) -> int:
        """The bill this fit expects for a request estimated at ``estimate``."""
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
    # The first requests are mostly the fixed part (their content is small): their bill less
    # ratio × content is it. The ratio is then each request's bill less that part, per
    # estimated token — over requests large enough for the content to dominate. Both depend
    # on each other; a few rounds settle them (the fixed part hardly moves with the ratio).
    ratio = 1.0
    ratios: list[float] = []
    fixed_first = 0.0
    for _ in range(_ROUNDS):
        fixed_first = statistics.median(p.billed - ratio * p.estimate for p in first[:ANCHOR])
        large = [p for p in first if p.estimate >= _MIN_CONTENT] or [
            p for p in first if p.estimate > 0
        ]
        ratios = [(p.billed - fixed_first) / p.estimate for p in large]
        if not ratios:
            break
        ratio = max(statistics.median(ratios), 1e-6)
    if not any(p.estimate >= _MIN_CONTENT for p in first):
        # Small requests before the first compaction (a session compacted early) hardly tell
        # the ratio from the fixed part. How the bill grew between consecutive requests of a
        # segment tells it (the segment's fixed part cancels out of the difference).
        within = _within_ratios(segments)
        if within:
            ratios, ratio = within, max(statistics.median(within), 1e-6)
            fixed_first = statistics.median(p.billed - ratio * p.estimate for p in first[:ANCHOR])
    fixed: dict[int, float] = {}
    fixed_spread: dict[int, tuple[float, float]] = {}
    for segment, group in segments.items():
        parts = [p.billed - ratio * p.estimate for p in group]
        # After a recorded compaction the agent re-attaches what the file does not show (Claude
        # Code: recent files, todos): measured over the segment, not assumed.
        fixed[segment] = fixed_first if group is first else statistics.median(parts)
        fixed_spread[segment] = _iqr(parts)
    return CalibrationFit(model, ratio, _iqr(ratios or [ratio]), fixed, fixed_spread, len(points))


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
