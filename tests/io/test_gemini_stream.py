"""Gemini CLI ``stream-json`` output (``tests/fixtures/gemini_stream``, hand-made from the CLI's
own event types): the prompt, each reply's streamed chunks joined, calls paired with their
results (failures as errors), the session's totals kept as totals — checked against the test's
own reading of the lines; ``--output-format json`` refused saying what to record; hostile
streams refused with a typed error or loaded with their losses counted (the fixture mutated or
cut short: `test_census_mutations`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io._detect import detect_lines
from tests.io.shown import added_up, census_read, texts

FOLDER = Path(__file__).parents[1] / "fixtures" / "gemini_stream"
STREAM = FOLDER / "stream-json.jsonl"


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in STREAM.read_text().splitlines() if line.strip()]


def test_a_stream_loads_whole() -> None:
    events = _events()
    transcript = load(STREAM)
    assert transcript.meta["source"] == "gemini_stream"
    assert transcript.meta["models"] == [events[0]["model"]]
    # The test's own reading: the assistant chunks between two other events make one text.
    replies: list[str] = []
    open_reply = False
    for event in events:
        if event["type"] == "message" and event["role"] == "assistant":
            if open_reply:
                replies[-1] += event["content"]
            else:
                replies.append(event["content"])
            open_reply = True
        else:
            open_reply = False
    replied = texts(transcript)
    assert replied == replies
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == [e["tool_id"] for e in events if e["type"] == "tool_use"]
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    raw = [e for e in events if e["type"] == "tool_result"]
    assert [r.tool_use_id for r in results] == [e["tool_id"] for e in raw]
    assert [bool(r.is_error) for r in results] == [e["status"] == "error" for e in raw]
    assert results[-1].text == raw[-1]["error"]["message"]
    prompt = next(e for e in events if e["type"] == "message" and e["role"] == "user")
    assert transcript.messages[0].content[0].text == prompt["content"]  # type: ignore[union-attr]
    # One request per loop: the prompt, then each batch of results.
    assert sum(m.role == "assistant" for m in transcript.messages) == 3
    # No usage per request in the stream: the totals are kept as totals.
    assert transcript.usage == {}
    assert transcript.meta["session_stats"] == events[-1]["stats"]
    assert transcript.meta["skipped"] == {"warning event": 1, "result (the session's totals)": 1}


def test_json_output_is_refused_saying_what_to_record() -> None:
    with pytest.raises(MessageFormatError, match="--output-format stream-json"):
        load(FOLDER / "output.json")


def test_detected_from_its_first_line_not_taken_for_chat_messages() -> None:
    events = _events()
    assert detect_format(events[0]) == "gemini_stream"
    assert detect_format(events[1]) == "gemini_stream"  # a message line, not an OpenAI message
    assert detect_format(json.loads((FOLDER / "output.json").read_text())) == "gemini_stream"


def _shown(transcript: Any) -> list[tuple[str, list[str]]]:
    return [(m.role, [str(b.model_dump()) for b in m.content]) for m in transcript.messages]


def _bare(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in e.items() if k != "timestamp"} for e in events]


@pytest.mark.parametrize("shape", ["lines without timestamps", "a list", "a JSON array"])
def test_a_stream_without_its_init_line_is_read_as_a_stream(tmp_path: Path, shape: str) -> None:
    # The stream as a user may hand it over: cut before its first event, its timestamps
    # stripped, or as decoded events. It was taken for Anthropic messages, or for nothing.
    events = _events()[1:]
    source: Any
    if shape == "lines without timestamps":
        source = tmp_path / "run.jsonl"
        source.write_text("".join(json.dumps(e) + "\n" for e in _bare(events)))
    elif shape == "a list":
        source = events
    else:
        source = tmp_path / "run.json"
        source.write_text(json.dumps(events))
    transcript = load(source)
    assert transcript.meta["source"] == "gemini_stream"
    assert _shown(transcript) == _shown(load(STREAM))  # the conversation the whole stream holds
    assert sum(m.role == "assistant" for m in transcript.messages) == 3
    added_up(transcript)


def test_chat_items_that_look_like_stream_messages_stay_chat_items() -> None:
    # Control: OpenAI Responses items and an Anthropic message object are also ``type: message``
    # with a role and content; with no event only the stream writes, they are not a stream.
    responses = [
        {"type": "message", "role": "user", "content": "hi"},
        {"type": "message", "role": "assistant", "content": "hello"},
    ]
    assert detect_format(responses) == "openai_responses"
    anthropic = {"type": "message", "id": "msg_1", "role": "assistant", "model": "claude-x"}
    reply = {**anthropic, "content": "hello", "stop_reason": "end_turn"}
    chat = [{"role": "user", "content": "hi"}, reply]
    assert detect_format(chat) != "gemini_stream"
    assert detect_lines(list(enumerate(chat, 1))) == "anthropic"


def _stream(tmp_path: Path, events: list[dict[str, Any]]) -> Path:
    path = tmp_path / "run.jsonl"
    stamped = [{"timestamp": "2026-08-01T10:00:00Z", **e} for e in events]
    path.write_text("".join(json.dumps(e) + "\n" for e in stamped))
    return path


def test_each_event_is_read_as_the_module_says(tmp_path: Path) -> None:
    events = [
        {"type": "init", "session_id": "sess-1", "model": "gemini-2.5-pro"},
        {"type": "message", "role": "user", "content": "Fix it"},
        {"type": "message", "role": "assistant", "content": "Look", "delta": True},
        {"type": "message", "role": "assistant", "content": "ing.", "delta": True},
        {"type": "tool_use", "tool_id": "t1", "tool_name": "read_file", "parameters": {"p": 1}},
        {"type": "tool_use", "tool_id": "t2", "parameters": "not a mapping"},
        {"type": "tool_use", "tool_name": "ls", "parameters": {}},
        *({"type": "tool_use", "tool_id": f"t{n}", "tool_name": "x"} for n in (4, 5, 6)),
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": {"é": [1]}},
        {"type": "tool_result", "tool_id": "t2", "status": "success"},
        {"type": "tool_result", "tool_id": "t4", "status": "error", "error": {"message": "no"}},
        {"type": "tool_result", "tool_id": "t5", "status": "error", "output": "partial"},
        {"type": "tool_result", "tool_id": "t6", "status": "error", "error": {}},
        {"type": "message", "role": "assistant", "content": ""},
        {"type": "error", "severity": "warning", "message": "slow"},
        {"type": "error", "message": "no severity"},
        {"type": "message", "role": "user", "content": ""},
        {"type": "result", "status": "success", "stats": {"total_tokens": 12}},
    ]
    transcript = load(_stream(tmp_path, events), format="gemini_stream")
    meta = transcript.meta
    assert (meta["session_id"], meta["models"], meta["status"]) == (
        "sess-1",
        ["gemini-2.5-pro"],
        "success",
    )
    assert meta["session_stats"] == {"total_tokens": 12}
    replies = [m for m in transcript.messages if m.role == "assistant"]
    calls = [(b.id, b.name, b.input) for m in replies for b in m.tool_uses]
    assert calls[:2] == [("t1", "read_file", {"p": 1}), ("t2", "tool", {})]
    assert [c[0] for c in calls[3:]] == ["t4", "t5", "t6"]
    # A call without an id: named by the repairs (an id of its own), not by a placeholder.
    assert calls[2][1:] == ("ls", {}) and calls[2][0].startswith("call_")
    assert replies[0].content[0].text == "Looking."  # type: ignore[union-attr]
    results = [
        (r.tool_use_id, r.text, bool(r.is_error))
        for m in transcript.messages
        for r in (m.tool_results if m.role == "user" else ())
    ]
    by_id = {tool_use_id: (text, error) for tool_use_id, text, error in results}
    assert by_id["t1"] == ('{"é": [1]}', False)  # not a string: its JSON, unescaped
    assert by_id["t2"] == ("(no output)", False)
    assert by_id["t4"] == ("no", True)  # the error's message
    assert by_id["t5"] == ("partial", True)  # else its output
    assert by_id["t6"] == ("(error)", True)  # else said to be one
    census = census_read(
        transcript,
        "line",
        read={
            "init": 1,
            "message user": 2,
            "message assistant": 3,  # the two chunks as one group of two lines, and the empty one
            "tool_use": 6,
            "tool_result": 5,
            "error": 2,
            "result": 1,
        },
        skipped={
            "empty message": 2,
            "warning event": 1,
            "error event": 1,
            "result (the session's totals)": 1,
        },
    )
    assert sum(census.read.values()) == len(events)


def test_a_line_that_is_no_event_is_refused_naming_it(tmp_path: Path) -> None:
    path = _stream(tmp_path, [{"type": "init", "session_id": "s", "model": "m"}])
    path.write_text(path.read_text() + json.dumps({"type": "unknown"}) + "\n")
    with pytest.raises(
        MessageFormatError, match=r"run\.jsonl line 2: not a Gemini CLI stream-json"
    ):
        load(path, format="gemini_stream")
    with pytest.raises(MessageFormatError, match=r"format='gemini_cli'"):
        load(FOLDER / "output.json")
