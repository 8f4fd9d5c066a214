"""Breaks in the bill: where what a recording's requests carried beyond what the file shows
changed, without the file saying so.

The fit (`ctxlab.analysis._calibration_fit`) measures the unrecorded part again after each of the
session's *recorded* compactions. Some agents edit what they send without recording it: Gemini
CLI masks old tool outputs (``<tool_output_masked>``) and rewrites them so in its chat file, so
the file holds the masked form while the requests before the masking sent them whole — the bill
jumps up when an output is sent, stays up for a hundred requests, drops when it is masked, while
ctxlab's count of the file moves smoothly. Against one fixed part a segment, every forecast in
between is 20–40 % off.

Such a change shows in the bill alone: each request's *residual* — its bill less the fit's
ratio × ctxlab's count, what the fixed part measures — stays level within a segment, and moves
to another level at such an edit. A *break* is `BREAK_RUN` consecutive requests whose residuals
all stand more than `BREAK_SHARE` of their bill away from the level before them (the median of
the latest `_WINDOW` residuals since the previous break), on the same side: one odd request is no
break. After a break the fixed part is the residuals' median since it. Breaks are rare (a few a
session): where they are not (`_MOST_BREAKS`), the bill does not follow the count at all, and no
level is used.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the fit reads its first segment's breaks: it imports this module
    from ctxlab.analysis._calibration_fit import CalibrationFit, CalibrationPoint

__all__ = ["BREAK_RUN", "BREAK_SHARE", "BillLevels", "SegmentLevels", "bill_breaks"]

BREAK_SHARE = 0.10
"""How far from the level before it (a share of its own bill) a residual stands in a break."""
BREAK_RUN = 2
"""How many consecutive requests stand so, on the same side, to make a break."""
_WINDOW = 9
"""The latest residuals of a level the next is compared with (their median)."""
_MOST_BREAKS = (3, 10)
"""A model's segment describes its bill by levels while it has at most 3 breaks, or one per 10
requests: more, and the bill does not follow ctxlab's count at all — levels would describe
any bills, and say nothing."""
_TIGHT = BREAK_SHARE / 2
"""A level describes its requests while their residuals stand, in the median, within this
share of their bill from its median (real sessions: within 1–3 %; bills dealt to the wrong
requests: nowhere near)."""


@dataclass
class SegmentLevels:
    """One model's requests in one recorded segment: their residuals and where the latest level
    starts."""

    ratio: float
    residuals: list[float] = field(default_factory=list)
    bills: list[int] = field(default_factory=list)
    numbers: list[int] = field(default_factory=list)
    start: int = 0
    breaks: list[int] = field(default_factory=list)
    """The request numbers the breaks start at."""

    def add(self, point: CalibrationPoint) -> None:
        self.residuals.append(point.billed - self.ratio * point.estimate)
        self.bills.append(point.billed)
        self.numbers.append(point.number)
        first = len(self.residuals) - BREAK_RUN  # the run that may start a new level
        if first <= self.start:
            return
        level = statistics.median(self.residuals[max(self.start, first - _WINDOW) : first])
        away = [
            self.residuals[n] - level
            for n in range(first, first + BREAK_RUN)
            if abs(self.residuals[n] - level) > BREAK_SHARE * self.bills[n]
        ]
        if len(away) == BREAK_RUN and (all(a > 0 for a in away) or all(a < 0 for a in away)):
            self.start = first
            self.breaks.append(self.numbers[first])

    @property
    def steady(self) -> bool:
        """Whether the breaks are rare enough to be levels (`_MOST_BREAKS`): bills that do not
        follow the count at all (dealt to the wrong requests) are not described by levels."""
        return len(self.breaks) <= max(_MOST_BREAKS[0], len(self.residuals) / _MOST_BREAKS[1])

    def level(self) -> float | None:
        """The fixed part since the latest break, or None before any break, or when the
        breaks are not steady or the level not tight (the fit's part for the segment holds)."""
        if not self.start or not self.steady:
            return None
        return self._tight(self.start, len(self.residuals))

    def _tight(self, begin: int, end: int) -> float | None:
        """The median residual of requests ``begin:end`` when they keep to it (`_TIGHT`, over
        the latest 2 × `_WINDOW` of them), else None."""
        median = statistics.median(self.residuals[begin:end])
        recent = range(max(begin, end - 2 * _WINDOW), end)
        spread = statistics.median(abs(self.residuals[n] - median) / self.bills[n] for n in recent)
        return median if spread <= _TIGHT else None

    def levels(self) -> list[float | None]:
        """Each request's fixed part in sample: its level's median residual, None for the
        requests before the first break (the fit's part for the segment holds)."""
        starts = [self.numbers.index(n) for n in self.breaks]
        if not starts or not self.steady:
            return [None] * len(self.residuals)
        out: list[float | None] = [None] * starts[0]
        for begin, end in zip(starts, [*starts[1:], len(self.residuals)], strict=True):
            out.extend([self._tight(begin, end)] * (end - begin))
        return out


class BillLevels:
    """The residuals of requests seen so far, by model and recorded segment, against ``fits``'
    ratios; what a forecast of the next request reads (`forecast`)."""

    def __init__(self, fits: Sequence[CalibrationFit]) -> None:
        self.fits = tuple(fits)
        self.groups: dict[tuple[str | None, int], SegmentLevels] = {}

    def _fit(self, model: str | None) -> CalibrationFit:
        return next((f for f in self.fits if f.model == model), self.fits[0])

    def add(self, point: CalibrationPoint) -> None:
        """Take the next request (in request order)."""
        key = (point.model, point.segment)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = SegmentLevels(self._fit(point.model).ratio)
        group.add(point)

    def forecast(self, point: CalibrationPoint) -> int | None:
        """``point``'s bill after a break in its model's segment (its level since, plus the
        ratio × its count); None when there was none (the fit's forecast holds)."""
        group = self.groups.get((point.model, point.segment))
        level = group.level() if group is not None else None
        if group is None or level is None:
            return None
        return round(level + group.ratio * point.estimate)

    def in_sample(self) -> dict[int, int]:
        """Each request after a break (by number): its bill as its level describes it (the
        level's median residual plus the ratio × its count), every request seen counted."""
        out: dict[int, int] = {}
        for group in self.groups.values():
            for n, fixed in enumerate(group.levels()):
                if fixed is not None:  # the residual is the bill less ratio × count
                    out[group.numbers[n]] = round(fixed + group.bills[n] - group.residuals[n])
        return out

    @property
    def breaks(self) -> list[int]:
        """The request numbers breaks start at, in request order (in steady groups)."""
        return sorted(n for g in self.groups.values() if g.steady for n in g.breaks)


def bill_breaks(
    points: Sequence[CalibrationPoint], fits: Sequence[CalibrationFit]
) -> tuple[int, ...]:
    """The requests (numbers) at which ``points``' bill broke from ``fits`` (see the module)."""
    if not fits:
        return ()
    levels = BillLevels(fits)
    for point in points:
        levels.add(point)
    return tuple(levels.breaks)
