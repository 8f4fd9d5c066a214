"""`Prefix`: the first items of a shared tuple, read like a tuple of them without a copy.

A session's requests are mostly prefixes of one another — the recorded agent's requests within
a segment, a policy that never compacts. Held as tuples, a session of n requests held its
messages (and their manifest items) about n²/2 times; as views of one tuple, once.

`Later`: a mapping one of whose values is computed when it is first read — a figure a view may
never show is not paid for at every step.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar, overload

__all__ = ["Later", "Prefix"]

_T = TypeVar("_T")
_V = TypeVar("_V")


class Prefix(Sequence[_T]):
    """The first ``end`` items of ``base``: iterates, indexes, slices (a slice is a tuple),
    compares equal to the tuple it stands for and hashes like it."""

    __slots__ = ("base", "end")

    def __init__(self, base: Sequence[_T], end: int) -> None:
        self.base = base
        self.end = min(max(end, 0), len(base))

    def __len__(self) -> int:
        return self.end

    @overload
    def __getitem__(self, index: int) -> _T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[_T, ...]: ...
    def __getitem__(self, index: int | slice) -> _T | tuple[_T, ...]:
        if isinstance(index, slice):
            return tuple(self.base[i] for i in range(*index.indices(self.end)))
        if index < 0:
            index += self.end
        if not 0 <= index < self.end:
            raise IndexError(index)
        return self.base[index]

    def __iter__(self) -> Iterator[_T]:
        return itertools.islice(self.base, self.end)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Prefix) and other.base is self.base:
            return other.end == self.end
        if isinstance(other, tuple | Prefix):
            return len(other) == self.end and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Any) -> tuple[Any, ...]:
        return (*self, *other)

    def __radd__(self, other: Any) -> tuple[Any, ...]:
        return (*other, *self)

    def __repr__(self) -> str:
        return f"Prefix({self.end} of {len(self.base)})"


class Later(Mapping[str, _V]):
    """A mapping with one key whose value is computed when first read (or when the mapping is
    iterated); a ``compute`` returning None leaves the key out. Pickled (a sweep on Dask) as a
    plain dict, computed."""

    def __init__(self, known: Mapping[str, _V], key: str, compute: Callable[[], _V | None]) -> None:
        self._known = dict(known)
        self._key = key
        self._compute: Callable[[], _V | None] | None = compute

    def _resolve(self) -> None:
        if self._compute is not None:
            value, self._compute = self._compute(), None
            if value is not None:
                self._known[self._key] = value

    def __getitem__(self, key: str) -> _V:
        if key == self._key:
            self._resolve()
        return self._known[key]

    def __iter__(self) -> Iterator[str]:
        self._resolve()
        return iter(self._known)

    def __len__(self) -> int:
        self._resolve()
        return len(self._known)

    def __reduce__(self) -> tuple[type[dict[str, _V]], tuple[dict[str, _V]]]:
        return dict, (dict(self.items()),)

    def __repr__(self) -> str:
        return repr(dict(self.items()))
