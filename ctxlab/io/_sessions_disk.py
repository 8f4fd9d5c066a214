"""`sessions`' kept tables on disk: a folder asked for again from a new process (a notebook's
kernel restarted, a script run again) is answered without reading a file while nothing under it
changed.

So are its rows by file (`ctxlab.io._sessions_rows`): a new process asked for a folder where
some files changed reads only those. A table is kept under the folder's state (`ctxlab.io._sessions_cache`: the path, size and
modification time of every file under it), with what else decides its rows: the names of the
registered formats, the size and modification time of each of ctxlab's modules (its version's
among them: an edited reader reads otherwise; a process whose ctxlab changed on disk since it
imported it keeps nothing), pandas' and Python's versions (a pickle is theirs). A process that registered a format of its own (`ctxlab.register_format`, a plugin's
entry point) keeps nothing on disk: its formats' code is not known by a name. The tables live
in ``$CTXLAB_SESSIONS_CACHE`` (a folder; ``off`` keeps nothing on disk), else
``$XDG_CACHE_HOME/ctxlab/sessions``, else ``~/.cache/ctxlab/sessions``: the 16 last written
(and the rows of the 16 folders last read). A
table that cannot be written or read back (a read-only home, a file damaged) costs only the
time to read the folder again; a table another user wrote is not read (a pickle runs code), nor
a link in a table's place.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import platform
import stat
import tempfile
import time
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["drop_all", "store", "store_rows", "stored", "stored_rows"]

_MOST = 16
"""Tables kept on disk (the last written), and as many folders' rows by file."""
_SUFFIX = ".sessions.pkl"
_ROWS_SUFFIX = ".rows.pkl"


def folder() -> Path | None:
    """Where the tables are kept (None: nothing is kept on disk)."""
    given = os.environ.get("CTXLAB_SESSIONS_CACHE")
    if given is not None:
        return None if given.strip().lower() in ("", "off", "0", "no") else Path(given)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ctxlab" / "sessions"


def _name(key: Any, suffix: str = _SUFFIX) -> str | None:
    # The file of what is kept under ``key`` (a state's table: its folder, suffixes and files;
    # a folder's rows: its folder and suffixes); None when this process's formats are not all
    # ctxlab's own, or its code may not be what is on disk.
    # (Imported here: the registry's formats import io's machinery, which imports this one.)
    from ctxlab.io._registry import added_here, formats

    code = _code()
    if added_here() or code is None:
        return None
    names = tuple(f.name for f in formats())  # (one of ctxlab's removed: read otherwise)
    named = repr((key, names, code))
    return hashlib.sha256(named.encode("utf-8", "surrogatepass")).hexdigest()[:32] + suffix


def _table_key(state: Any) -> Any:
    # A state but for the registry's generation (a count of this process's registrations).
    return (state[0], state[1], state[3])


_IMPORTED_NS = time.time_ns()
"""When ctxlab was imported (this module is, with ``import ctxlab``)."""


@cache
def _code() -> tuple[Any, ...] | None:
    # What decides the rows besides the files: ctxlab's code (its version among its modules),
    # pandas and Python — once a process. None when a module changed since ctxlab was imported
    # (edited, or another version installed): the code on disk may not be the code this
    # process runs, and its table would be kept under the other's name.
    # (pandas imported here, as `sessions` does: ``import ctxlab`` does not load it.)
    import pandas

    root = Path(__file__).parents[1]
    modules = []
    for path in sorted(root.rglob("*.py")):
        found = path.stat()
        if found.st_mtime_ns > _IMPORTED_NS:
            return None
        modules.append((str(path.relative_to(root)), found.st_size, found.st_mtime_ns))
    return (pandas.__version__, platform.python_version(), tuple(modules))


def stored(state: Any) -> pd.DataFrame | None:
    """The table kept on disk for ``state``, None when there is none (or it cannot be read)."""
    # (pandas imported here, as `sessions` does: ``import ctxlab`` does not load it.)
    import pandas as pd

    frame = _read(_name(_table_key(state)))
    return frame if isinstance(frame, pd.DataFrame) else None


def stored_rows(key: Any) -> dict[str, Any] | None:
    """The rows by file kept on disk for ``key`` (`ctxlab.io._sessions_rows`), None when there
    are none (or they cannot be read)."""
    kept = _read(_name(key[:2], _ROWS_SUFFIX))
    return kept if isinstance(kept, dict) else None


def _read(name: str | None) -> Any:
    # What is kept in the file ``name`` of the folder (None: nothing, or it cannot be read).
    # (pandas imported here, as `sessions` does: ``import ctxlab`` does not load it.)
    import pandas as pd

    where = folder()
    if where is None or name is None:
        return None
    try:
        # The file itself, not one a link points to (one planted in a cache folder others may
        # write): opened once, then asked who owns it, so what is read is what was asked.
        with open(where / name, "rb", opener=_no_link) as handle:
            if not _own(handle.fileno()):
                return None  # a pickle runs code when read: only one this user wrote is read
            return pd.read_pickle(handle)
    except OSError:  # none kept, a link, or the disk failing: read the folder again
        return None
    except Exception:  # damaged, or written by another pandas: read the folder again
        _remove(where / name)
        return None


def _no_link(path: str, flags: int) -> int:
    # Not through a link; nor waiting on a pipe named as a table (a regular file is never
    # waited on: `_own` then refuses what is not one).
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))


def _own(descriptor: int) -> bool:
    # A regular file written by this user (where the system says who owns a file).
    getuid = getattr(os, "getuid", None)
    try:
        found = os.fstat(descriptor)
    except OSError:
        return False
    return stat.S_ISREG(found.st_mode) and (getuid is None or found.st_uid == getuid())


def store(state: Any, frame: pd.DataFrame) -> None:
    """Keep ``frame`` on disk as the table of ``state`` (nothing when it cannot be written)."""
    _write(_name(_table_key(state)), frame, _SUFFIX)


def store_rows(key: Any, rows: dict[str, Any]) -> None:
    """Keep a folder's rows by file on disk under ``key`` (nothing when it cannot be
    written)."""
    _write(_name(key[:2], _ROWS_SUFFIX), rows, _ROWS_SUFFIX)


def _write(name: str | None, value: Any, suffix: str) -> None:
    # ``value`` in the file ``name`` (pickled: pandas reads it back).
    where = folder()
    if where is None or name is None:
        return
    try:
        where.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=where, suffix=".part")
        os.close(handle)
    except OSError:  # a read-only home: nothing kept
        return
    try:
        # Written whole, then named: a process reading meanwhile never sees half a table.
        _dump(value, temporary)
        os.replace(temporary, where / name)
    except BaseException as exc:  # a disk full, a value pickle refuses, an interrupt
        _remove(Path(temporary))  # (nothing else removes a temporary file: none is left)
        if not isinstance(exc, Exception):
            raise
        return
    _prune(where, suffix)


def _dump(value: Any, path: str) -> None:
    # As `pandas.DataFrame.to_pickle` writes a table (uncompressed, the highest protocol).
    with open(path, "wb") as handle:
        pickle.dump(value, handle, protocol=pickle.HIGHEST_PROTOCOL)


def _prune(where: Path, suffix: str) -> None:
    try:
        tables = sorted(where.glob("*" + suffix), key=lambda p: p.stat().st_mtime_ns)
    except OSError:
        return
    for old in tables[:-_MOST]:
        _remove(old)


def drop_all() -> None:
    """Remove every table kept on disk."""
    where = folder()
    if where is not None and where.is_dir():
        for suffix in (_SUFFIX, _ROWS_SUFFIX):
            for path in where.glob("*" + suffix):
                _remove(path)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # gone already, or not ours to remove: left as it is
        path.unlink()
