"""`sessions` on many files: a folder asked for again is answered from memory while no file
under it changed (`tests/io/test_sessions_rows.py`: what is read when one did); the
inventory's walk, made cheaper, finds what it found."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import sessions
from ctxlab.exceptions import UsageError
from ctxlab.io import _sessions_cache
from ctxlab.io._findings import is_usage, key_flags
from ctxlab.io._inventory import _may_be_usage, inventory_of, remembered
from ctxlab.io._sessions_cache import forget
from ctxlab.io._transcript import corpus_dir
from tests.io.kept_tables import FIXTURES, fixture_sessions, refuse_reading


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """Sessions of several formats, some in folders of their own (a Cline task, Gemini's)."""
    formats = ("claude_code", "codex", "gemini", "cline", "mini_swe_agent", "aider")
    return fixture_sessions(tmp_path, formats)


def test_a_folder_asked_for_again_is_answered_without_reading(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = sessions(folder, workers=1, progress=False)
    assert len(first) > 5 and first["problem"].isna().sum() > 5
    refuse_reading(monkeypatch)  # any file read says so in its row
    again = sessions(folder, workers=1, progress=False)
    pd.testing.assert_frame_equal(again, first)
    again.loc[0, "name"] = "changed by the caller"  # a copy: the next answer is not changed
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), first)
    with pytest.raises(UsageError, match="workers must be"):  # refused, kept table or not
        sessions(folder, workers=0, progress=False)
    # Other suffixes are another question: read.
    other = sessions(folder, suffixes=[".jsonl"], workers=1, progress=False)
    assert set(other["problem"]) == {"read again"}


def _records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    try:
        return [json.loads(text)]
    except ValueError:
        out = []
        for line in text.splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out


def _files() -> list[Path]:
    corpus = corpus_dir() / "raw"
    found = sorted(p for p in corpus.rglob("*") if p.suffix in (".jsonl", ".json", ".traj"))
    found = found[::7][:24] if found else []  # every format of the corpus, a sample of each
    fixtures = sorted(p for p in FIXTURES.rglob("*") if p.suffix in (".jsonl", ".json"))
    return found + fixtures


def test_the_walk_straight_into_a_files_inventory_finds_what_the_record_by_record_walk_did() -> (
    None
):
    # Outside a load, the records are walked straight into one inventory; within one, each
    # record's inventory is kept and merged (the way every inventory was taken before) — but
    # at the load's last walk, where only those walked before are merged.
    compared = 0
    for path in _files():
        values = _records(path)
        straight = inventory_of(values)
        with remembered():
            merged = inventory_of(values)
        assert straight.cut == merged.cut, path
        for kind in straight.findings:
            # The same keys, in the same order, each with the same first finding.
            assert list(straight.findings[kind].items()) == list(merged.findings[kind].items()), (
                path,
                kind,
            )
        # A load's last walk (`account_for`'s): the records it set aside before — here every
        # third — from their kept inventories, the others straight into the whole.
        with remembered():
            for value in values[::3]:
                inventory_of([value])
            last = inventory_of(values, last=True)
        assert straight.cut == last.cut, path
        for kind in straight.findings:
            assert list(straight.findings[kind].items()) == list(last.findings[kind].items()), (
                path,
                kind,
            )
        compared += sum(straight.counts().values())
    # The fixtures alone hold some 600 findings; with the corpus (CTXLAB_CORPUS), over 1,000.
    assert compared > (1_000 if (corpus_dir() / "raw").is_dir() else 400)


_names = st.sampled_from(
    ["input_tokens", "usage", "tokens", "max_tokens", "id", "text", "promptTokenCount", "x"]
)
_values = st.one_of(st.integers(0, 10**6), st.text(max_size=4), st.none(), st.booleans())


@given(
    st.sampled_from(["", "usage", "usageMetadata", "message", "tokens"]),
    st.lists(st.dictionaries(_names, _values, max_size=5), min_size=1, max_size=6),
)
def test_the_shape_memo_never_says_no_to_what_is_usage(
    key: str, objects: list[dict[str, Any]]
) -> None:
    for item in objects * 2:  # the second time from the memo
        expected = is_usage(key, item)
        assert (_may_be_usage(key_flags(key), item) and is_usage(key, item)) == expected
        if not _may_be_usage(key_flags(key), item):
            assert not expected


def test_a_link_to_a_parent_folder_is_not_walked_for_ever(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (folder / "claude_code" / "loop").symlink_to(folder, target_is_directory=True)
    first = sessions(folder, workers=1, progress=False)
    refuse_reading(monkeypatch)
    # Its state is known (no endless walk ending in an error): the table kept is the answer.
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), first)


def _stored_opencode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    # OpenCode's storage, asked for by its session/ folder: the messages and parts its row
    # reads lie beside it, outside the folder (copied with their times: settled long ago).
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(tmp_path / "cache"))
    storage = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", storage)
    forget()
    text = next(
        p
        for p in sorted((storage / "part").rglob("*.json"))
        if json.loads(p.read_text())["type"] == "text"
    )
    return storage / "session", text


def _rewrite_settled(path: Path, text: str) -> None:
    # A new text with a modification time a second later, still long past (a change the
    # state can tell, not a file too recent to keep any table for).
    before = path.stat()
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))


def test_a_session_read_from_beside_the_folder_is_read_again_when_what_it_read_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, part = _stored_opencode(tmp_path, monkeypatch)
    first = sessions(folder, workers=1, progress=False)
    assert len(first) == 1 and first["problem"].isna().all()
    value = json.loads(part.read_text())
    value["text"] += " and many more words than it said before, " * 20
    _rewrite_settled(part, json.dumps(value))
    changed = sessions(folder, workers=1, progress=False)  # in memory: kept under the old state
    assert changed.loc[0, "conversation_tokens"] > first.loc[0, "conversation_tokens"] + 100
    _sessions_cache._KEPT.clear()  # a new process: its table from disk is the new one
    refuse_reading(monkeypatch)
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), changed)


def test_a_session_read_from_beside_the_folder_is_kept_while_nothing_it_read_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The control: the same folder, nothing changed beside it — answered without reading,
    # from memory and then from disk.
    folder, _ = _stored_opencode(tmp_path, monkeypatch)
    first = sessions(folder, workers=1, progress=False)
    refuse_reading(monkeypatch)
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), first)
    _sessions_cache._KEPT.clear()
    pd.testing.assert_frame_equal(sessions(folder, workers=1, progress=False), first)


def _settled(*paths: Path) -> None:
    # Modified a minute ago: long enough past for the state to keep a table.
    for path in paths:
        stat = path.stat()
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns - 60_000_000_000))


def test_what_a_session_reads_in_a_hidden_folder_of_the_folder_is_watched_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A format whose read looks at a hidden folder beside its file (`SessionFormat.reads`):
    # the folder's own walk sets hidden folders aside, so what it names there must be watched
    # as what it names outside the folder is.
    import dataclasses

    from ctxlab import register_format
    from ctxlab.io import _registry
    from tests.io.outside_format import RUN, TINYLOG

    notes = tmp_path / ".notes" / "run.txt"
    notes.parent.mkdir()
    notes.write_text("first")
    session = tmp_path / "run.tiny"
    shutil.copyfile(RUN, session)
    _settled(notes, session)
    register_format(dataclasses.replace(TINYLOG, reads=lambda path: [path.parent / ".notes"]))
    try:
        forget()
        first = sessions(tmp_path, workers=1, progress=False)
        assert first["problem"].isna().all()
        refuse_reading(monkeypatch)
        # The control: nothing changed, the table kept is the answer.
        pd.testing.assert_frame_equal(sessions(tmp_path, workers=1, progress=False), first)
        notes.write_text("second, longer")
        _settled(notes)
        again = sessions(tmp_path, workers=1, progress=False)
    finally:
        _registry.forget_format(TINYLOG.name)
    assert set(again["problem"]) == {"read again"}  # not the table kept before the change


def test_a_record_set_aside_is_given_its_inventory_and_the_kept_one_stays_as_walked() -> None:
    # `Census.set_aside_in` is given a copy of the record's kept inventory: a caller that adds
    # to it does not change what the whole file's last walk merges for that record.
    record = {"id": "r1", "message": {"role": "assistant", "content": "hi", "id": "m1"}}
    with remembered():
        given = inventory_of([record])
        assert given.counts() == {"reply": 1}
        given.findings["reply"]["reply@stray"] = given.findings["reply"]["reply@id=m1"]
        given.cut = True
        whole = inventory_of([record], last=True)
    assert list(whole.findings["reply"]) == ["reply@id=m1"] and not whole.cut


def test_a_read_holds_the_collector_off_and_lets_it_run_again_even_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The collector examined a file's records again and again while they were read (a fifth
    # of `sessions`' CPU): held off for the read, on again after, whatever the read raised.
    import gc

    from ctxlab.exceptions import MessageFormatError
    from ctxlab.io import _load
    from ctxlab.io._folder import session_rows

    seen: list[bool] = []
    real = _load._load

    def spying(*args: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args)

    monkeypatch.setattr(_load, "_load", spying)
    good = tmp_path / "a.jsonl"
    good.write_text('{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n')
    bad = tmp_path / "b.json"
    bad.write_text('{"nothing": "of a session"}')
    assert gc.isenabled()
    assert len(_load.read(good).messages) == 2 and gc.isenabled()
    with pytest.raises(MessageFormatError):
        _load.read(bad)
    assert gc.isenabled()
    rows = session_rows([good, bad])
    assert [r[0]["messages"] for r in rows] == [2, None] and gc.isenabled()
    assert seen == [False, False, False, False]
