"""`CountStore`'s promises on the counts it hands back: it is created with its folders, used
from any thread (a sweep's thread pool shares one), serves every whole count up to
`MAX_TOKENS` (the largest included), and a store of the first shape opened read-only serves
none of its digest-less rows, rather than counts it cannot check."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

from ctxlab.messages._usage import MAX_TOKENS
from ctxlab.tokens import CountStore
from ctxlab.tokens._store import count_digest
from tests.hostile import read_only


def test_a_store_is_created_with_the_folders_it_needs(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "sweeps" / "counts.sqlite"
    store = CountStore(path)
    store.put_many("ns", {"b1": 12})
    assert path.is_file() and store.get_many("ns", ["b1"]) == {"b1": 12}
    store.close()


def test_one_store_is_read_and_written_from_other_threads(tmp_path: Path) -> None:
    store = CountStore(tmp_path / "counts.sqlite")
    found: list[dict[str, int]] = []

    def work() -> None:
        store.put_many("ns", {"b1": 3, "b2": 4})
        found.append(store.get_many("ns", ["b1", "b2", "b3"]))

    worker = threading.Thread(target=work)
    worker.start()
    worker.join()
    assert found == [{"b1": 3, "b2": 4}]
    assert len(store) == 2
    store.close()


def test_every_whole_count_up_to_the_largest_is_served(tmp_path: Path) -> None:
    store = CountStore(tmp_path / "counts.sqlite")
    counts = {"zero": 0, "one": 1, "largest": MAX_TOKENS}
    store.put_many("ns", counts)
    assert store.get_many("ns", list(counts)) == counts
    # Another namespace (other counting rules) holds none of them.
    assert store.get_many("other rules", list(counts)) == {}
    store.close()


def test_a_digest_is_63_bits_of_the_key_and_count_and_takes_any_text() -> None:
    digests = {count_digest("ns", "b", n) for n in range(200)}
    assert len(digests) == 200 and all(0 <= d < 2**63 for d in digests)
    assert count_digest("ns", "b", 5) != count_digest("ns2", "b", 5)
    # A namespace or block that is not valid UTF-8 (a lone surrogate from a file name) is
    # digested, not an error.
    assert 0 <= count_digest("ns\udcff", "b\ud800", 5) < 2**63


def test_a_first_shape_store_opened_read_only_serves_none_of_its_unchecked_rows(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE counts (namespace TEXT NOT NULL, block TEXT NOT NULL, tokens INTEGER"
            " NOT NULL, PRIMARY KEY (namespace, block)) WITHOUT ROWID"
        )
        db.executemany("INSERT INTO counts VALUES ('ns', ?, 999)", [("b1",), ("b2",)])
    db.close()
    with read_only(path), read_only(tmp_path):
        store = CountStore(path)
        assert store.read_only
        assert store.get_many("ns", ["b1", "b2"]) == {} and len(store) == 0
        store.close()
