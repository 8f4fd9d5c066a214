"""The base of ctxlab's frozen pydantic models whose cached properties derive from their fields."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Self, TypeVar

from pydantic import BaseModel, ConfigDict

from ctxlab.exceptions import UsageError
from ctxlab.util._checks import shown

__all__ = ["Frozen", "derived"]

_T = TypeVar("_T")


class derived(cached_property[_T]):
    """A `functools.cached_property` without the lock Python 3.11 takes on every first read.

    The value derives from frozen fields, so two threads computing it at once compute the same
    value: the lock buys nothing, and on the hashes and rendered forms of a session's every
    block and message it costs about as much as reading them (a replay reads tens of thousands).
    """

    if not TYPE_CHECKING:  # the type checker reads cached_property's own typed __get__

        def __get__(self, instance, owner=None):
            if instance is None:
                return self
            value = self.func(instance)
            instance.__dict__[self.attrname] = value
            return value


class Frozen(BaseModel):
    """A frozen model whose `cached_property` values (hashes, rendered forms) derive from its
    fields: a copy with ``update`` starts without them. pydantic's ``model_copy`` copies the
    instance ``__dict__`` whole, where they are kept — a copied block would carry the old
    content's hash, which keys token counts."""

    # A `derived` value is not a field (pydantic knows cached_property, not its subclasses).
    model_config = ConfigDict(ignored_types=(derived,))

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy; with ``update``, the cached values of the old fields are dropped (they are
        computed again when read)."""
        if update is not None and not isinstance(update, Mapping):
            msg = f"update must map field names to new values, got {shown(update)}"
            raise UsageError(msg)
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
