"""Every SQLite failure of the session log as a `SessionLogError` naming the file, what was being
done, and what the failure means: locked by another process, read-only, a full disk, a file-size
limit, an I/O error, damage — each with its own advice (a full disk is not damage, a file-size
limit not a failing disk, and a locked log is not to be restored)."""

from __future__ import annotations

import functools
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ctxlab.exceptions import SessionLogError
from ctxlab.util._room import no_room

if TYPE_CHECKING:
    from pathlib import Path

    from ctxlab.session._log import SessionLog

__all__ = ["_BUSY", "_typed_errors", "error_code"]

F = TypeVar("F", bound=Callable[..., Any])

_BUSY = frozenset({"SQLITE_BUSY", "SQLITE_LOCKED"})
_PRIMARY = (
    "SQLITE_BUSY",
    "SQLITE_LOCKED",
    "SQLITE_READONLY",
    "SQLITE_PERM",
    "SQLITE_CANTOPEN",
    "SQLITE_FULL",
    "SQLITE_IOERR",
    "SQLITE_CORRUPT",
    "SQLITE_NOTADB",
)


def error_code(exc: sqlite3.Error) -> str:
    """SQLite's primary error name of ``exc`` (``SQLITE_IOERR_WRITE`` is ``SQLITE_IOERR``)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return next((p for p in _PRIMARY if name == p or name.startswith(p + "_")), name)


def _hint(exc: sqlite3.Error, path: Path) -> str:
    code = error_code(exc)
    room = no_room(path, code)
    if room is not None:
        # Which of a file-size limit, a full disk, another size limit, an I/O error: the code
        # alone does not say (`ctxlab.util._room`).
        return (
            f"{room.cause}; nothing of this was written and the log is as it was. "
            f"{room.advice}, then retry"
        )
    if code in _BUSY:
        return (
            "Another process holds it locked: wait for it to finish, or close the other "
            "writer, then retry; the log is not damaged"
        )
    if code in ("SQLITE_READONLY", "SQLITE_PERM", "SQLITE_CANTOPEN"):
        return (
            "It cannot be written (a read-only file or folder); nothing was written. Make it "
            "writable, or point the session log at another file"
        )
    if code in ("SQLITE_CORRUPT", "SQLITE_NOTADB"):
        return (
            "The file is damaged; it was left as it is: point the session log at another "
            "file, or restore this one from a backup"
        )
    return "Nothing of this was written; the file was left as it is"


def _typed_errors(action: str) -> Callable[[F], F]:
    """Every SQLite failure of a method surfaces as `SessionLogError` naming the file, what was
    being done and what to do; the caller never sees a raw ``sqlite3`` error."""

    def wrap(method: F) -> F:
        @functools.wraps(method)
        def guarded(self: SessionLog, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except sqlite3.Error as exc:
                msg = f"the session log {self.path} failed while {action}: {exc}. {_hint(exc, self.path)}"
                raise SessionLogError(msg) from exc

        return guarded  # type: ignore[return-value]

    return wrap
