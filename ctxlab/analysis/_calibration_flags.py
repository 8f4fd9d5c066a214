"""What is said beside a calibrated figure: a request flagged off its bill (`bill_flag`: more
than `OFF_FACTOR` times above or below it, or a bill of 0), and the calibrated input of a run
of requests (`calibrated_total`) summed over the very requests ctxlab's own total counts."""

from __future__ import annotations

from collections.abc import Iterable

from ctxlab.analysis._calibration_fit import CalibrationFit
from ctxlab.manifest import ContextManifest

__all__ = ["OFF_FACTOR", "ZERO_BILL", "bill_flag", "calibrated_total"]


OFF_FACTOR = 1.5
"""A calibrated estimate more than this many times above or below its bill is flagged where it
is shown (`bill_flag`: the Lab's header, step table and plot, which leaves it out of its scale)
— an estimate twice its bill, or half of it, never passes unsaid."""


ZERO_BILL = (
    "billed 0 tokens: the file recorded no usage for this request (left out of the calibration)"
)
"""The flag of a request whose usage was recorded as 0 tokens of input."""


def bill_flag(estimate: int | float | None, billed: int | float | None) -> str:
    """Why a request's calibrated ``estimate`` must not be read beside its ``billed`` input
    without a word, or ``""``: a bill of 0 (`ZERO_BILL`), or an estimate more than `OFF_FACTOR`
    times above or below the bill. Nothing to compare (no bill, no estimate, NaN) is no flag."""
    if billed is None or billed != billed:  # None or NaN: no usage recorded
        return ""
    if billed <= 0:
        return ZERO_BILL
    if estimate is None or estimate != estimate:
        return ""
    if estimate <= 0:
        return f"calibrated estimate {round(estimate):,} against a bill of {round(billed):,}"
    factor = max(estimate / billed, billed / estimate)
    if factor <= OFF_FACTOR:
        return ""
    side = "above" if estimate > billed else "below"
    return (
        f"calibrated estimate {round(estimate):,} is {factor:,.1f}× {side} its bill of "
        f"{round(billed):,}"
    )


def calibrated_total(fit: CalibrationFit, requests: Iterable[ContextManifest]) -> int:
    """``requests``' input in the provider's tokens, by ``fit``: each request's ``ratio`` ×
    ctxlab's count of what it holds besides the unrecorded part, plus the unrecorded fixed part
    (its first segment's: a replay does not restart where the recorded agent compacted) where
    the request carries the prefix every recorded request had — a reasoning request always, a
    summary call in its cached form (unrecorded part, System or tool schemas), not sent as the
    span alone — rounded per request.

    Summed over the same requests as ctxlab's own total (every request sent, summary calls
    included), the two differ by the calibration alone: ``calibrated_total = ratio × (total −
    unrecorded) + fixed × requests carrying it``, to half a token a request. (The what-if's
    ``tokens_sent_calibrated`` once summed the reasoning requests only: 482,013 beside 685,538
    sent at a ratio of 1.134, once a replay compacted many times.)"""
    fixed = fit.fixed[min(fit.fixed)] if fit.fixed else 0.0
    total = 0
    for request in requests:
        totals = request.totals
        rest = request.estimated_input_tokens - totals["unrecorded"]
        prefix = totals["unrecorded"] + totals["system"] + totals["tools"]
        carries = request.purpose != "summary" or prefix > 0
        total += round((fixed if carries else 0.0) + fit.ratio * rest)
    return total
