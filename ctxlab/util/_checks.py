"""Checks of the numbers users pass to the public entry points (windows, prices), each raising a
`UsageError` that names the argument, the value and what it should be — instead of a bare
`TypeError` deep inside, or a replay at a window nobody asked for."""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.exceptions import UsageError

__all__ = [
    "context_window",
    "finite",
    "instance_of",
    "price_number",
    "seconds",
    "sequence_of",
    "shown",
    "text_argument",
    "whole_number",
    "windows_of",
]

MAX_WINDOW = 100_000_000
"""Far above any model's window: a larger one is a typo (or tokens where characters were meant)."""


def shown(value: Any) -> str:
    """``value`` as an error message can quote it: a huge number or text by its size (the repr
    of an int of over 4,300 digits raises), any other repr cut at 80 characters (a hostile
    value may be megabytes)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"a number of {value.bit_length():,} bits"
    if isinstance(value, str) and len(value) > 40:
        return repr(value[:40]) + f"… ({len(value):,} characters)"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def context_window(value: Any, name: str = "context_window") -> int:
    """``value`` as a context window in tokens: a whole number from 1 to `MAX_WINDOW`."""
    given = value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_WINDOW:
        msg = (
            f"{name} must be a whole number of tokens from 1 to {MAX_WINDOW:,} (e.g. 200000), "
            f"got {shown(given)}"
        )
        raise UsageError(msg)
    return value


def whole_number(value: Any, name: str, *, low: int = 0, high: int = MAX_WINDOW) -> int:
    """``value`` as a whole number from ``low`` to ``high`` (a whole float is taken, and numpy's
    integers; a bool, NaN, text or a number out of range is a `UsageError` naming ``name``)."""
    given = value
    if isinstance(value, float) and finite(value) and value.is_integer():
        value = int(value)
    elif not isinstance(value, bool | int) and hasattr(value, "__index__"):
        value = operator.index(value)  # numpy's int64, read from a frame
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        msg = f"{name} must be a whole number from {low:,} to {high:,}, got {shown(given)}"
        raise UsageError(msg)
    return value


def text_argument(value: Any, name: str, *, optional: bool = False) -> None:
    """`UsageError` unless ``value`` is text that can be written as UTF-8 — a file, SQLite —
    (or None, when ``optional``): no lone surrogate."""
    if value is None and optional:
        return
    if not isinstance(value, str):
        msg = f"{name} must be text{' or None' if optional else ''}, got {shown(value)}"
        raise UsageError(msg)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        msg = f"{name} {shown(value)} holds a lone surrogate, which no UTF-8 text can hold"
        raise UsageError(msg) from None


def seconds(value: Any, name: str, example: str = "e.g. 0.5") -> float:
    """``value`` as a duration: a finite number of seconds above 0 (NaN would wait never,
    infinity forever, 0 or less not at all)."""
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not (number and finite(value) and value > 0):
        msg = f"{name} must be a positive, finite number of seconds ({example}), got {shown(value)}"
        raise UsageError(msg)
    return float(value)


def instance_of(value: Any, kind: type | tuple[type, ...], name: str, example: str) -> None:
    """`UsageError` unless ``value`` is an instance of ``kind`` (a class given for its instance
    is not): ``{name} must be {example}, got …``."""
    if isinstance(value, type) or not isinstance(value, kind):
        msg = f"{name} must be {example}, got {shown(value)}"
        raise UsageError(msg)


def sequence_of(
    value: Any, kind: type | tuple[type, ...], name: str, example: str
) -> tuple[Any, ...]:
    """``value`` as a tuple of instances of ``kind``: any iterable (a list, a tuple, a
    generator) but text, bytes or a mapping, each item checked; a `UsageError` saying which
    item is not, otherwise."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        msg = f"{name} must be {example}, got {shown(value)}"
        raise UsageError(msg)
    items = tuple(value)
    for number, item in enumerate(items):
        if isinstance(item, type) or not isinstance(item, kind):
            msg = f"{name} must be {example}; its item {number} is {shown(item)}"
            raise UsageError(msg)
    return items


def windows_of(value: Any, name: str = "windows") -> tuple[int, ...]:
    """A sequence of context windows (one window alone is taken as one), each checked."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (context_window(value, name),)
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        msg = (
            f"{name} must be a list of context windows in tokens (e.g. [32000, 200000]), got "
            f"{shown(value)}"
        )
        raise UsageError(msg)
    found = tuple(context_window(v, f"each of {name}") for v in value)
    if not found:
        msg = f"{name} is empty: give at least one context window (e.g. [32000])"
        raise UsageError(msg)
    return found


def price_number(value: Any, name: str) -> float:
    """``value`` as a price in USD per million tokens: a finite number from 0."""
    number = not isinstance(value, bool) and isinstance(value, int | float)
    if not (number and finite(value) and value >= 0):
        msg = (
            f"{name} must be a price in USD per million tokens, a number from 0, got {shown(value)}"
        )
        raise UsageError(msg)
    return float(value)


def finite(value: float) -> bool:
    """Whether ``value`` is a finite number (an int past a float's range is not)."""
    try:
        return math.isfinite(value)
    except OverflowError:  # an int of more digits than a float holds
        return False
