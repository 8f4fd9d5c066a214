"""Every SQLite failure of the session log as a `SessionLogError` naming the file."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ctxlab.exceptions import SessionLogError

if TYPE_CHECKING:
    from ctxlab.session._log import SessionLog

__all__ = ["_typed_errors"]

F = TypeVar("F", bound=Callable[..., Any])


def _typed_errors(action: str) -> Callable[[F], F]:
    """Every SQLite failure of a method surfaces as `SessionLogError` naming the file, what was
    being done and what to do; the caller never sees a raw ``sqlite3`` error."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def guarded(self: SessionLog, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                hint = (
                    "another process holds it locked; retry, or close the other writer"
                    if "locked" in str(exc) or "busy" in str(exc)
                    else "the file may be damaged; it was left as it is: point the session log "
                    "at another file, or restore this one from a backup"
                )
                msg = f"the session log {self.path} failed while {action}: {exc}. {hint}"
                raise SessionLogError(msg) from exc

        return guarded  # type: ignore[return-value]

    return wrap
