"""`Prefix`: the first items of a shared tuple, read like a tuple of them without a copy.

A session's requests are mostly prefixes of one another — the recorded agent's requests within
a segment, a policy that never compacts. Held as tuples, a session of n requests held its
messages (and their manifest items) about n²/2 times; as views of one tuple, once.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar, overload

__all__ = ["Prefix"]

_T = TypeVar("_T")


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
