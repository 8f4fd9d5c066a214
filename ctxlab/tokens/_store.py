"""`CountStore`: token counts kept across runs, so that a session is tokenized once, not at every
replay, what-if or sweep that reads it again (opt-in: ``TokenCache(counter, store=...)``;
``sweep(cache_dir=...)`` keeps one beside its results).

Counts are keyed by the block's content hash and a namespace naming the counter and ctxlab's
counting rules (`TokenCache.store_namespace`): a count is only ever read back for the same content
counted the same way. The file is SQLite (the standard library's, safe for several processes at
once: a sweep's workers share it); a damaged or foreign file is a `UsageError` naming it, and the
counts are then simply made again by a store elsewhere.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from ctxlab.exceptions import UsageError

__all__ = ["CountStore"]

_BATCH = 500  # SQLite's bound on the parameters of one statement is 999 (older builds)


class CountStore:
    """Token counts on disk, by (namespace, block hash)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            msg = f"a count store is a file; {self.path} is a folder (name a file in it)"
            raise UsageError(msg)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(self.path, timeout=30, check_same_thread=False)
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS counts (namespace TEXT NOT NULL, block TEXT NOT NULL,"
                " tokens INTEGER NOT NULL, PRIMARY KEY (namespace, block)) WITHOUT ROWID"
            )
            self._db.commit()
        except sqlite3.DatabaseError as exc:
            msg = f"{self.path} is not a ctxlab count store ({exc}); remove it or name another file"
            raise UsageError(msg) from exc

    def get_many(self, namespace: str, blocks: Sequence[str]) -> dict[str, int]:
        """The stored counts of ``blocks`` (those not stored are absent)."""
        found: dict[str, int] = {}
        with self._lock:
            for start in range(0, len(blocks), _BATCH):
                chunk = list(blocks[start : start + _BATCH])
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(
                    f"SELECT block, tokens FROM counts WHERE namespace = ? AND block IN ({marks})",
                    [namespace, *chunk],
                )
                # A count is a whole number from 0: anything else is not trusted.
                found.update(
                    (b, t)
                    for b, t in rows
                    if isinstance(t, int) and not isinstance(t, bool) and t >= 0
                )
        return found

    def put_many(self, namespace: str, counts: Mapping[str, int]) -> None:
        """Store ``counts`` (block hash → tokens)."""
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO counts (namespace, block, tokens) VALUES (?, ?, ?)",
                [(namespace, block, tokens) for block, tokens in counts.items()],
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM counts").fetchone()
        return int(count)

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            self._db.close()

    def __reduce__(self) -> tuple[type[CountStore], tuple[Path]]:
        # A sweep sends its cache to Dask workers: each opens the file itself.
        return (CountStore, (self.path,))
