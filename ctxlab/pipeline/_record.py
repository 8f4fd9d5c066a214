"""What one compaction did (`CompactionRecord`), and its retention, graded when first read.

A compaction's retention is graded by whoever holds the original messages (a replay, the
agent), never by the pipeline. A replay grades on demand: it hands each record a grader
(`CompactionRecord.graded_later`), run the first time ``retention`` is read — the steps, the
plot and the headline figures never wait for it; a figure that needs it grades what it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from ctxlab.manifest import AskRule, CompactionMethod
from ctxlab.retention import Retention

__all__ = ["CompactionRecord"]


@dataclass(frozen=True)
class CompactionRecord:
    """What one compaction did."""

    method: CompactionMethod
    """``summary``, or ``truncation`` when summarization failed and the fallback dropped messages."""
    tokens_before: int
    """Summary + conversation tokens before."""
    tokens_after: int
    """Summary + conversation tokens after."""
    messages_compacted: int
    """Messages replaced by the summary (or dropped)."""
    attempts: int
    """Summarization attempts made."""
    errors: tuple[str, ...] = ()
    """Why attempts failed."""
    retention: Retention | None = None
    """What the request after the compaction still holds of the compacted span, measured on
    the original messages by `ctxlab.retention` (set by whoever holds them — a replay, the
    agent — never by the pipeline, which would grade its own work)."""
    asked: AskRule | None = None
    """The on-demand rule that asked for it (``task``, ``requests``, ``tokens``, ``idle``), or
    None: a compaction at the trigger, a manual one, an overflow's."""

    @property
    def kind(self) -> CompactionMethod:
        """Deprecated alias of `method` (kept for one release)."""
        return self.method

    def graded_later(self, grade: Callable[[], Retention | None]) -> CompactionRecord:
        """This record, its ``retention`` graded by ``grade`` when first read (then kept)."""
        # Every field but the grade, read one by one: `dataclasses.replace` would read
        # ``retention`` too, running a grader this record may hold.
        later = CompactionRecord(
            **{f.name: getattr(self, f.name) for f in fields(self) if f.name != "retention"}
        )
        later.__dict__["_grade"] = grade
        return later

    def __getstate__(self) -> dict[str, Any]:
        # A copy or a pickle (a sweep's worker) carries the grade, never the grader.
        self.retention  # noqa: B018 - graded now if it was to be graded later
        return {k: v for k, v in self.__dict__.items() if k != "_grade"}


def _read_retention(record: CompactionRecord) -> Retention | None:
    held = record.__dict__
    grade = held.pop("_grade", None)
    if grade is not None:
        held["_retention"] = grade()
    return held.get("_retention")


def _set_retention(record: CompactionRecord, value: Retention | None) -> None:
    # The dataclass's own __init__ sets the field (frozen: through object.__setattr__).
    record.__dict__["_retention"] = value


# ``retention`` stays a dataclass field (in the constructor, `dataclasses.replace`, equality and
# repr) whose value is kept behind a property: read, it runs a pending grader first.
CompactionRecord.retention = property(  # type: ignore[assignment]
    _read_retention,
    _set_retention,
    doc="What the request after the compaction still holds of the compacted span (None: not "
    "graded, or no summary to grade), graded when first read if a replay graded it later.",
)
