"""The session log under hostile conditions: processes creating one new log at once, a disk that
fills during a commit, a file at the process's file-size limit or another size limit, a
read-only file or folder, a log locked by another process. Each failure is a `SessionLogError`
that says what happened and what to do — a full disk is not called damage, a file-size limit
not a disk error, a locked log is not to be restored — nothing of a failed turn is written, and
a read-only log still opens to be read."""

from __future__ import annotations

import contextlib
import multiprocessing
import sqlite3
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import SessionLogError
from ctxlab.session import _file
from ctxlab.session._log import SessionLog
from ctxlab.session._records import LoggedMessage, SessionKey
from ctxlab.util import _room
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


def _commit_past_max_pages(path: Path) -> str:
    # SQLite's own bound on the file's pages: the file can grow no further part way through the
    # turn (SQLITE_FULL). The failed commit's message; the log must be as it was.
    _written(path)
    log = SessionLog(path)
    (pages,) = log._db.execute("PRAGMA page_count").fetchone()
    log._db.execute(f"PRAGMA max_page_count = {pages + 2}")
    with pytest.raises(SessionLogError) as caught:
        _turn(log, "third ", size=50_000)
    assert not log._db.in_transaction
    # The log is as it was: two turns, and the next turn (with room) is the third.
    assert len(log.message_payloads(KEY)) == 2
    log._db.execute("PRAGMA max_page_count = 1073741823")
    assert _turn(log, "third") == 3
    assert log.integrity() == "ok"
    log.close()
    return str(caught.value)


def test_a_disk_that_fills_during_a_commit_is_said_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_room, "free_bytes", lambda folder: 4_096)  # the disk, as it is then
    message = _commit_past_max_pages(tmp_path / "log.sqlite")
    says(
        message, "disk is full (4,096 bytes free)", "nothing of this was written", "free some space"
    )
    assert "cannot rollback" not in message and "backup" not in message


def test_a_file_at_a_size_limit_with_room_on_its_disk_is_not_called_a_full_disk(
    tmp_path: Path,
) -> None:
    # SQLite says "database or disk is full" for both: the room left tells them apart.
    message = _commit_past_max_pages(tmp_path / "log.sqlite")
    says(message, "no room to write", "bytes free", "size limit", "max_page_count")
    says(message, "not a full disk", "nothing of this was written", "use another file")
    assert "free some space" not in message.lower()


_AT_THE_LIMIT = """
import resource, signal, sys
from pathlib import Path
from ctxlab.session._log import SessionLog
from ctxlab.session._records import LoggedMessage, SessionKey
from ctxlab.util import _room
from ctxlab.tokens import CountStore

folder, key = Path(sys.argv[1]), SessionKey("agent", "user", "s1")
log = SessionLog(folder / "log.sqlite")
def turn(text):
    message = LoggedMessage("user", '{"role": "user", "content": "x"}', text)
    log.commit_turn(key, events=[("note", {"text": text})], messages=[message], state="{}", task="{}")
turn("first")
store = CountStore(folder / "counts.sqlite")
# The limit a shell's `ulimit -f` sets; past it the kernel sends SIGXFSZ (which would kill the
# process: ignored, as a server does) and the write fails with EFBIG.
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (200_000, resource.RLIM_INFINITY))
for write in (lambda: turn("second " * 100_000), lambda: store.put_many("n", {f"b{i}" * 30: i for i in range(30_000)})):
    try:
        write()
        print("written")
    except Exception as exc:
        print(f"{type(exc).__name__}: {exc}")
log.close()
store.close()
"""


def test_a_commit_at_the_file_size_limit_says_so_not_a_disk_error(tmp_path: Path) -> None:
    # It said "disk I/O error ... Check the disk" (SQLite's SQLITE_IOERR_WRITE for EFBIG).
    done = subprocess.run(
        [sys.executable, "-c", _AT_THE_LIMIT, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    logged, counted = done.stdout.splitlines()
    for message, kind in ((logged, "SessionLogError"), (counted, "CountStoreError")):
        says(message, f"{kind}: ", "file-size limit (200,000 bytes: RLIMIT_FSIZE", "ulimit -f")
        says(message, "not a full disk, not a disk error", "use another file")
        assert "check the disk" not in message.lower()
    says(logged, "nothing of this was written and the log is as it was")
    # Nothing of the failed turn is in the log, and it is sound.
    log = SessionLog(tmp_path / "log.sqlite")
    assert log.message_payloads(KEY) == ['{"role": "user", "content": "x"}']
    assert log.integrity() == "ok"
    log.close()


@pytest.mark.parametrize(
    ("code", "free", "said"),
    [
        ("SQLITE_IOERR", 10**12, "The disk reported an I/O error, though its disk has"),
        ("SQLITE_FULL", 10**12, "SQLite found no room to write"),
        ("SQLITE_FULL", 0, "The disk is full (0 bytes free)"),
        ("SQLITE_IOERR", 0, "The disk is full (0 bytes free)"),
    ],
)
def test_an_io_error_a_full_disk_and_a_size_limit_are_told_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, free: int, said: str
) -> None:
    monkeypatch.setattr(_room, "free_bytes", lambda folder: free)
    monkeypatch.setattr(_room, "file_size_limit", lambda: None)
    room = _room.no_room(tmp_path / "log.sqlite", code)
    assert room is not None and room.cause.startswith(said)
    assert _room.no_room(tmp_path / "log.sqlite", "SQLITE_CORRUPT") is None


def test_a_file_far_below_the_size_limit_is_not_blamed_on_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.sqlite"
    path.write_bytes(b"x" * 1_000)
    monkeypatch.setattr(_room, "free_bytes", lambda folder: 10**12)
    monkeypatch.setattr(_room, "file_size_limit", lambda: 1_000 + _room.NEAR_LIMIT)
    assert _room.no_room(path, "SQLITE_IOERR").kind == "file_size_limit"  # type: ignore[union-attr]
    monkeypatch.setattr(_room, "file_size_limit", lambda: 2_000 + _room.NEAR_LIMIT)
    assert _room.no_room(path, "SQLITE_IOERR").kind == "io_error"  # type: ignore[union-attr]


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
