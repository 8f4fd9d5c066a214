"""`sessions` on a folder where some files changed reads only the sessions whose inputs changed.

A Claude Code projects folder changes all the time while Claude Code runs (the live session's
file grows at every turn), so the folder's state is never the one its table was kept under
(`ctxlab.io._sessions_cache`): every call would read a thousand files again for one that
grew. Each session's rows are kept too, under its *inputs*: the path, size and modification
time (nanoseconds) of every file they are read from — the session's own file (every file under
it, for a session that is a folder) and what its format reads beside it
(`SessionFormat.reads`: a Claude Code session's ``<session>/subagents/``, a Cline history's
UI log, an OpenHands base state's events, an OpenCode session's messages and their parts). A
session whose inputs are as they were gets its rows back; the others are read. A session one
of whose inputs changed in the last two seconds is not kept (git's "racily clean" files: a
rewrite within its clock's tick keeps the time), so the live session is read at each call.
Kept in memory (the last folders asked) and on disk (`ctxlab.io._sessions_disk`).
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ctxlab.io._sessions_disk import store_rows, stored_rows

__all__ = [
    "SETTLED_NS",
    "UNSETTLED",
    "Inputs",
    "RowsKey",
    "forget_rows",
    "inputs_of",
    "keep_rows",
    "kept_rows",
    "rows_of",
    "scan",
]

Inputs = tuple[tuple[str, int, int], ...]
"""Each input file's (path, size, modified ns), in the order found (a file absent: -1, -1)."""
RowsKey = tuple[str, tuple[str, ...], int]
"""The folder (resolved), the suffixes asked for and the registry's generation."""
Rows = list[dict[str, Any]]

SETTLED_NS = 2_000_000_000
"""How long ago a file must have changed for its size and time to tell a later change."""

UNSETTLED = "unsettled"
"""The key of a row whose read failed for a reason of that read, not of its files (its process
died, the disk refused it): its session's rows are not kept, so the next call reads it again
(the table leaves the key out: it is no column)."""

_KEPT: OrderedDict[RowsKey, dict[str, tuple[Inputs, Rows]]] = OrderedDict()
_MOST = 8
"""Folders whose rows are kept in memory (the most recently asked)."""


def inputs_of(
    sessions: list[Path], beside: Callable[[Path], Iterable[Path]]
) -> dict[Path, Inputs | None]:
    """The inputs of each session (None: one cannot be read, or changed too recently for its
    size and time to tell a later change: its rows are not kept)."""
    settled = time.time_ns() - SETTLED_NS  # (before the files are looked at)
    found: dict[Path, Inputs | None] = {}
    for session in sessions:
        files: list[tuple[str, int, int]] = []
        try:
            scan(str(session), files)
            for other in beside(session):
                scan(str(other), files)
        except OSError:
            found[session] = None
            continue
        recent = any(modified > settled for _, _, modified in files)
        found[session] = None if recent else tuple(files)
    return found


def scan(top: str, files: list[tuple[str, int, int]]) -> None:
    """Add (path, size, modified ns) of every file under ``top`` (or of ``top``, a file; one
    that is not there: size and time -1, so that its coming is a change)."""
    if not os.path.isdir(top):
        try:
            stat = os.stat(top)
        except FileNotFoundError:
            files.append((top, -1, -1))
        else:
            files.append((top, stat.st_size, stat.st_mtime_ns))
        return
    folders = [top]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    # Hidden folders are not read by `sessions`; a link to a folder is not
                    # followed (nor by its listing: a link to a parent would never end).
                    if not entry.name.startswith("."):
                        folders.append(entry.path)
                elif entry.is_file(follow_symlinks=True):
                    stat = entry.stat(follow_symlinks=True)
                    files.append((entry.path, stat.st_size, stat.st_mtime_ns))


def rows_of(
    sessions: list[Path],
    key: RowsKey,
    beside: Callable[[Path], Iterable[Path]],
    read: Callable[[list[Path]], list[Rows]],
) -> Rows:
    """The rows of ``sessions``, in order: those of a session whose inputs are as when its rows
    were kept, kept; the others ``read`` (each session's rows, in the order given)."""
    inputs = inputs_of(sessions, beside)
    before = kept_rows(key)
    by_file: dict[Path, Rows] = {}
    for path in sessions:
        old = before.get(str(path))
        if old is not None and inputs[path] is not None and old[0] == inputs[path]:
            by_file[path] = old[1]
    unread = [path for path in sessions if path not in by_file]
    by_file.update(zip(unread, read(unread), strict=True))
    keep_rows(
        key,
        {
            str(p): (found, by_file[p])
            for p, found in inputs.items()
            if found is not None and not any(row.get(UNSETTLED) for row in by_file[p])
        },
    )
    return [row for path in sessions for row in by_file[path]]


def kept_rows(key: RowsKey) -> dict[str, tuple[Inputs, Rows]]:
    """The rows kept for the folder of ``key``, by session path, with their inputs."""
    if key not in _KEPT:
        on_disk = stored_rows(key)  # kept by an earlier process
        if on_disk is None:
            return {}
        _remember(key, on_disk)
    _KEPT.move_to_end(key)
    return _KEPT[key]


def keep_rows(key: RowsKey, rows: dict[str, tuple[Inputs, Rows]]) -> None:
    """Keep ``rows`` (by session path, with their inputs) as the folder's, in memory and on
    disk (replacing what was kept: a session gone is not kept)."""
    _remember(key, rows)
    store_rows(key, rows)


def _remember(key: RowsKey, rows: dict[str, tuple[Inputs, Rows]]) -> None:
    _KEPT[key] = rows
    _KEPT.move_to_end(key)
    while len(_KEPT) > _MOST:
        _KEPT.popitem(last=False)


def forget_rows() -> None:
    """Drop every folder's rows kept in memory (`ctxlab.io._sessions_cache.forget` drops
    those on disk)."""
    _KEPT.clear()
