"""What the session log's methods take, checked before a query: a `SessionKey`, text SQLite can
store (UTF-8: no lone surrogate), a count of rows it can take — each refused with a `UsageError`
naming the argument (they were an attribute never found, or SQLite's ``UnicodeEncodeError`` and
``OverflowError``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.session._records import SessionKey
from ctxlab.util._checks import shown
from ctxlab.util._checks import text_argument as checked_text

__all__ = ["checked_count", "checked_key", "checked_text", "checked_texts"]

_MAX_ROWS = 2**31 - 1
"""More rows than any log holds; SQLite's integers end at 2**63."""


def checked_key(key: Any) -> SessionKey:
    """``key`` when it is a `SessionKey` of texts SQLite can store."""
    if not isinstance(key, SessionKey):
        msg = (
            "key must be a SessionKey(agent_id, user_id, session_id) (ctxlab.session.SessionKey; "
            f"list a user's sessions with sessions(user_id=...)), got {shown(key)}"
        )
        raise UsageError(msg)
    for name, value in zip(("agent_id", "user_id", "session_id"), key.params(), strict=True):
        checked_text(value, f"key.{name}")
    return key


def checked_texts(values: Any, name: str) -> tuple[str, ...]:
    """``values`` as a tuple of texts (one text alone is refused: it is not a list of them)."""
    if isinstance(values, str | bytes) or not isinstance(values, Sequence):
        msg = f"{name} must be a list of texts, e.g. ['message'], got {shown(values)}"
        raise UsageError(msg)
    for value in values:
        checked_text(value, f"each of {name}")
    return tuple(values)


def checked_count(value: Any, name: str, *, low: int = 1) -> int:
    """``value`` as a whole number of rows from ``low``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= _MAX_ROWS:
        msg = f"{name} must be a whole number from {low} to {_MAX_ROWS:,}, got {shown(value)}"
        raise UsageError(msg)
    return value
