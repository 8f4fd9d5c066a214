"""Why a SQLite file could not grow: the process's file-size limit, a full disk, another size
limit, or the disk's own I/O error — each a different thing to do.

SQLite reports them by two codes only, and not the system's error: a write refused at the
process's file-size limit (``EFBIG``: ``ulimit -f``, ``RLIMIT_FSIZE``) is ``SQLITE_IOERR_WRITE``
"disk I/O error", or ``SQLITE_FULL`` "database or disk is full" when the write got part way
(``os_unix.c``, ``unixWrite``: only ``ENOSPC`` or a short write is "full"). Advice read off the
code alone told a user at a file-size limit to check a healthy disk. What tells them apart is read
after the failure: the limit and the file's size, and the room left on its disk.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

try:
    import resource
except ImportError:  # (Windows: no such limit)
    resource = None  # type: ignore[assignment]

__all__ = ["FULL_BELOW", "NEAR_LIMIT", "Room", "no_room"]

NEAR_LIMIT = 1 << 20
"""How near the file-size limit a file of the database (or its journal) must be for the limit to
be the cause: SQLite writes a page (at most 64 KiB) at a time, so a refused write leaves the file
within a page of it; a megabyte is generous."""

FULL_BELOW = 64 << 20
"""Below this much room left (for this user), a disk counts as full: a failed commit leaves its
written frames in the journal, so a disk that filled has next to nothing left."""


class Room(NamedTuple):
    """What stopped a write, in words: ``cause`` (what happened) and ``advice`` (what to do)."""

    kind: str
    """``"file_size_limit"``, ``"disk_full"``, ``"size_limit"`` or ``"io_error"``."""
    cause: str
    advice: str


def no_room(path: Path, code: str) -> Room | None:
    """For a SQLite file at ``path`` that failed with ``code`` (``SQLITE_FULL`` or
    ``SQLITE_IOERR``: SQLite's primary name), which of the four stopped it; None for any other
    code."""
    if code not in ("SQLITE_FULL", "SQLITE_IOERR"):
        return None
    limit = file_size_limit()
    largest = max((_size(p) for p in _files(path)), default=0)
    if limit is not None and largest + NEAR_LIMIT >= limit:
        return Room(
            "file_size_limit",
            f"The file reached this process's file-size limit ({limit:,} bytes: RLIMIT_FSIZE, "
            "as `ulimit -f` sets it) — not a full disk, not a disk error",
            "Raise the limit (`ulimit -f unlimited` in the shell that starts Python) or use "
            "another file",
        )
    free = free_bytes(path.parent)
    if free is not None and free < FULL_BELOW:
        return Room("disk_full", f"The disk is full ({free:,} bytes free)", "Free some space")
    room = f", though its disk has {free:,} bytes free" if free is not None else ""
    if code == "SQLITE_FULL":
        return Room(
            "size_limit",
            f"SQLite found no room to write{room}: the file reached a size limit — a quota, the "
            "largest file its file system takes, or SQLite's max_page_count — not a full disk",
            "Raise that limit or use another file",
        )
    return Room("io_error", f"The disk reported an I/O error{room}", "Check the disk (or a quota)")


def file_size_limit() -> int | None:
    """The process's limit on the size of a file it writes (bytes), None when unlimited."""
    if resource is None:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


def free_bytes(folder: Path) -> int | None:
    """Room left on ``folder``'s disk for this process: root may use the blocks reserved for it,
    a user may not (None where the system does not say)."""
    try:
        stats = os.statvfs(folder)
    except (OSError, AttributeError):
        return None
    blocks = stats.f_bfree if os.geteuid() == 0 else stats.f_bavail
    return int(blocks * stats.f_frsize)


def _files(path: Path) -> list[Path]:
    # The database and the journals SQLite writes beside it.
    return [path, *(path.with_name(path.name + s) for s in ("-wal", "-journal"))]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
