"""`sessions` on a folder where some files changed reads only the sessions whose inputs changed
— a session's own file, or what its format reads beside it (a Claude Code subagent's file, a
Cline task's UI log, an OpenHands conversation's event, an OpenCode message or part) — and
answers the table a cold call makes."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ctxlab.io._folder as folder_module
from ctxlab import sessions
from ctxlab.io import _sessions_cache, _sessions_rows
from ctxlab.io._sessions_cache import forget
from ctxlab.io.formats.opencode import FORMAT as OPENCODE
from tests.io.kept_tables import FIXTURES, fixture_sessions

_FORMATS = (
    "claude_code",
    "codex",
    "gemini",
    "cline",
    "mini_swe_agent",
    "aider",
    "openhands",
    "opencode",
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Fifty sessions of several formats, copied with their times (settled long ago)."""
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(tmp_path / "cache"))
    root = fixture_sessions(tmp_path / "sessions", _FORMATS)
    rollouts = sorted((root / "codex").glob("*.jsonl"))
    count = len(folder_module._session_files(root, folder_module.session_suffixes()))
    for n in range(50 - count):  # copies of Codex rollouts, up to fifty sessions
        shutil.copy2(rollouts[n % len(rollouts)], root / "codex" / f"copy-{n}.jsonl")
    return root


def _watch_reading(monkeypatch: pytest.MonkeyPatch) -> set[Path]:
    """The paths `sessions` reads from now on (each read as before)."""
    seen: set[Path] = set()
    real = folder_module.read

    def counted(path: Path, **kwargs: Any) -> Any:
        seen.add(Path(path))
        return real(path, **kwargs)

    monkeypatch.setattr(folder_module, "read", counted)
    return seen


def _changed(path: Path, change: Callable[[str], str]) -> None:
    # A new text, its time a minute past (settled: a change the state can tell).
    before = path.stat()
    path.write_text(change(path.read_text(encoding="utf-8")), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns - 60_000_000_000))


def _cold(root: Path) -> pd.DataFrame:
    forget()  # nothing kept, in memory or on disk
    return sessions(root, workers=1, progress=False)


def _grown(text: str) -> str:
    return text + json.dumps({"type": "noise"}) + "\n"


@pytest.mark.parametrize("change", ["grown", "touched"])
def test_one_changed_file_of_fifty_is_the_only_one_read_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    first = sessions(folder, workers=1, progress=False)
    assert first["path"].nunique() == 50 and first["problem"].isna().sum() >= 40
    one = folder / "codex" / "copy-3.jsonl"
    if change == "grown":
        _changed(one, _grown)
    else:  # the same size, another modification time
        stat = one.stat()
        os.utime(one, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    seen = _watch_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    assert seen == {one}
    pd.testing.assert_frame_equal(again, _cold(folder))
    assert (again["path"] == str(one)).sum() == 1


def _session_of(folder: Path, relative: str) -> Path:
    return next(folder.glob(relative))


_BESIDE = {
    # What changes, beside a session: the session whose rows read it.
    "a subagent's file": (
        "claude_code/*/subagents/agent-*.jsonl",
        "claude_code/*.jsonl",
    ),
    "a Cline task's UI log": (
        "cline/saoudrizwan.claude-dev/tasks/*/ui_messages.json",
        "cline/saoudrizwan.claude-dev/tasks/*/api_conversation_history.json",
    ),
    "an OpenHands event": (
        "openhands/v1/conversation/*/events/event-00003-*.json",
        "openhands/v1/conversation/*/base_state.json",
    ),
    "an OpenCode message": (
        "opencode/storage/message/*/msg_*01ZM07GcDYAneK.json",
        "opencode/storage/session/*/*.json",
    ),
    "an OpenCode part": (
        "opencode/storage/part/*/prt_*25ZM07GcDYAneK.json",
        "opencode/storage/session/*/*.json",
    ),
}


@pytest.mark.parametrize("change", sorted(_BESIDE))
def test_a_file_read_beside_a_session_reads_that_session_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    part_glob, session_glob = _BESIDE[change]
    part, session = _session_of(folder, part_glob), _session_of(folder, session_glob)
    sessions(folder, workers=1, progress=False)
    _changed(part, lambda text: text.rstrip() + "\n\n")
    seen = _watch_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    # The session read again, and a file that is a session of its own too (a subagent's).
    assert seen == ({session, part} if part.suffix == ".jsonl" else {session})
    pd.testing.assert_frame_equal(again, _cold(folder))


def test_a_file_changed_in_the_last_two_seconds_is_read_at_every_call(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The live session (its file grows while the tool runs): never kept, the others are.
    sessions(folder, workers=1, progress=False)
    live = folder / "codex" / "copy-0.jsonl"
    live.write_text(_grown(live.read_text()))  # just now
    seen = _watch_reading(monkeypatch)
    for _ in range(2):
        sessions(folder, workers=1, progress=False)
        assert seen == {live}
        seen.clear()


def test_a_new_process_reads_only_what_changed_since_the_rows_on_disk(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions(folder, workers=1, progress=False)
    _sessions_cache._KEPT.clear()  # a new process: nothing in memory
    _sessions_rows._KEPT.clear()
    one = next((folder / "gemini").glob("*.json"))
    _changed(one, lambda text: text + " ")
    seen = _watch_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    assert seen == {one}
    pd.testing.assert_frame_equal(again, _cold(folder))


def test_a_session_removed_or_added_changes_only_its_own_rows(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sessions(folder, workers=1, progress=False)
    (folder / "codex" / "copy-1.jsonl").unlink()
    added = folder / "codex" / "added.jsonl"
    shutil.copy2(folder / "codex" / "copy-2.jsonl", added)
    seen = _watch_reading(monkeypatch)
    again = sessions(folder, workers=1, progress=False)
    assert seen == {added}
    assert str(folder / "codex" / "copy-1.jsonl") not in set(again["path"])
    pd.testing.assert_frame_equal(again, _cold(folder))


def _opencode_storage(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the OpenCode fixture's storage and its session's file."""
    storage = tmp_path / "storage"
    shutil.copytree(FIXTURES / "opencode" / "storage", storage)
    return storage, next((storage / "session").rglob("*.json"))


def test_an_opencode_session_reads_its_own_messages_and_parts_not_the_whole_storage(
    tmp_path: Path,
) -> None:
    storage, session = _opencode_storage(tmp_path)
    # Another session's messages and parts in the same storage: not read for this one.
    other = storage / "message" / "ses_other"
    other.mkdir()
    (other / "msg_other.json").write_text(json.dumps({"id": "msg_other", "role": "user"}))
    (storage / "part" / "msg_other").mkdir()
    messages = sorted((storage / "message" / session.stem).glob("*.json"))
    assert len(messages) == 8
    expected = {storage / "message" / session.stem} | {storage / "part" / m.stem for m in messages}
    assert OPENCODE.reads is not None
    assert set(OPENCODE.reads(session)) == expected
    # A message whose id is not its file's name: its parts are read by its id.
    first = json.loads(messages[0].read_text())
    messages[0].write_text(json.dumps({**first, "id": "msg_renamed"}))
    assert storage / "part" / "msg_renamed" in set(OPENCODE.reads(session))


def test_an_opencode_message_rewritten_within_the_clock_tick_is_read_again(
    tmp_path: Path,
) -> None:
    # Its id names the folder of its parts: a rewrite of the same size that keeps the file's
    # time (within the clock's tick) must not keep the old id (a memo by path, size and time
    # kept it, the parts of the message that was named then read instead).
    storage, session = _opencode_storage(tmp_path)
    message = sorted((storage / "message" / session.stem).glob("*.json"))[0]
    assert OPENCODE.reads is not None
    now = time.time_ns()  # (both writes given one time of now: the memo's rule is by the clock)
    for named in ("msg_aaaa", "msg_bbbb"):
        message.write_text(json.dumps({"id": named, "role": "user"}))
        os.utime(message, ns=(now, now))
        assert storage / "part" / named in set(OPENCODE.reads(session)), named


def test_an_opencode_session_known_by_its_storage_once_a_message_folder_comes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A session with no message yet is an OpenCode session only once the storage has a
    # `message/` folder (any session's): its coming changes that session's row, though none
    # of its own files changed.
    monkeypatch.setenv("CTXLAB_SESSIONS_CACHE", str(tmp_path / "cache"))
    storage = tmp_path / "storage"

    def settled(path: Path, value: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))

    alone = storage / "session" / "proj" / "ses_a.json"
    settled(alone, {"id": "ses_a", "title": "a"})
    first = sessions(storage, workers=1, progress=False)
    assert "cannot tell the format" in first.loc[0, "problem"]  # (no storage around it yet)
    settled(storage / "session" / "proj" / "ses_b.json", {"id": "ses_b", "title": "b"})
    settled(storage / "message" / "ses_b" / "msg_1.json", {"id": "msg_1", "role": "user"})
    seen = _watch_reading(monkeypatch)
    again = sessions(storage, workers=1, progress=False)
    assert alone in seen
    assert "no messages" in again.set_index("path").loc[str(alone), "problem"]
    pd.testing.assert_frame_equal(again, _cold(storage))
