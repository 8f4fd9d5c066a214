"""`follow`: a Claude Code session file read while it is being written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import ApproximateCounter, follow, load
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import AssistantMessage
from tests.conftest import requires_corpus


def _line(kind: str, content: Any, **extra: Any) -> bytes:
    message = {"role": kind, "content": content, **extra}
    record = {"type": kind, "sessionId": "s1", "message": message}
    return (json.dumps(record) + "\n").encode()


def _usage(tokens: int) -> dict[str, int]:
    return {"input_tokens": tokens, "output_tokens": 5, "cache_read_input_tokens": 100}


SESSION = [
    _line("user", "Find the bug."),
    # One response written as two lines (text, then the call), as Claude Code does.
    _line("assistant", [{"type": "text", "text": "Looking."}], id="m1", usage=_usage(10)),
    _line(
        "assistant",
        [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
        id="m1",
        usage=_usage(10),
    ),
    _line("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py"}]),
    _line("assistant", [{"type": "text", "text": "It is in a.py."}], id="m2", usage=_usage(20)),
]


async def test_steps_appear_as_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION[0] + SESSION[1])
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=60)
    events: list[Any] = []
    session.subscribe(events.append)
    try:
        # The first reply is not known to be complete until another one begins.
        assert session.manifests == []
        with path.open("ab") as file:
            file.write(SESSION[2] + SESSION[3] + SESSION[4][:30])  # the last line half-written
        assert await session.poll() == 0
        with path.open("ab") as file:
            file.write(SESSION[4][30:])
        assert await session.poll() == 1
        first = session.manifests[0]
        assert first.validation == "passed"
        usage = [e for e in events if e.type == "model_response"]
        assert [(e.request_id, e.usage.input_tokens) for e in usage] == [("step-0", 10)]
        # The reply holds both lines of the response.
        assert [b.type for b in usage[0].message.content] == ["text", "tool_use"]
    finally:
        await session.stop()
    assert len(session.manifests) == 2  # stop prepares the last request
    assert session.error is None


async def test_the_background_poll_feeds_a_lab(tmp_path: Path) -> None:
    pytest.importorskip("ipywidgets")
    from ctxlab.widgets import Lab

    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION[0])
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=0.01)
    lab = Lab(session)
    with path.open("ab") as file:
        file.write(b"".join(SESSION[1:]))
    for _ in range(200):
        if len(lab.steps) == 1:
            break
        await asyncio.sleep(0.01)
    assert len(lab.steps) == 1
    await session.stop()
    assert len(lab.steps) == 2
    assert lab.steps["usage_total_input"].tolist() == [110, 120]


async def test_a_damaged_line_is_counted_and_the_turns_after_it_still_read(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(SESSION[0] + b"{not json\n" + b"".join(SESSION[1:]))
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=60)
    await session.stop()
    assert session.error is None and len(session.manifests) == 2
    assert session.skipped_lines == 1 and session.meta["skipped"]["unreadable line"] == 1


async def test_a_file_replaced_by_another_session_is_read_from_its_start(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(SESSION))
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=60)
    await session.poll()
    # Another, longer session written under the same name: never spliced onto the first.
    other = _line("user", "A different task, in a longer file.") + b"".join(SESSION[1:]) * 2
    path.write_bytes(other)
    await session.stop()
    texts = [b.text for m in session.transcript().messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert texts[0] == "A different task, in a longer file."
    assert "Find the bug." not in texts


async def test_after_stop_the_transcript_holds_the_last_reply(tmp_path: Path) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(b"".join(SESSION))
    session = await follow(path, context_window=20_000, counter=ApproximateCounter(), interval=60)
    await session.stop()
    transcript = session.transcript()
    assert transcript.messages == load(path).messages
    assert transcript.messages[-1].content[0].text == "It is in a.py."  # type: ignore[union-attr]


@requires_corpus
async def test_a_real_session_followed_in_pieces_matches_loading_it_whole(tmp_path: Path) -> None:
    source = sorted((corpus_dir() / "raw" / "claude_code").glob("*.jsonl"))[0]
    data = source.read_bytes()[:400_000]
    data = data[: data.rindex(b"\n") + 1]
    path = tmp_path / source.name
    path.write_bytes(b"")
    session = await follow(path, context_window=200_000, counter=ApproximateCounter(), interval=60)
    for start in range(0, len(data), 37_000):  # chunks that cut lines anywhere
        with path.open("ab") as file:
            file.write(data[start : start + 37_000])
        await session.poll()
    await session.stop()
    whole = load(path)
    replies = sum(isinstance(m, AssistantMessage) for m in whole.messages)
    assert len(session.manifests) == replies
    assert all(m.validation == "passed" for m in session.manifests)
    assert session.resyncs == 0


async def test_a_followed_response_is_billed_its_final_output(tmp_path: Path) -> None:
    # Claude Code writes a response line by line, its output growing to its last line: a
    # request is reported once its reply is whole, with the usage the file ends it on.
    from ctxlab.events import ModelResponseEvent
    from tests.io.test_claude_code_usage import SESSION as REAL
    from tests.io.test_claude_code_usage import file_bill

    path = tmp_path / REAL.name
    path.write_bytes(b"")
    session = await follow(path, context_window=200_000, counter=ApproximateCounter(), interval=60)
    outputs: list[int] = []
    session.subscribe(
        lambda e: (
            outputs.append(e.usage.output_tokens)
            if isinstance(e, ModelResponseEvent) and e.usage is not None
            else None
        )
    )
    for line in REAL.read_bytes().splitlines(keepends=True):
        with path.open("ab") as file:
            file.write(line)
        await session.poll()
    await session.stop()
    assert outputs == [bill[1] for bill in file_bill(REAL)]
