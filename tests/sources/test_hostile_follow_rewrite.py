"""`follow` tells a rewrite from an append by more than the file's first bytes: a Claude Code
file truncated and written again in place (the same inode) with another history that shares its
first 300 bytes — longer than the old one, or of the same length — is read again from the top,
never spliced onto what was read; an append still adds to what was prepared, which stays as it
was."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import ApproximateCounter, load
from ctxlab.sources._follow import FollowedSession

SHARED = "Find the bug in the parser. " * 12  # the first line: over 300 bytes, in both histories


def _line(role: str, text: str, n: int) -> bytes:
    message: dict[str, Any] = {"role": role, "content": text}
    if role == "assistant":
        message = {
            "id": f"m{n}",
            "role": role,
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 100 + n, "output_tokens": 5},
        }
    record = {"type": role, "sessionId": "s1", "message": message}
    return (json.dumps(record) + "\n").encode()


def _history(*turns: str) -> bytes:
    lines = [_line("user", SHARED, 0)]
    for n, text in enumerate(turns, 1):
        lines.append(_line("assistant" if n % 2 else "user", text, n))
    return b"".join(lines)


OLD = _history("Old reply one.", "Old question.", "Old reply two.")
NEW = _history(
    "New reply one, another history.",
    "New question two.",
    "New reply two.",
    "New question three.",
    "New reply three.",
)


def _rewrite_in_place(path: Path, data: bytes) -> None:
    # Truncate and write through the same open file: the inode stays.
    with path.open("r+b") as file:
        file.truncate(0)
        file.write(data)


def _texts(messages: Any) -> list[str]:
    return [b.text for m in messages for b in m.content if b.type == "text"]


async def _followed(path: Path) -> FollowedSession:
    session = FollowedSession(path, context_window=50_000, counter=ApproximateCounter())
    await session.poll()
    return session


async def test_a_history_rewritten_in_place_is_read_from_its_top(tmp_path: Path) -> None:
    assert OLD[:300] == NEW[:300] and len(NEW) > len(OLD)
    path = tmp_path / "session.jsonl"
    path.write_bytes(OLD)
    session = await _followed(path)
    assert len(session.manifests) == 1  # the first old reply, complete
    inode = path.stat().st_ino
    _rewrite_in_place(path, NEW)
    assert path.stat().st_ino == inode
    await session.poll(final=True)
    loaded = load(path)
    assert len(loaded.messages) == 6
    assert session.transcript().messages == loaded.messages
    assert not any(t.startswith("Old") for t in _texts(session.transcript().messages))
    # One request per reply of the new history, each prepared from the new messages alone.
    assert len(session.manifests) == 3
    assert [m.validation for m in session.manifests] == ["passed"] * 3


async def test_a_rewrite_of_the_same_length_that_differs_in_the_middle(tmp_path: Path) -> None:
    same = OLD.replace(b"Old question.", b"Odd question.")
    assert len(same) == len(OLD) and same[:300] == OLD[:300]
    path = tmp_path / "session.jsonl"
    path.write_bytes(OLD)
    session = await _followed(path)
    _rewrite_in_place(path, same + _line("user", "And more.", 9) + _line("assistant", "Done.", 9))
    await session.poll(final=True)
    assert session.transcript().messages == load(path).messages
    assert "Odd question." in _texts(session.transcript().messages)


async def test_an_append_adds_to_what_was_prepared(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(OLD)
    session = await _followed(path)
    (first,) = session.manifests
    with path.open("ab") as file:
        file.write(_line("user", "And then?", 4) + _line("assistant", "Then this.", 5))
    assert await session.poll() == 1  # the second old reply, now complete
    assert session.manifests[0] is first  # kept, not prepared again
    await session.poll(final=True)
    assert session.transcript().messages == load(path).messages
    assert len(session.manifests) == 3 and session.resyncs == 0


async def test_a_file_not_written_since_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An idle poll costs a stat: what was read is checked again only once the file changed.
    path = tmp_path / "session.jsonl"
    path.write_bytes(OLD)
    session = await _followed(path)
    checks: list[int] = []
    check = session._still_read
    monkeypatch.setattr(session, "_still_read", lambda *a: checks.append(1) or check(*a))
    for _ in range(3):
        assert await session.poll() == 0
    assert checks == []
    with path.open("ab") as file:
        file.write(_line("user", "And then?", 4) + _line("assistant", "Then this.", 5))
    assert await session.poll() == 1 and checks == [1]
