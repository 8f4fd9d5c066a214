"""The durable session log: SQLite (the standard library's ``sqlite3``) in WAL mode, one file.

Three things are kept per session, keyed by (agent id, user id, session id):

- an append-only event log: messages, tool calls and results, ``context_build`` manifests,
  compactions — compaction never rewrites it;
- turns: each committed in one transaction together with its events and a checkpoint of the
  working state (conversation, summary, task state), so a crash leaves whole turns or nothing;
- a full-text index (FTS5) of the messages for ``search``.

Every query is scoped to one user: two users never see each other's sessions. A file that is not
a ctxlab log (corrupt, another application's database, another schema version) is refused with a
clear error and never written to.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from ctxlab.exceptions import SessionLogError, SessionNotFound, StateChanged, UsageError
from ctxlab.session._args import checked_count, checked_key, checked_text, checked_texts
from ctxlab.session._errors import _typed_errors
from ctxlab.session._file import SCHEMA_VERSION, LogFile
from ctxlab.session._records import Checkpoint, LoggedMessage, SessionKey
from ctxlab.session._responses import LoggedResponse, logged_responses
from ctxlab.session._transcript import log_transcript

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.io._transcript import Transcript

__all__ = ["SCHEMA_VERSION", "Checkpoint", "SessionKey", "SessionLog"]


class SessionLog(LogFile):
    """A session log in one SQLite file (created when absent).

    Args:
        path: The database file, e.g. ``workspace / "sessions.sqlite"``.
    """

    @_typed_errors("committing a turn")
    def commit_turn(
        self,
        key: SessionKey,
        *,
        events: Sequence[tuple[str, dict[str, Any]]],
        messages: Sequence[LoggedMessage],
        state: str,
        task: str,
        expected_turns: int | None = None,
    ) -> int:
        """Append one turn (events, messages, checkpoint) in one transaction; its number.

        ``expected_turns`` is how many turns the writer knows the session to have: when another
        writer committed since, nothing is written and `StateChanged` says so (two agents on one
        session never interleave their turns)."""
        checked_key(key)
        if self.read_only:
            msg = (
                f"the session log {self.path} is read-only (opened for reading): nothing was "
                "written. Make the file and its folder writable, or point the agent at another "
                "log"
            )
            raise SessionLogError(msg)
        now = time.time()
        with self._lock, self._transaction() as db:
            db.execute(
                "INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, ?, ?, 0)",
                (*key.params(), now, now),
            )
            (turns,) = db.execute(
                "SELECT turns FROM sessions WHERE agent_id=? AND user_id=? AND session_id=?",
                key.params(),
            ).fetchone()
            _check_turns(key, int(turns), expected_turns)
            turn = int(turns) + 1
            count = _insert_events(db, key, turn, messages, events, now)
            db.execute(
                "INSERT INTO turns VALUES (?, ?, ?, ?, ?, ?)", (*key.params(), turn, count, now)
            )
            db.execute(
                "INSERT INTO checkpoints VALUES (?, ?, ?, ?, ?, ?)",
                (*key.params(), turn, state, task),
            )
            db.execute(
                "UPDATE sessions SET turns=?, updated_at=? WHERE agent_id=? AND user_id=? AND"
                " session_id=?",
                (turn, now, *key.params()),
            )
        return turn

    # -- reading ------------------------------------------------------------------------------

    def _query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    @_typed_errors("reading it")
    def exists(self, key: SessionKey) -> bool:
        """Whether the session has committed turns."""
        checked_key(key)
        return bool(
            self._query(
                "SELECT 1 FROM sessions WHERE agent_id=? AND user_id=? AND session_id=?",
                key.params(),
            )
        )

    @_typed_errors("reading a checkpoint")
    def checkpoint(self, key: SessionKey) -> Checkpoint | None:
        """The latest checkpoint of the session (None for a new session)."""
        checked_key(key)
        rows = self._query(
            "SELECT turn, state, task FROM checkpoints WHERE agent_id=? AND user_id=? AND"
            " session_id=? ORDER BY turn DESC LIMIT 1",
            key.params(),
        )
        return Checkpoint(*rows[0]) if rows else None

    @_typed_errors("reading messages")
    def message_payloads(self, key: SessionKey) -> list[str]:
        """Every logged message of the session, in order (JSON)."""
        checked_key(key)
        return [
            row[0]
            for row in self._query(
                "SELECT payload FROM events WHERE agent_id=? AND user_id=? AND session_id=? AND"
                " kind='message' ORDER BY seq",
                key.params(),
            )
        ]

    def transcript(self, key: SessionKey) -> Transcript:
        """The session as a `Transcript` (see `log_transcript`)."""
        return log_transcript(self, key)

    @_typed_errors("reading events")
    def responses(self, key: SessionKey) -> list[LoggedResponse]:
        """The session's model responses as the log kept them (see `logged_responses`)."""
        return logged_responses(self, key)

    @_typed_errors("reading events")
    def event_payloads(self, key: SessionKey, kinds: Sequence[str]) -> list[tuple[str, Any]]:
        """(kind, payload) of the session's events of ``kinds``, in order (no pandas needed)."""
        checked_key(key)
        kinds = checked_texts(kinds, "kinds")
        marks = ", ".join("?" for _ in kinds)
        rows = self._query(
            "SELECT kind, payload FROM events WHERE agent_id=? AND user_id=? AND session_id=?"
            f" AND kind IN ({marks}) ORDER BY seq",
            [*key.params(), *kinds],
        )
        return [(kind, json.loads(payload)) for kind, payload in rows]

    @_typed_errors("reading events")
    def events(self, key: SessionKey, kind: str | None = None) -> pd.DataFrame:
        """The session's events (seq, turn, kind, payload as a dict)."""
        checked_text(kind, "kind", optional=True)
        self._require(key)
        sql = (
            "SELECT seq, turn, kind, payload FROM events WHERE agent_id=? AND user_id=? AND"
            " session_id=?"
        )
        params: list[Any] = list(key.params())
        if kind is not None:
            sql += " AND kind=?"
            params.append(kind)
        rows = self._query(sql + " ORDER BY seq", params)
        import pandas as pd  # lazily: a process that only writes the log never pays for pandas

        return pd.DataFrame(
            [(s, t, k, json.loads(p)) for s, t, k, p in rows],
            columns=["seq", "turn", "kind", "payload"],
        )

    @_typed_errors("listing sessions")
    def sessions(self, *, user_id: str, agent_id: str | None = None) -> pd.DataFrame:
        """The user's sessions (of one agent when given), newest first."""
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id", optional=True)
        sql = "SELECT agent_id, session_id, created_at, updated_at, turns FROM sessions WHERE user_id=?"
        params: list[Any] = [user_id]
        if agent_id is not None:
            sql += " AND agent_id=?"
            params.append(agent_id)
        rows = self._query(sql + " ORDER BY updated_at DESC", params)
        import pandas as pd

        frame = pd.DataFrame(
            rows, columns=["agent_id", "session_id", "created_at", "updated_at", "turns"]
        )
        for column in ("created_at", "updated_at"):
            frame[column] = pd.to_datetime(frame[column], unit="s", utc=True)
        return frame

    def _require(self, key: SessionKey) -> None:
        if not self.exists(checked_key(key)):
            msg = (
                f"no session {key.session_id!r} of agent {key.agent_id!r} for this user in "
                f"{self.path}; list them with sessions()"
            )
            raise SessionNotFound(msg)

    @_typed_errors("reading history")
    def history(self, key: SessionKey, last_n: int = 20) -> pd.DataFrame:
        """The last ``last_n`` messages of the session (seq, turn, role, text)."""
        checked_count(last_n, "last_n")
        self._require(key)
        rows = self._query(
            "SELECT seq, turn, role, text FROM messages_fts WHERE agent_id=? AND user_id=? AND"
            " session_id=? ORDER BY CAST(seq AS INTEGER) DESC LIMIT ?",
            (*key.params(), last_n),
        )
        import pandas as pd

        return pd.DataFrame(rows[::-1], columns=["seq", "turn", "role", "text"])

    @_typed_errors("searching it")
    def search(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int = 20
    ) -> pd.DataFrame:
        """Messages of the user's sessions matching ``query`` (FTS5 syntax; plain words work)."""
        checked_text(query, "query")
        checked_text(user_id, "user_id")
        checked_text(agent_id, "agent_id", optional=True)
        checked_count(limit, "limit", low=0)
        if not query.strip():
            msg = "the search query is empty"
            raise UsageError(msg)
        sql = (
            "SELECT agent_id, session_id, turn, role, snippet(messages_fts, 0, '[', ']', '…', 12)"
            " FROM messages_fts WHERE messages_fts MATCH ? AND user_id=?"
        )
        params: list[Any] = [_fts_query(query), user_id]
        if agent_id is not None:
            sql += " AND agent_id=?"
            params.append(agent_id)
        try:
            rows = self._query(sql + " ORDER BY rank LIMIT ?", [*params, limit])
        except sqlite3.OperationalError as exc:
            msg = f"cannot search for {query!r}: {exc}"
            raise UsageError(msg) from exc
        import pandas as pd

        return pd.DataFrame(rows, columns=["agent_id", "session_id", "turn", "role", "snippet"])

    @_typed_errors("checking it")
    def integrity(self) -> str:
        """``PRAGMA integrity_check`` ('ok' when the file is sound)."""
        return str(self._query("PRAGMA integrity_check")[0][0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._db.close()


def _fts_query(query: str) -> str:
    # Plain words are quoted so punctuation (paths, dots, dashes) cannot break FTS5's syntax.
    if any(op in query for op in ('"', " OR ", " AND ", " NOT ", "*")):
        return query
    return " ".join('"' + word.replace('"', '""') + '"' for word in query.split())


def _check_turns(key: SessionKey, turns: int, expected: int | None) -> None:
    """Refuse (`StateChanged`) a turn written by an agent that read ``expected`` turns of a
    session that now has ``turns``."""
    if expected is not None and turns != expected:
        msg = (
            f"session {key.session_id!r} of agent {key.agent_id!r} has {turns} committed "
            f"turns, not the {expected} this agent read: another agent with the "
            "same ids committed since. Nothing was written; build the agent again to "
            "resume from the log, or give it another session_id"
        )
        raise StateChanged(msg)


def _insert_events(
    db: sqlite3.Connection,
    key: SessionKey,
    turn: int,
    messages: Sequence[LoggedMessage],
    events: Sequence[tuple[str, dict[str, Any]]],
    now: float,
) -> int:
    """Write a turn's messages (and their full-text rows) and events; how many rows."""
    for message in messages:
        cursor = db.execute(
            "INSERT INTO events (agent_id, user_id, session_id, turn, kind, payload,"
            " created_at) VALUES (?, ?, ?, ?, 'message', ?, ?)",
            (*key.params(), turn, message.json, now),
        )
        db.execute(
            "INSERT INTO messages_fts VALUES (?, ?, ?, ?, ?, ?, ?)",
            (message.text, message.role, *key.params(), turn, cursor.lastrowid),
        )
    for kind, payload in events:
        db.execute(
            "INSERT INTO events (agent_id, user_id, session_id, turn, kind, payload,"
            " created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (*key.params(), turn, kind, json.dumps(payload, default=str), now),
        )
    return len(messages) + len(events)
