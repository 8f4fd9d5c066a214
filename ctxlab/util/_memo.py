"""`Memo`: values computed once per key and kept, within a bound.

A what-if replays the same recording under config after config: the summarizer's and the
grader's scans of a text give the same answer each time, so each keeps its answers (its own
memo: they share no rules, only this bookkeeping).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
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

    def keyed(self, key: _K, compute: Callable[[_K], _V]) -> _V:
        """`get` with ``compute(key)`` for the value: no callable built per call in a hot
        loop (a `functools.partial` cost more than the look-up it wrapped)."""
        value = self._values.get(key, _MISSING)
        if value is _MISSING:
            if len(self._values) > self.limit:
                self._values.clear()
            value = self._values[key] = compute(key)
        return value  # type: ignore[return-value]

    def many(self, keys: Iterable[_K], compute: Callable[[_K], _V]) -> list[_V]:
        """The values of ``keys``, in order, each as `keyed` gives it."""
        keyed = self.keyed
        return [keyed(key, compute) for key in keys]


_MISSING: object = object()
"""What `Memo.keyed` finds for a key not kept (a value may be None)."""
