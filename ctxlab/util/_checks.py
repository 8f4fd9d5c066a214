"""Checks of the numbers users pass to the public entry points (windows, prices), each raising a
`UsageError` that names the argument, the value and what it should be — instead of a bare
`TypeError` deep inside, or a replay at a window nobody asked for."""

from __future__ import annotations

import math
from typing import Any

from ctxlab.exceptions import UsageError

__all__ = ["context_window", "price_number", "shown", "windows_of"]

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
            f"got {given!r}"
        )
        raise UsageError(msg)
    return value


def windows_of(value: Any, name: str = "windows") -> tuple[int, ...]:
    """A sequence of context windows (one window alone is taken as one), each checked."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (context_window(value, name),)
    if isinstance(value, str | bytes) or not hasattr(value, "__iter__"):
        msg = f"{name} must be a list of context windows in tokens (e.g. [32000, 200000]), got {value!r}"
        raise UsageError(msg)
    found = tuple(context_window(v, f"each of {name}") for v in value)
    if not found:
        msg = f"{name} is empty: give at least one context window (e.g. [32000])"
        raise UsageError(msg)
    return found


def price_number(value: Any, name: str) -> float:
    """``value`` as a price in USD per million tokens: a finite number from 0."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value < 0
    ):
        msg = f"{name} must be a price in USD per million tokens, a number from 0, got {value!r}"
        raise UsageError(msg)
    return float(value)
