"""`Memo`: values computed once per key and kept, within a bound.

A what-if replays the same recording under config after config: the summarizer's and the
grader's scans of a text give the same answer each time, so each keeps its answers (its own
memo: they share no rules, only this bookkeeping).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["Memo"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class Memo(Generic[_K, _V]):
    """``compute()``'s value for ``key``, computed on the first ``get`` and kept. Past ``limit``
    entries the memo is cleared whole: crude, but memory stays flat in an endless session."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._values: dict[_K, _V] = {}

    def get(self, key: _K, compute: Callable[[], _V]) -> _V:
        """The value kept for ``key``, or ``compute()``'s, kept."""
        try:
            return self._values[key]
        except KeyError:
            pass
        if len(self._values) > self.limit:
            self._values.clear()
        value = self._values[key] = compute()
        return value
