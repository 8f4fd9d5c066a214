"""Reconciling ctxlab's estimates with what the provider billed.

ctxlab counts with tiktoken's cl100k_base; Claude's tokenizer is another, and a recording may
not hold everything that was sent (a Claude Code session records neither its System prompt nor
its tool schemas). A fixed ratio cannot be assumed: it is measured, per session and model, from
the requests whose usage was recorded:

    billed ≈ fixed + ratio × estimate

- ``fixed`` — what every request carries that the estimate does not see (System prompt, tool
  schemas): read from the first requests, whose content is small, as ``billed − ratio ×
  estimate``; after each of the session's own compactions (a new *segment*) the agent
  re-attaches what the file does not record (Claude Code: recent files, todos), so it is
  measured again, as the median over that segment;
- ``ratio`` — the provider's tokens per estimated token of the content both can see: the median
  over the first segment's requests of ``(billed − fixed) ÷ estimate`` (a few odd requests
  cannot drag a median).

Both come with their spread (the interquartile range of the per-request values), and every
request with its calibrated estimate, its error against the bill and, past `FLAG_ERROR`, the
likeliest reason.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxlab.analysis._recorded import recorded_requests
from ctxlab.io._transcript import Transcript
from ctxlab.messages import UserMessage
from ctxlab.tokens import TokenCache, TokenCounter, default_counter

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FLAG_ERROR", "Calibration", "CalibrationFit", "CalibrationPoint", "calibrate"]

FLAG_ERROR = 0.10
"""A calibrated estimate further than this share from the bill is flagged."""
_ANCHOR = 3
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
            known = [s for s in self.fixed if s <= segment] or list(self.fixed)
            fixed = self.fixed[max(known)] if known else 0.0
        return round(fixed + self.ratio * estimate)


@dataclass(frozen=True)
class Calibration:
    """Estimates reconciled with the bill, per model; see the module's docstring."""

    fits: tuple[CalibrationFit, ...]
    points: tuple[CalibrationPoint, ...]
    rows: list[dict[str, object]] = field(default_factory=list, repr=False)

    def fit(self, model: str | None = None) -> CalibrationFit | None:
        """The fit of ``model`` (when omitted, of the model that answered the first request:
        the session's own, before any switch)."""
        if not self.fits:
            return None
        if model is None:
            model = self.points[0].model if self.points else self.fits[0].model
        return next((f for f in self.fits if f.model == model), None)

    def calibrated(self, estimate: int, segment: int = 0, model: str | None = None) -> int | None:
        """The calibrated estimate for a request of ``model`` in ``segment`` (None without a
        fit)."""
        fit = (self.fit(model) if model is not None else None) or self.fit()
        return fit.calibrated(estimate, segment) if fit is not None else None

    @property
    def median_error(self) -> float | None:
        """The median of |calibrated − billed| ÷ billed over the requests (None without any)."""
        errors = [float(r["error"]) for r in self.rows]  # type: ignore[arg-type]
        return statistics.median(errors) if errors else None

    @property
    def raw_median_error(self) -> float | None:
        """The same for the uncalibrated estimate: what calibration improved on."""
        errors = [abs(p.estimate - p.billed) / p.billed for p in self.points]
        return statistics.median(errors) if errors else None

    def frame(self) -> pd.DataFrame:
        """One row per request with usage: ``step``, ``model``, ``segment``, ``estimate``,
        ``calibrated``, ``billed``, ``error`` (|calibrated − billed| ÷ billed), ``flag`` (why
        a request is still more than `FLAG_ERROR` off; empty otherwise)."""
        import pandas as pd

        columns = ["step", "model", "segment", "estimate", "calibrated", "billed", "error", "flag"]
        return pd.DataFrame(self.rows, columns=columns)

    def describe(self) -> str:
        """One line per model: ratio and fixed part with their spread, and the median error."""
        lines = []
        for fit in self.fits:
            low, high = fit.ratio_spread
            fixed = ", ".join(
                f"{f:,.0f} (IQR {fit.fixed_spread[s][0]:,.0f}–{fit.fixed_spread[s][1]:,.0f})"
                + (f" after compaction {s}" if s else "")
                for s, f in sorted(fit.fixed.items())
            )
            errors = [
                float(r["error"])  # type: ignore[arg-type]
                for r in self.rows
                if r["model"] == fit.model
            ]
            median = statistics.median(errors) if errors else float("nan")
            lines.append(
                f"{fit.model or 'model'}: {fit.ratio:.3f} billed tokens per estimated token "
                f"(IQR {low:.3f}–{high:.3f}); unrecorded fixed part {fixed} tokens; "
                f"median error {median:.1%} over {fit.requests} requests"
            )
        return "\n".join(lines) or "no request with recorded usage: nothing to calibrate"

    def __repr__(self) -> str:
        error = self.median_error
        shown = f"{error:.1%}" if error is not None else "n/a"
        return f"Calibration({len(self.points)} requests, {len(self.fits)} models, median error {shown})"


def fit_points(points: Sequence[CalibrationPoint]) -> Calibration:
    """Fit ``fixed`` and ``ratio`` per model over ``points`` (requests with a bill)."""
    usable = [p for p in points if p.billed > 0 and p.estimate >= 0]
    models: dict[str | None, list[CalibrationPoint]] = {}
    for point in usable:
        models.setdefault(point.model, []).append(point)
    fits = tuple(_fit(model, group) for model, group in models.items())
    by_model = {f.model: f for f in fits}
    rows: list[dict[str, object]] = []
    for point in usable:
        fit = by_model[point.model]
        calibrated = fit.calibrated(point.estimate, point.segment)
        error = abs(calibrated - point.billed) / point.billed
        rows.append(
            {
                "step": point.number,
                "model": point.model,
                "segment": point.segment,
                "estimate": point.estimate,
                "calibrated": calibrated,
                "billed": point.billed,
                "error": round(error, 4),
                "flag": (point.note or "not explained by the recording")
                if error > FLAG_ERROR
                else "",
            }
        )
    rows.sort(key=lambda r: int(r["step"]))  # type: ignore[call-overload]
    return Calibration(fits, tuple(usable), rows)


def _fit(model: str | None, points: list[CalibrationPoint]) -> CalibrationFit:
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
        fixed_first = statistics.median(p.billed - ratio * p.estimate for p in first[:_ANCHOR])
        large = [p for p in first if p.estimate >= _MIN_CONTENT] or [
            p for p in first if p.estimate > 0
        ]
        ratios = [(p.billed - fixed_first) / p.estimate for p in large]
        if not ratios:
            break
        ratio = max(statistics.median(ratios), 1e-6)
    fixed: dict[int, float] = {}
    fixed_spread: dict[int, tuple[float, float]] = {}
    for segment, group in segments.items():
        parts = [p.billed - ratio * p.estimate for p in group]
        # After a recorded compaction the agent re-attaches what the file does not show (Claude
        # Code: recent files, todos): measured over the segment, not assumed.
        fixed[segment] = fixed_first if group is first else statistics.median(parts)
        fixed_spread[segment] = _iqr(parts)
    return CalibrationFit(model, ratio, _iqr(ratios or [ratio]), fixed, fixed_spread, len(points))


def _iqr(values: Sequence[float]) -> tuple[float, float]:
    if len(values) < 2:
        return (values[0], values[0]) if values else (0.0, 0.0)
    quartiles = statistics.quantiles(values, n=4)
    return quartiles[0], quartiles[2]


def calibrate(
    transcript: Transcript, counter: TokenCounter | TokenCache | None = None
) -> Calibration:
    """Reconcile ctxlab's estimates of a recording's requests, *as recorded*
    (`ctxlab.recorded_requests`), with the usage it recorded; see `Calibration`.

    The estimate of each request is of what the file shows of it: its conversation since the
    session start or the latest recorded compaction, plus the System prompt and tool schemas
    when the file has them.
    """
    if counter is None:
        counter = default_counter()
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    fixed = (cache.text(transcript.system) if transcript.system else 0) + sum(
        cache.text(t.rendered) for t in transcript.tools
    )
    points: list[CalibrationPoint] = []
    for request in recorded_requests(transcript):
        if request.usage is None:
            continue
        images = sum(m.image_count for m in request.messages if isinstance(m, UserMessage))
        note = (
            "first request after a recorded compaction"
            if request.compaction is not None
            else f"{images} images (their tokens are a guess)"
            if images
            else ""
        )
        points.append(
            CalibrationPoint(
                request.number,
                fixed + cache.messages(request.messages),
                request.usage.total_input_tokens,
                request.segment,
                request.model,
                note,
            )
        )
    return fit_points(points)
