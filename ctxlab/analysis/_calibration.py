"""Reconciling ctxlab's estimates with what the provider billed.

ctxlab counts a recording with its model's own tokenizer where one is public (o200k_base for
GPT-4o/5 and the Codex models: `ctxlab.tokens.counter_for`), else with cl100k_base; Claude's
and Gemini's tokenizers are others, and a recording may
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
  cannot drag a median); when none of that segment's requests is large enough to tell the
  ratio from the fixed part (a session compacted early, every request small), or the two do
  not settle, or settle on a ratio no tokenizer gives (`RATIO_RANGE`), the median of how the
  bill grew per counted token between consecutive requests of a segment (its fixed part
  cancels out); when nothing tells it, 1.0, assumed — never a guess from requests too small to
  tell (`CalibrationFit.ratio_from` says which).

Both come with their spread (the interquartile range of the per-request values), and every
request with its calibrated estimate, its error against the bill and, past `FLAG_ERROR`, the
likeliest reason.

A fit scored on the requests it was fitted on is an *in-sample* figure (`median_error`): it
says the model describes this session, not that it predicts the next request. The figure to
trust is *out of sample* (`out_of_sample_error`): every request forecast from a fit of the
requests before it, or of another session (``prior=``) — see `ctxlab.analysis._forecast`.
"""

from __future__ import annotations

import itertools
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxlab.analysis._calibration_breaks import BillLevels
from ctxlab.analysis._calibration_fit import (
    ANCHORED,
    ASSUMED,
    FLAG_ERROR,
    GROWTH,
    RATIO_RANGE,
    CalibrationFit,
    CalibrationPoint,
    predict,
)
from ctxlab.analysis._calibration_flags import OFF_FACTOR, ZERO_BILL, bill_flag, calibrated_total
from ctxlab.analysis._forecast import fits_of, forecasts
from ctxlab.analysis._prices import recorded_model
from ctxlab.analysis._recorded import recorded_requests
from ctxlab.exceptions import UsageError
from ctxlab.io._arguments import checked_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.messages import MAX_TOKENS, UserMessage
from ctxlab.tokens import TokenCache, TokenCounter, counter_for
from ctxlab.util._checks import shown, whole_number
from ctxlab.util._views import Prefix

if TYPE_CHECKING:
    import pandas as pd


__all__ = [
    "FLAG_ERROR",
    "FRAME_COLUMNS",
    "OFF_FACTOR",
    "RATIO_RANGE",
    "ZERO_BILL",
    "Calibration",
    "CalibrationFit",
    "CalibrationPoint",
    "bill_flag",
    "calibrate",
    "calibrated_total",
    "fit_points",
]


@dataclass(frozen=True)
class Calibration:
    """Estimates reconciled with the bill, per model; see the module's docstring."""

    fits: tuple[CalibrationFit, ...]
    points: tuple[CalibrationPoint, ...]
    rows: list[dict[str, object]] = field(default_factory=list, repr=False)
    zero_bills: tuple[int, ...] = ()
    """The requests (their numbers) whose usage the file recorded as 0 tokens of input: no bill
    to reconcile (Gemini CLI writes all-zero tokens for some replies), left out of the fit and
    flagged (`bill_flag`), never taken at face value."""
    breaks: tuple[int, ...] = ()
    """The requests (their numbers) at which the bill broke from the fit: what they carried
    beyond the file changed without the file saying so (Gemini CLI's masking of old tool
    outputs); the fixed part is measured again from each (`ctxlab.analysis._calibration_breaks`)."""

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
        fit). ``estimate`` is ctxlab's count of what the file shows of the request — not of an
        unrecorded part the request carries: the fit adds its own."""
        estimate = whole_number(estimate, "estimate", high=sys.maxsize)
        segment = whole_number(segment, "segment", high=MAX_TOKENS)
        if model is not None and not isinstance(model, str):
            msg = f"model must be a model's name or None, got {shown(model)}"
            raise UsageError(msg)
        first = self.fit()
        ordered = (first, *(f for f in self.fits if f is not first)) if first else self.fits
        return predict(ordered, estimate, segment, model)

    @property
    def median_error(self) -> float | None:
        """The median of |calibrated − billed| ÷ billed over the requests, *in sample*: the fit
        scored on the requests it was fitted on (None without any). `out_of_sample_error` is
        the figure that holds on the next request."""
        errors = [float(r["error"]) for r in self.rows]  # type: ignore[arg-type]
        return statistics.median(errors) if errors else None

    @property
    def out_of_sample_error(self) -> float | None:
        """The median of |forecast − billed| ÷ billed, each request forecast by a fit that never
        saw it (the requests before it, or another session's: ``calibrate(prior=)``); None
        without a request to forecast."""
        found = (r["forecast_error"] for r in self.rows)
        errors = [float(e) for e in found if e is not None]  # type: ignore[arg-type]
        return statistics.median(errors) if errors else None

    @property
    def forecast_from(self) -> str:
        """What the forecasts were fitted on, in words."""
        return str(self.rows[0]["forecast_from"]) if self.rows else "nothing"

    @property
    def unrecorded_median_error(self) -> float | None:
        """The median error of ctxlab's estimate with the unrecorded part added (its model's
        fixed part, `ctxlab.unrecorded_part`) but no ratio: what a request's stacked total
        says, beside the bill."""
        errors = []
        for point in self.points:
            fit = self.fit(point.model) or self.fit()
            if fit is not None:
                unseen = fit.calibrated(0, point.segment)
                errors.append(abs(point.estimate + unseen - point.billed) / point.billed)
        return statistics.median(errors) if errors else None

    @property
    def raw_median_error(self) -> float | None:
        """The same for the uncalibrated estimate: what calibration improved on."""
        errors = [abs(p.estimate - p.billed) / p.billed for p in self.points]
        return statistics.median(errors) if errors else None

    def frame(self) -> pd.DataFrame:
        """One row per request with usage: ``step``, ``model``, ``segment``, ``estimate``,
        ``calibrated`` (in sample), ``billed``, ``error`` (|calibrated − billed| ÷ billed, in
        sample), ``forecast`` (out of sample: from a fit that never saw the request; None for
        the first), ``forecast_error``, ``flag`` (why a request is still more than `FLAG_ERROR`
        off in sample; empty otherwise)."""
        import pandas as pd

        return pd.DataFrame(self.rows, columns=list(FRAME_COLUMNS))

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
            read = "" if fit.ratio_from == ANCHORED else f"; {_READ[fit.ratio_from]}"
            lines.append(
                f"{fit.model or 'model'}: {fit.ratio:.3f} billed tokens per estimated token "
                f"(IQR {low:.3f}–{high:.3f}{read}); unrecorded fixed part {fixed} tokens; "
                f"median error {median:.1%} in sample over {fit.requests} requests"
            )
        if self.breaks:
            count = len(self.breaks)
            lines.append(
                f"the bill broke from the fit at request{'s' if count != 1 else ''} "
                f"{', '.join(map(str, self.breaks[:8]))}{', ...' if count > 8 else ''}: what "
                "the requests carried beyond the file changed without the file saying so; the "
                "fixed part is measured again from each"
            )
        if self.zero_bills:
            count = len(self.zero_bills)
            lines.append(
                f"{count} request{'s' if count != 1 else ''} billed 0 tokens (no usage recorded: "
                f"request {', '.join(map(str, self.zero_bills[:5]))}"
                f"{', ...' if count > 5 else ''}): left out"
            )
        if not lines:
            return "no request with recorded usage: nothing to calibrate"
        outside = self.out_of_sample_error
        if outside is not None:
            lines.append(
                f"out of sample: median error {outside:.1%}, each request forecast from "
                f"{self.forecast_from}"
            )
        return "\n".join(lines)

    def __repr__(self) -> str:
        def shown(error: float | None) -> str:
            return f"{error:.1%}" if error is not None else "n/a"

        return (
            f"Calibration({len(self.points)} requests, {len(self.fits)} models, median error "
            f"{shown(self.out_of_sample_error)} out of sample, {shown(self.median_error)} in "
            "sample)"
        )


_READ = {
    GROWTH: "read from the bill's growth between requests",
    ASSUMED: "assumed: no request told it from the fixed part",
}
"""How `Calibration.describe` says where a ratio not read from the first requests came from."""

FRAME_COLUMNS = (
    "step",
    "model",
    "segment",
    "estimate",
    "calibrated",
    "billed",
    "error",
    "forecast",
    "forecast_error",
    "flag",
)
"""The columns of `Calibration.frame`."""


def fit_points(points: Sequence[CalibrationPoint], prior: Calibration | None = None) -> Calibration:
    """Fit ``fixed`` and ``ratio`` per model over ``points`` (requests with a bill, in request
    order), and forecast each from the points before it — or from ``prior``'s fits (another
    session's calibration) when given."""
    usable = [p for p in points if p.billed > 0 and p.estimate >= 0]
    zero = tuple(p.number for p in points if p.billed <= 0)
    fits = fits_of(usable)
    levels = BillLevels(fits) if fits else None
    for point in usable if levels is not None else ():
        levels.add(point)  # type: ignore[union-attr]
    # After a break in the bill, a request is described by its level (`_calibration_breaks`).
    leveled = levels.in_sample() if levels is not None else {}
    by_model = {f.model: f for f in fits}
    ahead = forecasts(usable, prior.fits if prior is not None else None)
    source = "another session's fit" if prior is not None else "the requests before it"
    rows: list[dict[str, object]] = []
    for point, forecast in zip(usable, ahead, strict=True):
        fit = by_model[point.model]
        calibrated = leveled.get(point.number, fit.calibrated(point.estimate, point.segment))
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
                "forecast": forecast,
                "forecast_error": round(abs(forecast - point.billed) / point.billed, 4)
                if forecast is not None
                else None,
                "forecast_from": source,
                "flag": (point.note or "not explained by the recording")
                if error > FLAG_ERROR
                else "",
            }
        )
    rows.sort(key=lambda r: int(r["step"]))  # type: ignore[call-overload]
    breaks = tuple(levels.breaks) if levels is not None else ()
    return Calibration(fits, tuple(usable), rows, zero, breaks)


def _check_arguments(transcript: object, prior: object) -> None:
    # Refused here, naming the argument: both would fail later as an attribute never found.
    checked_transcript(transcript, "calibrate")
    if prior is not None and not isinstance(prior, Calibration):
        msg = (
            f"prior must be another session's Calibration, got {shown(prior)}: pass "
            "calibrate(ctxlab.load(other_path)) — a model's name is not a calibration — or "
            "leave prior out to forecast each request from the requests before it"
        )
        raise UsageError(msg)


def calibrate(
    transcript: Transcript,
    counter: TokenCounter | TokenCache | None = None,
    *,
    prior: Calibration | None = None,
) -> Calibration:
    """Reconcile ctxlab's estimates of a recording's requests, *as recorded*
    (`ctxlab.recorded_requests`), with the usage it recorded; see `Calibration`.

    The estimate of each request is of what the file shows of it: its conversation since the
    session start or the latest recorded compaction, plus the System prompt and tool schemas
    when the file has them. Each request is also forecast out of sample: from the requests
    before it, or — with ``prior``, another session's calibration — from that session's fit
    (`Calibration.out_of_sample_error`).
    """
    _check_arguments(transcript, prior)
    if counter is None:
        # The recording's model's own tokenizer where one is public (o200k for GPT-4o/5).
        counter = counter_for(recorded_model(transcript.meta))
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    fixed = (cache.text(transcript.system) if transcript.system else 0) + sum(
        cache.text(t.rendered) for t in transcript.tools
    )
    points: list[CalibrationPoint] = []
    # Running sums over each segment's shared messages: a request's count is a lookup, not a
    # pass over its messages (a 10,000-request recording would cost their square).
    running: tuple[object, list[int], list[int]] | None = None
    for request in recorded_requests(transcript):
        if request.usage is None:
            continue
        messages = request.messages
        base = messages.base if isinstance(messages, Prefix) else messages
        if running is None or running[0] is not base:
            cache.count_ahead(base)  # in one batch (two threads with the fast counter)
            counts = itertools.accumulate((cache.message(m) for m in base), initial=0)
            pictures = itertools.accumulate(
                (m.image_count if isinstance(m, UserMessage) else 0 for m in base), initial=0
            )
            running = (base, list(counts), list(pictures))
        counted, images = running[1][len(messages)], running[2][len(messages)]
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
                fixed + counted,
                request.usage.total_input_tokens,
                request.segment,
                request.model,
                note,
                request.reply,
            )
        )
    return fit_points(points, prior)
