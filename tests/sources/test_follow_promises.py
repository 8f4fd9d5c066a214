"""What `follow` promises beyond growing with its file, on the values a user reads: subagent
lines left out unless asked for, the config, counter and name given, replies told apart by their
line when they carry no id, a blank line skipped and not an end, damaged lines counted once per
file, a file renamed over the name read from its start, how many steps each poll added, and a
background poll that keeps going, says why it stopped, and ends on `stop`."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxlab import ApproximateCounter, ContextConfig, follow
from ctxlab.exceptions import MessageFormatError
from ctxlab.sources._follow import FollowedSession


def _line(kind: str, content: Any, **extra: Any) -> bytes:
    message = {"role": kind, "content": content}
    if "id" in extra:
        message["id"] = extra.pop("id")
    record = {"type": kind, "sessionId": "s1", "message": message, **extra}
    return (json.dumps(record) + "\n").encode()


def _turns(*texts: str, sidechain: bool = False) -> bytes:
    """A user line and an id-less reply line per text (the reply quotes it)."""
    return b"".join(
        _line("user", text, isSidechain=sidechain)
        + _line("assistant", [{"type": "text", "text": f"re: {text}"}], isSidechain=sidechain)
        for text in texts
    )


def _texts(session: FollowedSession) -> list[str]:
    return [
        block.text  # type: ignore[union-attr]
        for message in session.transcript().messages
        for block in message.content  # type: ignore[union-attr]
        if block.type == "text"
    ]


async def _followed(path: Path, **kwargs: Any) -> FollowedSession:
    kwargs.setdefault("counter", ApproximateCounter())
    return await follow(path, context_window=20_000, interval=60, **kwargs)


async def test_subagent_lines_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("main one") + _turns("helper", sidechain=True) + _turns("main two"))
    main = await _followed(path)
    await main.stop()
    assert _texts(main) == ["main one", "re: main one", "main two", "re: main two"]
    assert main.meta["skipped"]["sidechain"] == 2
    spliced = await _followed(path, sidechains=True)
    await spliced.stop()
    assert "re: helper" in _texts(spliced) and len(spliced.manifests) == 3


async def test_the_config_counter_and_name_given_are_used(tmp_path: Path) -> None:
    path = tmp_path / "build-log.jsonl"
    result = {"type": "tool_result", "tool_use_id": "t1", "content": "line of output\n" * 400}
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}
    path.write_bytes(
        _line("user", "Build it.")
        + _line("assistant", [call], id="m1")
        + _line("user", [result])
        + _line("assistant", [{"type": "text", "text": "Built."}], id="m2")
    )
    config = ContextConfig(tool_result_limit=100)
    counter = ApproximateCounter()
    session = await follow(path, context_window=20_000, config=config, counter=counter, interval=60)
    await session.stop()
    assert session.name == "build-log"
    assert session.context_config == config
    assert [m.counting_method for m in session.manifests] == [counter.method] * 2
    cut = [t for t in session.manifests[1].transforms if t.kind == "tool_result_truncation"]
    assert [t.target for t in cut] == ["t1"]


async def test_replies_without_an_id_are_told_apart_by_their_line(tmp_path: Path) -> None:
    # Claude Code keys a response's lines by its message id; without one, by the line: two
    # id-less replies are two replies, never one.
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("first", "second", "third"))
    session = await _followed(path)
    await session.stop()
    assert _texts(session) == ["first", "re: first", "second", "re: second", "third", "re: third"]
    assert len(session.manifests) == 3


async def test_a_blank_line_is_skipped_and_the_lines_after_it_read(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("first") + b"\n   \n" + _turns("second", "third"))
    session = await _followed(path)
    await session.stop()
    assert len(session.manifests) == 3 and _texts(session)[-1] == "re: third"
    assert session.skipped_lines == 0


async def test_damaged_lines_are_counted_once_each_and_again_from_zero_for_a_new_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("first") + b"{broken\n")
    session = await _followed(path)
    with path.open("ab") as file:
        file.write(b"\xff\xfe not utf-8\n" + _turns("second", "third"))
    await session.poll()
    await session.poll()  # nothing new: nothing counted twice
    assert session.skipped_lines == 2
    assert session.meta["skipped"]["unreadable line"] == 2
    # Another session written over the name: its own damaged lines only.
    path.write_bytes(_turns("other") + b"[not, json\n" + _turns("other two", "other three") * 2)
    await session.stop()
    assert session.skipped_lines == 1
    assert session.meta["skipped"]["unreadable line"] == 1
    assert _texts(session)[0] == "other"


async def test_a_file_renamed_over_the_name_is_read_from_its_start(tmp_path: Path) -> None:
    # The new file begins as the old one did and is longer: only its inode tells it apart.
    path = tmp_path / "session.jsonl"
    start = _turns("the same long opening message " * 12)
    path.write_bytes(start + _turns("old ending"))
    session = await _followed(path)
    await session.poll()
    replacement = tmp_path / "next.jsonl"
    replacement.write_bytes(start + _turns("new ending, longer than the old one", "and more"))
    os.replace(replacement, path)
    await session.stop()
    texts = _texts(session)
    assert "old ending" not in texts
    assert texts[-4:] == [
        "new ending, longer than the old one",
        "re: new ending, longer than the old one",
        "and more",
        "re: and more",
    ]
    assert len(session.manifests) == 3


async def test_each_poll_says_how_many_steps_it_added(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"")
    session = await _followed(path)
    assert session.meta == {} and session.manifests == []
    assert await session.poll() == 0  # an empty file
    assert await session.poll(final=True) == 0  # nothing read yet, even at the end
    with path.open("ab") as file:
        file.write(_turns("one", "two", "three", "four"))
    # Four replies: the first three are known complete (a later one began), the last is not.
    assert await session.poll() == 3
    assert await session.poll() == 0
    assert await session.poll(final=True) == 1
    assert len(session.manifests) == 4


async def test_a_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one"))
    session = await _followed(path)
    path.unlink()
    with pytest.raises(MessageFormatError) as caught:
        await session.poll()
    assert str(caught.value) == f"cannot read {path}: No such file or directory"


async def test_the_background_poll_keeps_going_and_says_why_it_stopped(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one"))
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=0.01)
    for text in ("two", "three"):
        with path.open("ab") as file:
            file.write(_turns(text))
        for _ in range(1_000):
            if _texts(session)[-1:] == [f"re: {text}"] or len(session.manifests) >= 2:
                break
            await asyncio.sleep(0.01)
    for _ in range(1_000):  # two polls at least after the last write
        if len(session.manifests) == 2:
            break
        await asyncio.sleep(0.01)
    assert len(session.manifests) == 2 and session.error is None
    task = session.start()  # the same task while it runs
    assert not task.done()
    path.unlink()
    for _ in range(1_000):
        if session.error is not None:
            break
        await asyncio.sleep(0.01)
    assert isinstance(session.error, MessageFormatError)
    assert str(session.error).startswith(f"cannot read {path}")


async def test_stop_ends_the_background_poll(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one", "two"))
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=0.01)
    task = session.start()
    await session.stop()
    assert task.cancelled()
    assert len(session.manifests) == 2


async def test_a_line_that_is_no_message_is_named_by_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    # Line 3 is blank, line 5 is JSON but no object: the error names the file and line 5.
    path.write_bytes(_turns("one") + b"\n" + _line("user", "two") + b"[1, 2]\n")
    with pytest.raises(MessageFormatError) as caught:
        await _followed(path)
    assert str(caught.value) == f"{path} line 5: not a JSON object"


async def test_what_was_left_out_is_counted_by_reason(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one") + _turns("helper", sidechain=True) + b"{x\n" + _turns("two"))
    session = await _followed(path)
    await session.stop()
    assert session.meta["skipped"] == {"sidechain": 2, "unreadable line": 1}


async def test_a_followed_session_observes_and_leaves_subagents_out_by_default(
    tmp_path: Path,
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one") + _turns("helper", sidechain=True) + _turns("two"))
    session = FollowedSession(path, context_window=20_000, counter=ApproximateCounter())
    assert session.mode == "observe"  # the agent in the file already sent its own requests
    await session.poll(final=True)
    assert _texts(session) == ["one", "re: one", "two", "re: two"]


async def test_lines_are_numbered_from_the_start_of_a_file_written_over_the_name(
    tmp_path: Path,
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(_turns("one", "two", "three"))
    session = await _followed(path)
    path.write_bytes(_turns("a different, longer first message") + b"42\n" + _turns("x") * 3)
    with pytest.raises(MessageFormatError) as caught:
        await session.poll()
    assert str(caught.value) == f"{path} line 3: not a JSON object"
