"""A regular expression a model gives (a grep tool's pattern), matched under a time limit.

Python's ``re`` backtracks without bound and holds the interpreter while it does: ``(a+)+$``
over thirty ``a`` and a ``!`` never answers, no thread can stop it, and a tool run in a thread
(`Tool.run`) would starve the event loop's thread too. A model's pattern is compiled by the
``regex`` package instead — it reads Python's syntax (its ``VERSION0``), answers many such
patterns at once, takes a ``timeout`` on every match, and lets other threads run while it
matches a ``str`` — and every search of one `ModelPattern` draws on one budget: the whole grep,
over every line of every file, ends within it. Past it, `TimeoutError` with a message the model
can act on (it is a tool's error, read by the model, not the user's).

``regex`` counts its timeout in processor time (C's ``clock``): on a busy machine a search can
take longer on the wall clock, never longer on the processor.
"""

from __future__ import annotations

import time
from typing import Any

import regex

from ctxlab.util._checks import seconds as checked_seconds

__all__ = ["ModelPattern", "time_limit"]


def time_limit(value: Any, name: str) -> float:
    """``value`` as a time limit in seconds: a positive, finite number (`UsageError` if not)."""
    return checked_seconds(value, name, "e.g. 2.0")


class ModelPattern:
    """A model's pattern, compiled, with ``seconds`` of matching for all its searches.

    `ValueError` (naming the pattern and what is wrong) for one that is not a regular
    expression."""

    def __init__(self, pattern: str, seconds: float) -> None:
        try:
            self._compiled = regex.compile(pattern, regex.VERSION0)
        except (regex.error, OverflowError, RecursionError, ValueError) as exc:
            msg = f"{pattern!r} is not a regular expression ({exc}); give a Python one"
            raise ValueError(msg) from None
        self.pattern = pattern
        self.seconds = seconds
        self._left = seconds

    def search(self, text: str) -> bool:
        """Whether ``text`` holds a match; `TimeoutError` once the budget is spent."""
        if self._left <= 0:
            raise self._spent()
        started = time.process_time()
        try:
            return self._compiled.search(text, timeout=self._left) is not None
        except TimeoutError:
            self._left = 0.0
            raise self._spent() from None
        finally:
            self._left -= time.process_time() - started

    def _spent(self) -> TimeoutError:
        return TimeoutError(
            f"the pattern {self.pattern!r} took longer than {self.seconds:g} s: simplify it "
            "(a repeat inside a repeat, such as (a+)+ or (\\w+\\s?)*, or alternatives that "
            "match the same text, such as (a|a)*, try every way to split a line), or search a "
            "smaller path"
        )
