"""`CountStore`: token counts kept across runs, so that a session is tokenized once, not at every
replay, what-if or sweep that reads it again (opt-in: ``TokenCache(counter, store=...)``;
``sweep(cache_dir=...)`` keeps one beside its results).

Counts are keyed by the block's content hash and a namespace naming the counter and ctxlab's
counting rules (`TokenCache.store_namespace`): a count is only ever read back for the same content
counted the same way. The file is SQLite (the standard library's, safe for several processes at
once: a sweep's workers share it). Whatever goes wrong is a `CountStoreError` that says which of
these it is — another application's file, a table of another shape, damaged pages, a read-only
file, a full disk, a file-size limit, an I/O error — or `CountStoreLocked` when another process holds it: wait, do not delete it.
A read-only store is opened for reading. The file is never changed by a failed open.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.exceptions import CountStoreError, CountStoreLocked, UsageError
from ctxlab.messages import MAX_TOKENS
from ctxlab.util._checks import seconds, sequence_of, shown, text_argument
from ctxlab.util._path_args import path_argument
from ctxlab.util._room import no_room

__all__ = ["CountStore"]

_BATCH = 500  # SQLite's bound on the parameters of one statement is 999 (older builds)

# IF NOT EXISTS: another process (a sweep's worker) may create it between the check and this.
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS counts (namespace TEXT NOT NULL, block TEXT NOT NULL,"
    " tokens INTEGER NOT NULL, digest INTEGER, PRIMARY KEY (namespace, block)) WITHOUT ROWID"
)
_FIRST_COLUMNS = [("namespace", "TEXT", 1), ("block", "TEXT", 2), ("tokens", "INTEGER", 0)]
"""(name, type, place in the primary key) of the counts table's columns, in order, as the
first stores had them (no digest: gained on opening, their counts made again as they are met)."""
_COLUMNS = [*_FIRST_COLUMNS, ("digest", "INTEGER", 0)]


def count_digest(namespace: str, block: str, tokens: int) -> int:
    """A row's digest (63 bits of BLAKE2b over its key and count): a count whose bits damage
    changed no longer matches its digest, and is counted again rather than served."""
    data = f"{namespace}\0{block}\0{tokens}".encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big") >> 1


_LOCKED = {"SQLITE_BUSY", "SQLITE_LOCKED"}
_READ_ONLY = {"SQLITE_READONLY", "SQLITE_PERM", "SQLITE_CANTOPEN", "SQLITE_AUTH"}


class CountStore:
    """Token counts on disk, by (namespace, block hash).

    Args:
        path: The SQLite file (created, with its folder, when missing).
        timeout: Seconds to wait for another process that holds the file locked before
            `CountStoreLocked`.
    """

    def __init__(self, path: str | Path, *, timeout: float = 30.0) -> None:
        self.path = path_argument(path, "the count store's path", what="a database file")
        self.timeout = seconds(timeout, "timeout", "e.g. 30")
        self.read_only = False
        """Whether the file could only be opened for reading (counts are read, not written)."""
        self._empty = False  # a read-only file without the table: nothing to read
        if self.path.is_dir():
            msg = f"a count store is a file; {self.path} is a folder (name a file in it)"
            raise CountStoreError(msg)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            msg = (
                f"cannot create the folder of the count store {self.path}: "
                f"{exc.strerror or exc}; name a file in a folder you can write"
            )
            raise CountStoreError(msg) from exc
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout, check_same_thread=False)
        except sqlite3.Error as exc:
            raise self._error(exc, "opening it") from exc
        try:
            self._open()
        except sqlite3.Error as exc:
            self._db.close()
            raise self._error(exc, "opening it") from exc
        except BaseException:
            self._db.close()
            raise

    def _open(self) -> None:
        tables = [
            row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
        ]
        if "counts" in tables:
            self._check_columns()
            return
        if tables:
            msg = (
                f"{self.path} is another application's database (tables: "
                f"{', '.join(sorted(tables)[:5])}), not a ctxlab count store. It was left "
                "untouched; name another file for the counts"
            )
            raise CountStoreError(msg)
        try:
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.Error as exc:
            if _code(exc) not in _READ_ONLY:
                raise
            self._db.rollback()
            self.read_only = self._empty = True
            return
        self._check_columns()  # (the table another process made meanwhile, if one did)

    def _check_columns(self) -> None:
        columns = [
            (r[1], str(r[2]).upper(), r[5]) for r in self._db.execute("PRAGMA table_info(counts)")
        ]
        if columns == _FIRST_COLUMNS:
            self._add_digests()
            return
        if columns != _COLUMNS:
            msg = (
                f"{self.path} is not a ctxlab count store: its 'counts' table has the columns "
                f"{[c[0] for c in columns]}, not {[c[0] for c in _COLUMNS]}. It was left "
                "untouched; name another file for the counts"
            )
            raise CountStoreError(msg)

    def _add_digests(self) -> None:
        """A store of the first shape gains its digest column (its rows have none: each is
        counted again when met, and written with one); read-only, it serves none of them."""
        try:
            self._db.execute("ALTER TABLE counts ADD COLUMN digest INTEGER")
            self._db.commit()
        except sqlite3.OperationalError as exc:
            if "duplicate column" in str(exc):  # another process added it meanwhile
                return
            if _code(exc) not in _READ_ONLY:
                raise
            self._db.rollback()
            self.read_only = self._empty = True

    def _error(self, exc: sqlite3.Error, action: str) -> CountStoreError:
        """``exc`` as what it means for the user: locked, read-only, full, damaged, foreign."""
        code = _code(exc)
        where = f"the count store {self.path} failed while {action}: {exc}"
        if code in _LOCKED:
            msg = (
                f"{where}. Another process holds it locked (for over {self.timeout:g} s): wait "
                "for it to finish or close it, then retry. A locked store is not damaged: do not "
                "delete it"
            )
            return CountStoreLocked(msg)
        if code in _READ_ONLY:
            msg = (
                f"{where}. It cannot be written (a read-only file or folder): make it writable "
                "or name another file; meanwhile its counts are read and new ones are not kept"
            )
        elif (room := no_room(self.path, code)) is not None:
            # A file-size limit, a full disk, another size limit or an I/O error (`_room`).
            msg = f"{where}. {room.cause}: {room.advice[0].lower()}{room.advice[1:]}"
        elif code in ("SQLITE_NOTADB", "SQLITE_CORRUPT"):
            msg = (
                f"{self.path} is not a ctxlab count store, or it is damaged (while {action}: "
                f"{exc}); it was left untouched. Remove it (its counts are made again) or name "
                "another file"
            )
        else:
            msg = f"{where}. Name another file for the counts"
        return CountStoreError(msg)

    def get_many(self, namespace: str, blocks: Sequence[str]) -> dict[str, int]:
        """The stored counts of ``blocks`` (those not stored are absent)."""
        text_argument(namespace, "namespace")
        blocks = sequence_of(blocks, str, "blocks", "a list of block hashes (text)")
        found: dict[str, int] = {}
        if self._empty:
            return found
        asked = set(blocks)
        with self._lock:
            try:
                for start in range(0, len(blocks), _BATCH):
                    chunk = list(blocks[start : start + _BATCH])
                    marks = ",".join("?" * len(chunk))
                    rows = self._db.execute(
                        "SELECT block, tokens, digest FROM counts WHERE namespace = ? AND block"
                        f" IN ({marks})",
                        [namespace, *chunk],
                    ).fetchall()
                    # A count is a whole number from 0 to MAX_TOKENS that matches its digest:
                    # anything else is damage, not trusted (the block is counted again). A
                    # damaged index can lead to a sound row of a block not asked for: left out.
                    found.update(
                        (b, t)
                        for b, t, d in rows
                        if b in asked
                        and isinstance(t, int)
                        and not isinstance(t, bool)
                        and 0 <= t <= MAX_TOKENS
                        and isinstance(b, str)
                        and d == count_digest(namespace, b, t)
                    )
            except sqlite3.Error as exc:
                raise self._error(exc, "reading counts") from exc
        return found

    def put_many(self, namespace: str, counts: Mapping[str, int]) -> None:
        """Store ``counts`` (block hash → tokens). A read-only store raises `CountStoreError`."""
        text_argument(namespace, "namespace")
        if not isinstance(counts, Mapping):
            msg = f"counts must map block hashes to tokens, got {shown(counts)}"
            raise UsageError(msg)
        with self._lock:
            if self.read_only:
                msg = f"the count store {self.path} is read-only: new counts are not kept"
                raise CountStoreError(msg)
            try:
                self._db.executemany(
                    "INSERT OR REPLACE INTO counts (namespace, block, tokens, digest)"
                    " VALUES (?, ?, ?, ?)",
                    [
                        (namespace, block, tokens, count_digest(namespace, block, tokens))
                        for block, tokens in counts.items()
                    ],
                )
                self._db.commit()
            except sqlite3.Error as exc:
                if self._db.in_transaction:
                    self._db.rollback()
                if _code(exc) in _READ_ONLY:
                    self.read_only = True
                raise self._error(exc, "writing counts") from exc

    def __len__(self) -> int:
        if self._empty:
            return 0
        with self._lock:
            try:
                (count,) = self._db.execute("SELECT COUNT(*) FROM counts").fetchone()
            except sqlite3.Error as exc:
                raise self._error(exc, "counting its entries") from exc
        return int(count)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def __reduce__(self) -> tuple[Any, ...]:
        # A sweep sends its cache to Dask workers: each opens the file itself.
        return (_reopen, (self.path, self.timeout))


def _reopen(path: Path, timeout: float) -> CountStore:
    return CountStore(path, timeout=timeout)


def _code(exc: sqlite3.Error) -> str:
    """SQLite's name of the error (``SQLITE_BUSY``), its primary code only."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    # Extended codes (SQLITE_READONLY_DBMOVED, SQLITE_IOERR_WRITE) count as their primary one.
    for primary in (
        *_LOCKED,
        *_READ_ONLY,
        "SQLITE_FULL",
        "SQLITE_IOERR",
        "SQLITE_NOTADB",
        "SQLITE_CORRUPT",
    ):
        if name == primary or name.startswith(primary + "_"):
            return primary
    return name
