"""`filled`: a frozen dataclass's instance made from all its field values, without ``__init__``.

A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (its own
``__setattr__`` refuses): about 0.15 µs a field. The records a preparation makes at every step
(a manifest of 17 fields, the request, the step) then cost more to build than to fill. For a
dataclass without ``__post_init__`` and without slots, ``__init__`` does nothing but set the
fields in its ``__dict__``: a dict of every field's value, set as the instance's ``__dict__``,
is the same instance (equal, the same ``vars``), made in one step. Every caller passes every
field (``tests/util/test_records.py`` checks each site against the class's own ``__init__``).
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["filled"]

_T = TypeVar("_T")

_new = object.__new__
_set = object.__setattr__


def filled(cls: type[_T], values: dict[str, Any]) -> _T:
    """An instance of ``cls`` (a frozen dataclass without slots or ``__post_init__``) holding
    ``values``, which names every field (defaults included) and nothing else; ``values``
    becomes its ``__dict__`` (pass a dict no one else holds)."""
    made = _new(cls)
    _set(made, "__dict__", values)
    return made
