"""The session log under hostile conditions: processes creating one new log at once, a disk that
fills during a commit, a read-only file or folder, a log locked by another process. Each failure
is a `SessionLogError` that says what happened and what to do — a full disk is not called
damage, a locked log is not to be restored — nothing of a failed turn is written, and a
read-only log still opens to be read."""

from __future__ import annotations

import contextlib
import multiprocessing
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import SessionLogError
from ctxlab.session import _file
from ctxlab.session._log import SessionLog
from ctxlab.session._records import LoggedMessage, SessionKey
from tests.hostile import read_only, says

KEY = SessionKey("agent", "user", "s1")


def _turn(log: SessionLog, text: str, *, size: int = 1) -> int:
    message = LoggedMessage("user", f'{{"role": "user", "content": "{text}"}}', text * size)
    return log.commit_turn(
        KEY, events=[("note", {"text": text * size})], messages=[message], state="{}", task="{}"
    )


def _written(path: Path) -> SessionLog:
    log = SessionLog(path)
    _turn(log, "first")
    _turn(log, "second")
    log.close()
    return log


def _open_at_once(path: str, barrier: Any, results: Any) -> None:
    barrier.wait()
    try:
        SessionLog(path).close()
        results.put("ok")
    except Exception as exc:  # what the test reports
        results.put(f"{type(exc).__name__}: {exc}")


def test_processes_creating_one_new_log_at_once_all_open_it(tmp_path: Path) -> None:
    # Forked: the children start without importing ctxlab again, so they meet at the file.
    context = multiprocessing.get_context("fork")
    failures: list[str] = []
    for round_ in range(6):
        path = str(tmp_path / f"log{round_}.sqlite")
        barrier, results = context.Barrier(4), context.Queue()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # (fork with threads, 3.12+)
            children = [
                context.Process(target=_open_at_once, args=(path, barrier, results))
                for _ in range(4)
            ]
            for child in children:
                child.start()
        outcomes = [results.get(timeout=120) for _ in children]
        for child in children:
            child.join(timeout=60)
        results.close()
        results.join_thread()
        failures += [o for o in outcomes if o != "ok"]
        assert SessionLog(path).integrity() == "ok"
    assert failures == []


def test_an_open_that_meets_a_lock_sqlite_does_not_wait_for_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite answers busy at once (no waiting) where waiting could deadlock, such as a log
    # switching to WAL while another process reads it first: the open is tried again.
    real = SessionLog._check_or_create
    calls: list[int] = []

    def busy_once(self: SessionLog, existed: bool) -> None:
        calls.append(1)
        if len(calls) == 1:
            error = sqlite3.OperationalError("database is locked")
            error.sqlite_errorname = "SQLITE_BUSY"  # type: ignore[attr-defined]
            raise SessionLogError("busy") from error
        real(self, existed)

    monkeypatch.setattr(SessionLog, "_check_or_create", busy_once)
    SessionLog(tmp_path / "log.sqlite").close()
    assert len(calls) == 2


def test_a_disk_that_fills_during_a_commit_is_said_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    _written(path)
    log = SessionLog(path)
    (pages,) = log._db.execute("PRAGMA page_count").fetchone()
    # SQLite's own bound on the file's pages: a disk that fills part way through the turn.
    log._db.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(SessionLogError) as caught:
        _turn(log, "third ", size=50_000)
    message = str(caught.value)
    says(message, "disk is full", "nothing of this was written", "free some space")
    assert "cannot rollback" not in message and "backup" not in message
    assert not log._db.in_transaction
    # The log is as it was: two turns, and the next turn (with room) is the third.
    assert len(log.message_payloads(KEY)) == 2
    log._db.execute("PRAGMA max_page_count = 1073741823")
    assert _turn(log, "third") == 3
    assert log.integrity() == "ok"
    log.close()


def test_a_read_only_log_opens_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "log.sqlite"
    _written(path)
    before = path.read_bytes()
    with read_only(path):
        log = SessionLog(path)
        assert log.read_only
        assert [p for p in log.message_payloads(KEY)] == [
            '{"role": "user", "content": "first"}',
            '{"role": "user", "content": "second"}',
        ]
        assert log.sessions(user_id="user")["turns"].tolist() == [2]
        with pytest.raises(SessionLogError) as caught:
            _turn(log, "third")
        says(str(caught.value), "read-only", "nothing was written", "writable")
        log.close()
    assert path.read_bytes() == before


@pytest.mark.parametrize("file_too", [True, False])
def test_a_log_in_a_read_only_folder_opens_for_reading(tmp_path: Path, file_too: bool) -> None:
    folder = tmp_path / "copied"
    folder.mkdir()
    path = folder / "log.sqlite"
    _written(path)
    assert sorted(p.name for p in folder.iterdir()) == ["log.sqlite"]  # no -wal, no -shm
    before = path.read_bytes()
    with read_only(folder), read_only(path) if file_too else contextlib.nullcontext():
        log = SessionLog(path)
        assert log.read_only and len(log.message_payloads(KEY)) == 2
        assert log.transcript(KEY).messages[0].content[0].text == "first"  # type: ignore[union-attr]
        log.close()
    assert path.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["log.sqlite"]


def test_a_new_log_in_a_read_only_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder), pytest.raises(SessionLogError) as caught:
        SessionLog(folder / "log.sqlite")
    says(str(caught.value), "log.sqlite")
    assert list(folder.iterdir()) == []


def test_a_locked_log_says_it_is_locked_not_damaged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.sqlite"
    _written(path)
    monkeypatch.setattr(_file, "_WAIT", 0.2)
    log = SessionLog(path)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(SessionLogError) as caught:
            _turn(log, "third")
    finally:
        other.execute("ROLLBACK")
        other.close()
    message = str(caught.value)
    says(message, "locked", "wait for it to finish", "not damaged")
    assert "backup" not in message
    assert _turn(log, "third") == 3
    log.close()
