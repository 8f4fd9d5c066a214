"""The session log's file: opening it (created when absent, or read-only where it cannot be
written), checking it is a ctxlab log of this schema (another application's database, a damaged
file or another version is refused and never written to), and its write transactions. Two
processes opening one new log at once both succeed; every SQLite failure is a typed error."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from ctxlab.exceptions import SessionLogError
from ctxlab.session._errors import _BUSY, _typed_errors, error_code
from ctxlab.util._path_args import path_argument

__all__ = ["SCHEMA_NAME", "SCHEMA_VERSION", "LogFile"]

SCHEMA_NAME = "ctxlab-session-log"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE sessions (
    agent_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    created_at REAL NOT NULL, updated_at REAL NOT NULL, turns INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent_id, user_id, session_id)
);
CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    agent_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    turn INTEGER NOT NULL, kind TEXT NOT NULL, payload TEXT NOT NULL, created_at REAL NOT NULL
);
CREATE INDEX events_by_session ON events (agent_id, user_id, session_id, turn);
CREATE TABLE turns (
    agent_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    turn INTEGER NOT NULL, events INTEGER NOT NULL, committed_at REAL NOT NULL,
    PRIMARY KEY (agent_id, user_id, session_id, turn)
);
CREATE TABLE checkpoints (
    agent_id TEXT NOT NULL, user_id TEXT NOT NULL, session_id TEXT NOT NULL,
    turn INTEGER NOT NULL, state TEXT NOT NULL, task TEXT NOT NULL,
    PRIMARY KEY (agent_id, user_id, session_id, turn)
);
CREATE VIRTUAL TABLE messages_fts USING fts5 (
    text, role UNINDEXED, agent_id UNINDEXED, user_id UNINDEXED, session_id UNINDEXED,
    turn UNINDEXED, seq UNINDEXED
);
"""
_TABLES = {"meta", "sessions", "events", "turns", "checkpoints", "messages_fts"}
_WAIT = 30.0
"""Seconds the log waits for another process that holds it locked."""


class LogFile:
    """A session log's SQLite file, opened and checked (`SessionLog` adds what it holds)."""

    def __init__(self, path: str | Path) -> None:
        self.path = path_argument(path, "the session log's path", what="a database file")
        self._lock = threading.Lock()
        self.read_only = False
        """Whether the log could only be opened for reading (a read-only file or folder):
        its sessions are read, and committing a turn is a `SessionLogError` saying so."""
        if self.path.is_dir():
            msg = f"{self.path} is a folder; give the path of a database file"
            raise SessionLogError(msg)
        existed = self.path.exists() and self.path.stat().st_size > 0
        if existed and not (_writable(self.path) and _writable(self.path.parent)):
            self._db = self._connect_read_only()
        else:
            try:
                self._db = sqlite3.connect(
                    self.path, timeout=_WAIT, check_same_thread=False, isolation_level=None
                )
            except sqlite3.Error as exc:
                msg = f"cannot open the session log {self.path}: {exc}"
                raise SessionLogError(msg) from exc
        try:
            self._open_checked(existed)
        except BaseException:
            self._db.close()
            raise

    def _open_checked(self, existed: bool) -> None:
        # Two processes opening one new log at once: switching it to WAL, or the other's first
        # read of it, can meet a lock SQLite does not wait for (it answers busy at once). The
        # open is tried again for as long as a write would wait.
        deadline = time.monotonic() + _WAIT
        while True:
            try:
                self._check_or_create(existed)
                return
            except SessionLogError as exc:
                cause = exc.__cause__
                busy = isinstance(cause, sqlite3.Error) and error_code(cause) in _BUSY
                if not busy or time.monotonic() > deadline:
                    raise
            time.sleep(0.05)

    def _connect_read_only(self) -> sqlite3.Connection:
        """The log opened for reading only. A log in WAL mode needs its ``-shm`` file to be
        read: where the folder is read-only and that file is absent, the log is read as
        immutable (no other process can be writing it: none could create its ``-wal``)."""
        self.read_only = True
        uri = self.path.resolve().as_uri()
        shm = self.path.with_name(self.path.name + "-shm")
        immutable = not _writable(self.path.parent) and not shm.exists()
        try:
            return sqlite3.connect(
                f"{uri}?mode=ro{'&immutable=1' if immutable else ''}",
                uri=True,
                timeout=_WAIT,
                check_same_thread=False,
                isolation_level=None,
            )
        except sqlite3.Error as exc:
            msg = f"cannot open the read-only session log {self.path}: {exc}"
            raise SessionLogError(msg) from exc

    @_typed_errors("opening it")
    def _check_or_create(self, existed: bool) -> None:
        tables = self._tables()
        self._check_tables(tables, existed)
        if self.read_only:
            if "meta" not in tables:
                msg = f"{self.path} is read-only and holds no session log; it was left untouched"
                raise SessionLogError(msg)
            return
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA busy_timeout={int(_WAIT * 1000)}")
        if "meta" not in tables:
            with self._transaction():
                # Another process may have created the log since the tables were read: the
                # write lock is held now, so what is there is what it wrote.
                tables = self._tables()
                if "meta" in tables:
                    self._check_tables(tables, existed=True)
                    return
                for statement in _SCHEMA.strip().split(";\n"):
                    self._db.execute(statement)
                self._db.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("schema", SCHEMA_NAME), ("version", str(SCHEMA_VERSION))],
                )

    def _tables(self) -> set[str]:
        try:
            return {
                row[0]
                for row in self._db.execute("SELECT name FROM sqlite_master WHERE type='table'")
            }
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and error_code(exc) in _BUSY:
                raise  # locked by another process, said as such by _typed_errors
            msg = (
                f"{self.path} is not a readable SQLite database ({exc}); it was left untouched. "
                "Point the session log at another file"
            )
            raise SessionLogError(msg) from exc

    def _check_tables(self, tables: set[str], existed: bool) -> None:
        if existed and tables and "meta" not in tables:
            msg = (
                f"{self.path} is another application's database (tables: "
                f"{', '.join(sorted(tables)[:5])}); it was left untouched. Use another file"
            )
            raise SessionLogError(msg)
        if "meta" in tables:
            meta = dict(self._db.execute("SELECT key, value FROM meta"))
            if meta.get("schema") != SCHEMA_NAME:
                msg = f"{self.path} is not a ctxlab session log; it was left untouched"
                raise SessionLogError(msg)
            if meta.get("version") != str(SCHEMA_VERSION):
                msg = (
                    f"{self.path} has session-log schema version {meta.get('version')}, this "
                    f"ctxlab reads version {SCHEMA_VERSION}; it was left untouched. Use a "
                    "matching ctxlab or another file"
                )
                raise SessionLogError(msg)
            if not tables | {"messages_fts"} >= _TABLES:
                msg = f"{self.path} lacks tables {sorted(_TABLES - tables)}: a damaged log"
                raise SessionLogError(msg)

    # -- writing ------------------------------------------------------------------------------

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind: object, *rest: object) -> None:
            if kind is None:
                try:
                    self.db.execute("COMMIT")
                    return
                except sqlite3.Error:
                    self._rollback()
                    raise
            self._rollback()

        def _rollback(self) -> None:
            # SQLite rolls back by itself on some failures (a full disk, an I/O error): a
            # second ROLLBACK would raise and hide the failure that mattered.
            if self.db.in_transaction:
                self.db.execute("ROLLBACK")

    def _transaction(self) -> LogFile._Tx:
        return LogFile._Tx(self._db)


def _writable(path: Path) -> bool:
    # os.access answers for root too where it matters (a read-only mount, an immutable file).
    return os.access(path, os.W_OK)
