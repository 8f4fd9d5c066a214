"""The count store on hostile files: another shape, another application's database, damaged
pages, read-only, locked by another process, a full disk, counts no text can have. Each is a
`CountStoreError` saying which it is and what to do (a locked store is never called damaged),
the file is left as it was, and a `TokenCache` over such a store still counts — the store is a
help, never a failure."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from ctxlab.exceptions import CountStoreError, CountStoreLocked
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.messages._usage import MAX_TOKENS
from ctxlab.tokens import ApproximateCounter, CountStore, TokenCache
from ctxlab.util import _room
from tests.helpers import Message, raised_at_once
from tests.hostile import read_only, says
from tests.tokens.stores import refused


def _session(n: int = 40) -> list[Message]:
    return [
        (UserMessage if i % 2 == 0 else AssistantMessage)(
            content=(TextBlock(text=f"message {i}: " + "word " * (i + 3)),)
        )
        for i in range(n)
    ]


def _expected(session: list[Message]) -> list[int]:
    plain = TokenCache(ApproximateCounter())
    return [plain.message(m) for m in session]


def _filled(path: Path, session: list[Message]) -> None:
    cache = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert cache.count_ahead(session) == len(session)
    assert cache.store is not None
    cache.store.close()


def test_a_counts_table_of_another_shape_is_named_and_left_untouched(tmp_path: Path) -> None:
    made = ("CREATE TABLE counts (key TEXT, value INTEGER)", "INSERT INTO counts VALUES ('a', 1)")
    message = refused(tmp_path / "token_counts.sqlite", *made)
    says(message, "not a ctxlab count store", "['key', 'value']", "name another file")


def test_another_applications_database_is_named_and_left_untouched(tmp_path: Path) -> None:
    message = refused(tmp_path / "app.sqlite", "CREATE TABLE users (name TEXT)")
    says(message, "another application's database", "users", "name another file")


def test_damaged_pages_are_named_and_a_cache_counts_without_them(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    session = _session(400)
    _filled(path, session)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 3 * page
    # Every page after the schema's: the counts' B-tree pages are garbage.
    data[page:] = bytes([0xA5]) * (len(data) - page)
    path.write_bytes(bytes(data))
    store = CountStore(path)  # the schema page is sound: the damage shows when read
    with pytest.raises(CountStoreError) as caught:
        store.get_many("approximate:chars/4|blocks-1", ["x"])
    says(str(caught.value), "damaged", "remove it", "name another file")
    assert not isinstance(caught.value, CountStoreLocked)
    cache = TokenCache(ApproximateCounter(), store=store)
    cache.count_ahead(session)
    assert [cache.message(m) for m in session] == _expected(session)
    assert cache.store is None and cache.store_problem is not None
    says(cache.store_problem, "damaged")
    store.close()


def test_a_read_only_store_opens_for_reading(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    session = _session()
    _filled(path, session[:20])
    before = path.read_bytes()
    with read_only(path):
        store = CountStore(path)
        cache = TokenCache(ApproximateCounter(), store=store)
        # The first 20 are read from the store; the 20 new ones counted, not written.
        assert cache.count_ahead(session) == 20
        assert [cache.message(m) for m in session] == _expected(session)
        assert cache.store_problem is not None
        says(cache.store_problem, "read-only", "make it writable")
        assert store.read_only and len(store) == 20
        with pytest.raises(CountStoreError, match="read-only"):
            store.put_many("n", {"b": 1})
        store.close()
    assert path.read_bytes() == before
    # An empty read-only file opens too: nothing to read, nothing written.
    empty = tmp_path / "empty.sqlite"
    empty.touch()
    with read_only(empty):
        store = CountStore(empty)
        assert store.read_only and len(store) == 0 and store.get_many("n", ["b"]) == {}
        store.close()
    assert empty.read_bytes() == b""


def test_a_store_in_a_read_only_folder_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder), pytest.raises(CountStoreError) as caught:
        CountStore(folder / "c.sqlite")
    says(str(caught.value), "cannot be written", "make it writable")
    assert list(folder.iterdir()) == []


def test_a_locked_store_says_it_is_locked_never_damaged(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    session = _session()
    _filled(path, session)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CountStoreLocked) as caught:
            CountStore(path, timeout=0.1)
        message = str(caught.value)
        says(message, "locked", "wait for it to finish or close it", "do not delete")
        assert "not a ctxlab count store" not in message and "remove it" not in message
    finally:
        other.execute("ROLLBACK")
        other.close()
    store = CountStore(path, timeout=0.1)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(CountStoreLocked):
            store.get_many("approximate:chars/4|blocks-1", ["x"])
        # A cache goes on without it, and says why.
        cache = TokenCache(ApproximateCounter(), store=store)
        cache.count_ahead(session)
        assert [cache.message(m) for m in session] == _expected(session)
        says(cache.store_problem or "", "locked")
    finally:
        other.execute("ROLLBACK")
        other.close()
        store.close()


def test_a_full_disk_while_writing_counts_is_named_and_the_counts_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A disk with next to no room left (as read after the failure): a full disk.
    monkeypatch.setattr(_room, "free_bytes", lambda folder: 4_096)
    path = tmp_path / "c.sqlite"
    store = CountStore(path)
    # SQLite's own bound on the file's pages: a disk that fills after the first few pages.
    (pages,) = store._db.execute("PRAGMA page_count").fetchone()
    store._db.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(CountStoreError) as caught:
        store.put_many("n", {f"block{i}": i for i in range(5_000)})
    says(str(caught.value), "disk is full", "free some space")
    assert len(store) == 0  # nothing half-written
    session = _session(200)
    cache = TokenCache(ApproximateCounter(), store=store)
    assert cache.count_ahead(session) == 200
    assert [cache.message(m) for m in session] == _expected(session)
    says(cache.store_problem or "", "disk is full")
    store.close()


def test_a_store_at_a_size_limit_with_room_on_its_disk_is_not_called_full(tmp_path: Path) -> None:
    store = CountStore(tmp_path / "c.sqlite")
    (pages,) = store._db.execute("PRAGMA page_count").fetchone()
    store._db.execute(f"PRAGMA max_page_count = {pages + 1}")
    with pytest.raises(CountStoreError) as caught:
        store.put_many("n", {f"block{i}": i for i in range(5_000)})
    says(str(caught.value), "no room to write", "size limit", "not a full disk", "another file")
    assert "free some space" not in str(caught.value)
    assert len(store) == 0
    store.close()


@pytest.mark.parametrize("stored", [2**63 - 1, MAX_TOKENS + 1, -1, 2.5, "many"])
def test_a_count_no_text_can_have_is_never_served(tmp_path: Path, stored: object) -> None:
    path = tmp_path / "c.sqlite"
    session = _session(10)
    _filled(path, session)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE counts SET tokens = ?", (stored,))
    db.close()
    store = CountStore(path)
    assert store.get_many("approximate:chars/4|blocks-1", ["x"]) == {}
    cache = TokenCache(ApproximateCounter(), store=store)
    assert cache.count_ahead(session) == 10  # every block counted again
    assert [cache.message(m) for m in session] == _expected(session)
    store.close()


def test_a_junk_file_or_a_folder_is_named(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    says(refused(junk), "junk.sqlite is not a ctxlab count store", "name another file")
    with pytest.raises(CountStoreError, match="is a folder"):
        CountStore(tmp_path)


def test_processes_creating_one_new_store_at_once_all_open_it(tmp_path: Path) -> None:
    failures: list[BaseException] = []
    for round_ in range(10):
        path = tmp_path / f"c{round_}.sqlite"
        failures += raised_at_once(lambda path=path: CountStore(path).close(), threads=6)
    assert failures == []


def test_a_count_damage_changed_to_a_plausible_one_is_not_served(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    session = _session(10)
    _filled(path, session)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE counts SET tokens = tokens + 1")  # a flipped bit, say: its digest stays
    db.close()
    cache = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert cache.count_ahead(session) == 10  # every one counted again, none served
    assert [cache.message(m) for m in session] == _expected(session)
    again = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert again.count_ahead(session) == 0  # (and written back sound)


def test_a_store_of_the_first_shape_gains_its_digests(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    session = _session(10)
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE counts (namespace TEXT NOT NULL, block TEXT NOT NULL, tokens INTEGER"
            " NOT NULL, PRIMARY KEY (namespace, block)) WITHOUT ROWID"
        )
        db.executemany(
            "INSERT INTO counts VALUES ('approximate:chars/4|blocks-1', ?, 999)",
            [(b.content_hash,) for m in session for b in m.content],
        )
    db.close()
    cache = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert cache.count_ahead(session) == 10  # rows without a digest are not served
    assert [cache.message(m) for m in session] == _expected(session)
    again = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert again.count_ahead(session) == 0 and again.store_problem is None
