"""Whether a replayed request fits its window by the bill's measure, not only by ctxlab's count.

ctxlab counts with its own tokenizer; the provider billed the recorded requests with its own
(Claude's count of the same text is 1.2–1.5 times tiktoken's cl100k on the corpus's sessions).
A what-if must never say a session fits a window that its billed requests exceeded, so a
replayed request is *over the limit by the bill* when

- it holds at least what the recorded request for the same reply held (ctxlab's count of the
  rest, without the unrecorded part, no smaller) and the provider billed that recorded request
  beyond the limit — the bill itself says it did not fit; or
- its calibrated size (`ctxlab.calibrate`: the unrecorded part plus the billed tokens per
  counted token times ctxlab's count of the rest) passes the limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxlab.analysis._recorded import recorded_requests

if TYPE_CHECKING:
    from ctxlab.analysis._calibration import Calibration
    from ctxlab.analysis._replay import ReplayStep
    from ctxlab.io._transcript import Transcript

__all__ = ["Bill", "bill_of"]


@dataclass(frozen=True)
class Bill:
    """A recording's billed requests, by the message index of the reply each produced."""

    billed: dict[int, int] = field(default_factory=dict)
    """The provider's input (input + cache reads + cache writes)."""
    counted: dict[int, int] = field(default_factory=dict)
    """ctxlab's count of what the file shows of the same request."""
    calibration: Calibration | None = None
    models: dict[int, str] = field(default_factory=dict)

    def over(self, total: int, unrecorded: int, reply: int, limit: int) -> bool:
        """Whether a request of ``total`` tokens (``unrecorded`` of them the unrecorded part),
        standing for reply ``reply``, passes ``limit`` by the bill's measure (see the module)."""
        rest = total - unrecorded
        billed = self.billed.get(reply)
        if billed is not None and billed > limit and rest >= self.counted.get(reply, rest + 1):
            return True
        if self.calibration is None:
            return False
        calibrated = self.calibration.calibrated(rest, 0, self.models.get(reply))
        return calibrated is not None and calibrated > limit

    def over_count(self, steps: Iterable[ReplayStep]) -> int:
        """How many of a replay's prepared ``steps`` pass their input limit by the bill's
        measure (`over`); a step with no input limit is never over."""
        return sum(
            self.over(m.estimated_input_tokens, m.totals["unrecorded"], s.index, m.input_limit)
            for s in steps
            if (m := s.manifest).input_limit > 0
        )

    def __bool__(self) -> bool:
        return bool(self.billed)


def bill_of(transcript: Transcript, calibration: Calibration | None) -> Bill:
    """The billed requests of ``transcript`` and ctxlab's count of each (from ``calibration``,
    the recording's own: `ctxlab.calibrate`); empty without usage."""
    if calibration is None or not transcript.usage:
        return Bill()
    replies = {r.number: r for r in recorded_requests(transcript)}
    billed: dict[int, int] = {}
    counted: dict[int, int] = {}
    models: dict[int, str] = {}
    for point in calibration.points:
        request = replies.get(point.number)
        if request is None:
            continue
        billed[request.reply] = point.billed
        counted[request.reply] = point.estimate
        if point.model:
            models[request.reply] = point.model
    return Bill(billed, counted, calibration, models)
