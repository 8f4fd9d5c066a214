"""`sessions` called again on a folder that has not changed answers from memory (or, from a new
process, from disk: `ctxlab.io._sessions_disk`).

A folder of a thousand sessions takes tens of seconds to read (every file decoded, read by its
format and walked for its census); a notebook asks for it again and again (a cell re-run, a
filter changed upstream). The answer is kept, in this process, with the folder's *state*: the
path, size and modification time (nanoseconds) of every file under it, hidden folders aside as
`sessions` sets them aside. A call whose folder is in the same state gets a copy of the kept
table; any file added, removed, grown or touched anywhere under it — a session's own file, a
part of it beside it (a Cline task's, OpenCode's storage), a subagent's — and the table is not
the answer: the folder is listed again, and only the sessions whose own inputs changed are read
(`ctxlab.io._sessions_rows` keeps each session's rows under the files they are read from). What a session reads outside the folder (a folder asked for is OpenCode's
``storage/session``, whose messages and parts lie in folders beside it) or in a hidden folder
of it is in the state too, as its format names it (`SessionFormat.reads`). A folder where a
file changed in the last two seconds is not kept: a file rewritten at its size within one tick
of its file system's clock (a second on some, two on FAT) keeps its modification time, and the
state would not tell the second write from the first (git's "racily clean" files).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ctxlab.io._sessions_disk import drop_all, store, stored
from ctxlab.io._sessions_rows import SETTLED_NS, forget_rows, scan

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["forget", "keep", "kept", "state_of"]

State = tuple[str, tuple[str, ...], int, tuple[tuple[str, int, int], ...]]
"""The folder, the suffixes asked for, the registry's generation (a format registered since
reads the folder otherwise), and each file's (path, size, modified ns), sorted."""

_KEPT: OrderedDict[State, pd.DataFrame] = OrderedDict()
_MOST = 8
"""Folders kept (the most recently asked)."""


def state_of(
    root: Path,
    suffixes: tuple[str, ...],
    formats: int,
    beside: Callable[[Path], Iterable[Path]] = lambda _: (),
) -> State | None:
    """The folder's state (None when a part of it cannot be read, or a file changed too
    recently to tell a change of the same size within its clock's tick: then nothing is kept).
    ``beside`` names what reading a session file looks at besides the file
    (`ctxlab.io._listing.read_beside`): what of it lies outside the folder is in the state too.
    """
    settled = time.time_ns() - SETTLED_NS  # (before the listing: the files are read after it)
    files: list[tuple[str, int, int]] = []
    try:
        scan(str(root), files)
        for outside in _outside(root, suffixes, files, beside):
            scan(outside, files)
    except OSError:
        return None
    if any(modified > settled for _, _, modified in files):
        return None
    return (str(root.resolve()), suffixes, formats, tuple(sorted(files)))


def _outside(
    root: Path,
    suffixes: tuple[str, ...],
    files: list[tuple[str, int, int]],
    beside: Callable[[Path], Iterable[Path]],
) -> list[str]:
    """What the sessions among ``files`` read that the walk of ``root`` does not see — outside
    it, or in a hidden folder of it —, each once (a storage's shared folder is named by each of
    its sessions)."""
    named: set[str] = set()
    for path, _, _ in files:
        if path.lower().endswith(suffixes):
            named.update(str(p) for p in beside(Path(path)) if not _walked(Path(p), root))
    return sorted(named)


def _walked(path: Path, root: Path) -> bool:
    """Whether the walk of ``root`` sees ``path``: under it, in no hidden folder (a hidden file
    named here is walked again: the same entry twice, harmless)."""
    return path.is_relative_to(root) and not any(
        part.startswith(".") for part in path.relative_to(root).parts
    )


def kept(state: State | None) -> pd.DataFrame | None:
    """A copy of the table kept for ``state``, None when there is none."""
    if state is None:
        return None
    if state not in _KEPT:
        on_disk = stored(state)  # kept by an earlier process
        if on_disk is None:
            return None
        _remember(state, on_disk)
    _KEPT.move_to_end(state)
    return _KEPT[state].copy()


def keep(state: State | None, frame: pd.DataFrame) -> None:
    """Keep a copy of ``frame`` as the table of ``state``."""
    if state is None:
        return
    _remember(state, frame.copy())
    store(state, frame)


def _remember(state: State, frame: pd.DataFrame) -> None:
    _KEPT[state] = frame
    _KEPT.move_to_end(state)
    while len(_KEPT) > _MOST:
        _KEPT.popitem(last=False)


def forget() -> None:
    """Drop every kept table and every folder's rows, in memory and on disk."""
    _KEPT.clear()
    forget_rows()
    drop_all()
