"""The recording's clock: a file's timestamp read as POSIX seconds (UTC), or no time at all.

Every importer hands its format's timestamp to `ConversationBuilder.reply_time` with the unit
the tool writes (read from its source: ISO 8601 text, or epoch seconds, milliseconds,
microseconds or nanoseconds), and this module decides what is a time. The rule (docs/errors.md):

- text is ISO 8601 (``datetime.fromisoformat``: a ``Z`` or an offset, fractions of any
  length); text without a zone is read as UTC — gaps between replies are right, the hour of
  day may be off by the recorder's offset;
- a number is in the format's unit (none for a format that writes text: then a number is no
  time); a bool, NaN, an infinity, a negative number or one past the year 9999 is no time;
- whatever cannot be read is no time for that reply only (the others keep theirs); a time out
  of order, equal to another or in the future is kept as recorded — what a gap is, the cost
  model's clock decides (it never makes a negative one).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any, Literal

__all__ = ["TimeUnit", "posix_seconds"]

TimeUnit = Literal["iso", "s", "ms", "us", "ns"]
"""How a format writes its timestamps: ``"iso"`` ISO 8601 text only (a number there is no
time: its unit is unknown), or the unit of a number (text is still read as ISO 8601)."""

_PER_SECOND: dict[str, float] = {"s": 1.0, "ms": 1e3, "us": 1e6, "ns": 1e9}

_LAST = datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC).timestamp()
"""The latest time a `datetime` holds: a number past it is damage, not a date."""

_LONGEST_TEXT = 64
"""ISO 8601 text is short; anything longer is not a timestamp (and is not parsed)."""


def posix_seconds(value: Any, unit: TimeUnit = "iso") -> float | None:
    """``value`` as POSIX seconds (UTC): ISO 8601 text, or a number in ``unit``; None when it
    is no time (missing, unparseable, negative, NaN, infinite, past the year 9999, a number
    where the format writes text)."""
    if isinstance(value, str):
        return _iso(value)
    if unit == "iso" or isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        seconds = value / _PER_SECOND[unit]
    except OverflowError:  # an int too large for a float
        return None
    if not math.isfinite(seconds) or not 0 <= seconds <= _LAST:
        return None
    return float(seconds)


def _iso(text: str) -> float | None:
    if not text or len(text) > _LONGEST_TEXT:
        return None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        seconds = moment.timestamp()
    except (OverflowError, ValueError):  # an offset that moves it past the year 1 or 9999
        return None
    return seconds if 0 <= seconds <= _LAST else None
