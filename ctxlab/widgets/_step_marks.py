"""What the Lab's record of a session places on its steps: a request's number as a user gives
it, and a compaction placed after the step it followed."""

from __future__ import annotations

import operator
from dataclasses import dataclass

from ctxlab.exceptions import UsageError
from ctxlab.manifest import CompactionMethod, CompactionTrigger
from ctxlab.util._checks import shown

__all__ = ["CompactionMark", "step_number"]


def step_number(step: object) -> int:
    """``step`` as a request's number (any whole number, numpy's too; not a bool, a fraction,
    text): what a Lab's methods take, said by name otherwise."""
    if isinstance(step, bool) or not hasattr(step, "__index__"):
        msg = f"a step is a request's number (0, 1, ... or -1 for the latest), got {shown(step)}"
        raise UsageError(msg)
    return operator.index(step)


@dataclass(frozen=True, slots=True)
class CompactionMark:
    """A compaction, placed after the step it followed."""

    step: int
    """The request it belongs to, or the last request before it (-1 before any)."""
    trigger: CompactionTrigger
    method: CompactionMethod
    tokens_before: int
    tokens_after: int
    within: bool = False
    """True when it happened while preparing request ``step``; False when after it."""

    @property
    def label(self) -> str:
        """``automatic summary``, ``manual truncation``, ..."""
        return f"{self.trigger} {self.method}"
