"""The count store's values a user meets: a row's digest is the same from one version to the next
(BLAKE2b of the key and count, computed here on its own — a store made yesterday is served
today, not counted again), the store waits for a lock the time it was given, and each error
names the action that failed, what the file is and the SQLite code it was (extended codes read
as their primary one)."""

from __future__ import annotations

import hashlib
import sqlite3
import time
from pathlib import Path

import pytest

from ctxlab.exceptions import CountStoreError, CountStoreLocked
from ctxlab.tokens import CountStore
from ctxlab.tokens._store import _code, count_digest
from tests.tokens.stores import refused


@pytest.mark.parametrize(
    ("namespace", "block", "tokens"), [("ns", "b", 5), ("approx|blocks-1", "ab12", 0)]
)
def test_a_rows_digest_is_stable_across_versions(namespace: str, block: str, tokens: int) -> None:
    raw = hashlib.blake2b(f"{namespace}\0{block}\0{tokens}".encode(), digest_size=8).digest()
    assert count_digest(namespace, block, tokens) == int.from_bytes(raw, "big") // 2


def test_a_store_written_with_the_digest_of_record_is_served(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CountStore(path).close()
    digest = int.from_bytes(hashlib.blake2b(b"ns\0b1\x007", digest_size=8).digest(), "big") // 2
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO counts VALUES ('ns', 'b1', 7, ?)", (digest,))
    db.close()
    store = CountStore(path)
    assert store.read_only is False
    assert store.get_many("ns", ["b1"]) == {"b1": 7}
    store.close()


def test_a_locked_store_waits_the_time_it_was_given(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    CountStore(path).close()
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        with pytest.raises(CountStoreLocked) as caught:
            CountStore(path, timeout=0.1)
        # SQLite's own default is 5 s: the store's timeout is the one used (a loaded machine
        # gets most of the difference).
        assert time.monotonic() - start < 4
        assert "(for over 0.1 s)" in str(caught.value)
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_each_error_names_the_action_that_failed(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    store = CountStore(path, timeout=0.05)
    store.put_many("ns", {"b": 1})
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        for action, call in (
            ("reading counts", lambda: store.get_many("ns", ["b"])),
            ("writing counts", lambda: store.put_many("ns", {"c": 2})),
            ("counting its entries", lambda: len(store)),
        ):
            with pytest.raises(CountStoreLocked) as caught:
                call()
            assert str(caught.value).startswith(
                f"the count store {path} failed while {action}: database is locked. "
            ), action
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()


def test_another_applications_tables_are_named_five_at_most(tmp_path: Path) -> None:
    path = tmp_path / "app.sqlite"
    tables = (f"CREATE TABLE {name} (x)" for name in ("users", "a", "posts", "b", "tags", "c"))
    assert refused(path, *tables) == (
        f"{path} is another application's database (tables: a, b, c, posts, tags), not a "
        "ctxlab count store. It was left untouched; name another file for the counts"
    )


def test_a_counts_table_of_another_shape_names_both_columns(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    assert refused(path, "CREATE TABLE counts (key TEXT, n INTEGER)") == (
        f"{path} is not a ctxlab count store: its 'counts' table has the columns ['key', 'n'], "
        "not ['namespace', 'block', 'tokens', 'digest']. It was left untouched; name another "
        "file for the counts"
    )


def test_a_folder_that_cannot_be_made_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(CountStoreError) as caught:
        CountStore(blocker / "sub" / "c.sqlite")
    message = str(caught.value)
    assert message.startswith(
        f"cannot create the folder of the count store {blocker}/sub/c.sqlite: "
    )
    assert message.endswith("; name a file in a folder you can write")
    assert "Errno" not in message  # the system's words, not the exception's repr


class _Failed(sqlite3.Error):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.sqlite_errorname = name


@pytest.mark.parametrize(
    ("name", "primary"),
    [
        ("SQLITE_BUSY", "SQLITE_BUSY"),
        ("SQLITE_BUSY_SNAPSHOT", "SQLITE_BUSY"),
        ("SQLITE_READONLY_DBMOVED", "SQLITE_READONLY"),
        ("SQLITE_FULL", "SQLITE_FULL"),
        ("SQLITE_NOTADB", "SQLITE_NOTADB"),
        ("SQLITE_CORRUPT_INDEX", "SQLITE_CORRUPT"),
        ("SQLITE_IOERR_WRITE", "SQLITE_IOERR"),  # a write refused: a disk, a file-size limit
        ("SQLITE_IOERR_SHORT_READ", "SQLITE_IOERR"),
        ("SQLITE_AUTH_USER", "SQLITE_AUTH"),
        ("SQLITE_MISMATCH", "SQLITE_MISMATCH"),  # not one the store names: as it is
        ("SQLITE_FULLNESS", "SQLITE_FULLNESS"),  # a prefix is not a code
        ("", ""),
    ],
)
def test_an_extended_code_reads_as_its_primary_one(name: str, primary: str) -> None:
    assert _code(_Failed(name)) == primary


def test_an_error_without_a_code_is_named_with_what_to_do(tmp_path: Path) -> None:
    store = CountStore(tmp_path / "c.sqlite")
    error = store._error(sqlite3.Error("odd"), "reading counts")
    assert type(error) is CountStoreError
    assert str(error) == (
        f"the count store {store.path} failed while reading counts: odd. Name another file "
        "for the counts"
    )
    store.close()


def test_a_file_that_is_no_database_is_named_while_opening_it(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    assert refused(junk) == (
        f"{junk} is not a ctxlab count store, or it is damaged (while opening it: file is not a "
        "database); it was left untouched. Remove it (its counts are made again) or name another "
        "file"
    )
