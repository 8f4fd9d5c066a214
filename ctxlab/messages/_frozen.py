"""The base of ctxlab's frozen pydantic models whose cached properties derive from their fields."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import Any, Self

from pydantic import BaseModel

__all__ = ["Frozen"]


class Frozen(BaseModel):
    """A frozen model whose `cached_property` values (hashes, rendered forms) derive from its
    fields: a copy with ``update`` starts without them. pydantic's ``model_copy`` copies the
    instance ``__dict__`` whole, where they are kept — a copied block would carry the old
    content's hash, which keys token counts."""

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update``, the cached values of the old fields are dropped (they are
        computed again when read)."""
        copy = super().model_copy(update=update, deep=deep)
        if update:
            for name in _cached(type(self)):
                copy.__dict__.pop(name, None)
        return copy


@cache
def _cached(cls: type) -> tuple[str, ...]:
    # The names of a class's cached properties, its bases' included.
    return tuple(
        name
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if isinstance(value, cached_property)
    )
