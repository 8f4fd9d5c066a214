"""`RowColumns`: columns of the step log's rows as NumPy arrays, extended as rows arrive, so that
redrawing the budget plot at request 10,000 reads one new row, not 10,000 (a redraw read every
row of eleven columns at every step: 30 ms at 10,000 requests)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["RowColumns"]


class RowColumns:
    """The columns ``keys`` of a sequence of rows, as arrays of ``dtype`` (None read as
    ``missing``).

    A row is read once, when it is new — or again when the caller names it as ``changed`` (a
    column filled later, as the bill is). A log whose rows were replaced (a shorter one, or
    another first or last row) is read again.
    """

    def __init__(self, keys: Sequence[str], dtype: Any, missing: float = 0) -> None:
        self.keys = tuple(keys)
        self.dtype = dtype
        self.missing = missing
        self._reset()

    def _reset(self) -> None:
        self._count = 0
        self._first: object = None
        self._last: object = None
        self._data = {key: np.full(64, self.missing, dtype=self.dtype) for key in self.keys}

    def _value(self, value: Any) -> Any:
        return self.missing if value is None else value

    def _fill(self, key: str, where: slice, values: list[Any]) -> None:
        try:
            self._data[key][where] = values
        except OverflowError:
            # A count past the integer type (a bill of 2⁴⁰ tokens, which a file may hold and
            # ctxlab reads): every column becomes float64 — exact to 2⁵³ — and stays so.
            self.dtype = np.float64
            self._data = {k: column.astype(np.float64) for k, column in self._data.items()}
            self._data[key][where] = values

    def of(
        self, rows: Sequence[Mapping[str, Any]], changed: Iterable[int] = (), reset: bool = False
    ) -> dict[str, np.ndarray]:
        """Each column over ``rows`` (views: valid until the next call); ``changed``: rows read
        before whose columns may have changed since; ``reset``: read every row again."""
        count = len(rows)
        if (
            reset
            or count < self._count
            or (
                self._count
                and (rows[0] is not self._first or rows[self._count - 1] is not self._last)
            )
        ):
            self._reset()
        else:
            for index in changed:
                if 0 <= index < self._count:
                    for key in self._data:
                        self._fill(key, slice(index, index + 1), [self._value(rows[index][key])])
        if count > self._count:
            new = rows[self._count :]
            size = len(next(iter(self._data.values())))
            if count > size:
                grown = max(count, 2 * size)
                for key, old in self._data.items():
                    self._data[key] = np.resize(old, grown)
            for key in self._data:
                self._fill(key, slice(self._count, count), [self._value(r[key]) for r in new])
            self._count, self._first, self._last = count, rows[0], rows[count - 1]
        return {key: column[:count] for key, column in self._data.items()}
