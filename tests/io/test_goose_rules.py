"""Goose sessions written here line by line, each rule of ``ctxlab/io/formats/goose/parse.py`` by the value a
user reads: which lines and exports are Goose's, each content item as the model saw it (calls,
results, their errors, images, thoughts), what Goose hid from the agent, its summaries as
compactions, the session's notes and usage totals, and the census by line or record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.goose.parse import is_goose_export, is_goose_line
from tests.io.shown import added_up, census_read, shown

META = {"working_dir": "/w", "description": "fix it", "message_count": 2}


def _message(role: str, *content: Any, **extra: Any) -> dict[str, Any]:
    return {"id": None, "role": role, "created": 1, "content": list(content), **extra}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _lines(tmp_path: Path, *records: Any) -> Any:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return load(path, format="goose")


def test_which_lines_and_documents_are_gooses() -> None:
    assert is_goose_line(META)
    assert is_goose_line({"working_dir": "/w", "message_count": 0})
    assert is_goose_line({"working_dir": "/w", "description": ""})
    assert is_goose_line(_message("user", _text("hi")))
    assert is_goose_line(_message("assistant"))
    for bad in (
        None,
        [META],
        {"working_dir": "/w"},
        {"message_count": 1, "description": ""},
        _message("system", _text("x")),
        {**_message("user"), "created": "1"},
        {**_message("user"), "content": "hi"},
    ):
        assert not is_goose_line(bad)
    export = {"working_dir": "/w", "conversation": []}
    assert is_goose_export(export) and detect_format(export) == "goose"
    for bad in (None, {"conversation": []}, {"working_dir": "/w", "conversation": {}}):
        assert not is_goose_export(bad)


def test_a_line_that_is_no_message_is_refused_naming_its_place(tmp_path: Path) -> None:
    with pytest.raises(MessageFormatError) as raised:
        _lines(tmp_path, META, _message("user", _text("hi")), {"role": "user"})
    assert str(raised.value).endswith(
        "s.jsonl message 2: not a Goose message (role, created, content)"
    )


def test_each_item_as_the_model_saw_it(tmp_path: Path) -> None:
    transcript = _lines(
        tmp_path,
        {**META, "id": "g1", "name": 5, "input_tokens": 120, "total_tokens": "130"},
        _message(
            "user",
            _text("look"),
            _text("  "),
            {"type": "image", "data": "iVBORw0KGgo="},
            {"type": "image", "data": "R0lGOD", "mimeType": "image/gif"},
            {"type": "image", "data": 5},
            {"type": "toolConfirmationRequest"},
            "junk",
        ),
        _message(
            "assistant",
            {"type": "thinking", "thinking": "hm", "signature": "s"},
            {"type": "thinking"},
            {"type": "redactedThinking", "data": "ENC"},
            {"type": "redactedThinking"},
            {
                "type": "toolRequest",
                "id": "t1",
                "toolCall": {
                    "status": "success",
                    "value": {"name": "shell", "arguments": {"c": 1}},
                },
            },
            {
                "type": "toolRequest",
                "id": "t2",
                "toolCall": {"status": "error", "error": "bad json"},
            },
            {"type": "toolRequest", "id": "t3", "toolCall": {"value": {"arguments": [1]}}},
        ),
        _message(
            "user",
            {
                "type": "toolResponse",
                "id": "t1",
                "toolResult": {"status": "success", "value": [_text("a"), _text("b"), {"x": 1}]},
            },
            {"type": "toolResponse", "id": "t2", "toolResult": {"status": "error", "error": "no"}},
            {"type": "toolResponse", "id": "t3", "toolResult": {"status": "error"}},
        ),
    )
    assert shown(transcript) == [
        ("user", ("text", "look")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("image", "image/gif", "R0lGOD")),
        ("assistant", ("thinking", "hm", "s")),
        ("assistant", ("thinking", "", "")),
        ("assistant", ("redacted", "ENC")),
        ("assistant", ("use", "t1", "shell", {"c": 1})),
        ("assistant", ("use", "t2", "invalid_tool_call", {"error": "bad json"})),
        ("assistant", ("use", "t3", "tool", {})),
        ("user", ("result", "t1", "a\nb", False)),
        ("user", ("result", "t2", "no", True)),
        ("user", ("result", "t3", "error", True)),
    ]
    meta = transcript.meta
    assert meta["id"] == "g1" and meta["working_dir"] == "/w" and meta["description"] == "fix it"
    assert "name" not in meta
    # A count written as digits is the number (test_hostile_totals: what no count is refuses).
    assert meta["session_usage"] == {"input_tokens": 120, "total_tokens": 130}
    census_read(
        transcript,
        "line",
        read={"session metadata": 1, "user message": 2, "assistant message": 1},
        skipped={
            "image item": 1,
            "toolConfirmationRequest item": 1,
            "unreadable item": 1,
            "redactedThinking item": 1,
        },
    )


def test_a_results_content_as_each_goose_wrote_it(tmp_path: Path) -> None:
    def response(call_id: str, value: Any) -> dict[str, Any]:
        result = {"status": "success", "value": value}
        return {"type": "toolResponse", "id": call_id, "toolResult": result}

    calls = [
        {"type": "toolRequest", "id": f"c{i}", "toolCall": {"value": {"name": "x"}}}
        for i in range(7)
    ]
    transcript = _lines(
        tmp_path,
        _message("assistant", *calls),
        _message(
            "user",
            response("c0", {"content": [_text("done")], "isError": False}),
            response("c1", {"content": [_text("failed")], "isError": True}),
            response("c2", {"content": [{"type": "image", "data": "x"}], "isError": "yes"}),
            response("c3", {"structured": "é"}),
            response("c4", "plaín"),
            response("c5", {"isError": True}),
            {"type": "toolResponse", "id": "c6", "toolResult": {"status": "success"}},
        ),
    )
    results = [b[1:] for _, b in shown(transcript) if b[0] == "result"]
    assert results == [
        ("c0", "done", False),
        ("c1", "failed", True),
        ("c2", '[{"type": "image", "data": "x"}]', False),
        ("c3", "(no output)", False),  # a CallToolResult without content: never "null"
        ("c4", '"plaín"', False),  # its JSON, the text as written
        ("c5", "(no output)", True),
        ("c6", "(no output)", False),
    ]


def test_what_goose_hid_from_the_agent_and_its_summary(tmp_path: Path) -> None:
    hidden = {"metadata": {"agentVisible": False, "userVisible": True}}
    summary = {"metadata": {"agentVisible": True, "userVisible": False}}
    long = "S" * 300
    transcript = _lines(
        tmp_path,
        _message("user", _text("go"), **hidden),
        _message("assistant", _text("one"), **hidden),
        _message("user", {"type": "systemNotification"}, {"type": "actionRequired"}, **hidden),
        _message("user", _text(" " + long), _text("tail"), **summary),
        _message("assistant", _text("two")),
        _message("assistant", _text("three"), metadata={"userVisible": False}),
        _message(
            "user",
            _text("x"),
            {"type": "image", "data": "iVBORw0KGgo="},
            _text("y"),
            metadata={"agentVisible": True, "userVisible": False},
        ),
        _message("user", {"type": "frontendToolRequest"}),
    )
    assert transcript.meta["hidden_from_agent"] == 2
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {"kind": "compact", "trigger": "unknown", "replies_before": 1, "summary_head": long[:200]},
        # Its texts joined by spaces (an image adds an empty one).
        {"kind": "compact", "trigger": "unknown", "replies_before": 2, "summary_head": "x  y"},
    ]
    assert transcript.meta["skipped"] == {
        "message only the user sees": 1,
        "frontendToolRequest item": 1,
        "message without content for the model": 1,
    }
    added_up(transcript)


def test_an_export_is_the_session_and_its_conversation(tmp_path: Path) -> None:
    export = {
        "id": "s9",
        "name": "Fix",
        "working_dir": "/w",
        "accumulated_total_tokens": 900,
        "output_tokens": 12.0,
        "model_config": {"model_name": "gpt-x"},
        "conversation": [_message("user", _text("hi")), _message("assistant", _text("yo"))],
    }
    transcript = load(export, format="goose")
    meta = transcript.meta
    assert meta["id"] == "s9" and meta["name"] == "Fix" and meta["models"] == ["gpt-x"]
    assert meta["session_usage"] == {"accumulated_total_tokens": 900, "output_tokens": 12}
    census_read(
        transcript, "record", read={"session": 1, "user message": 1, "assistant message": 1}
    )
    assert transcript.usage == {}  # totals over the session, never spread over requests


def test_a_file_of_messages_alone_has_no_metadata(tmp_path: Path) -> None:
    transcript = _lines(tmp_path, _message("user", _text("hi")), _message("assistant", _text("yo")))
    census = transcript.census
    assert census is not None and census.read == {"user message": 1, "assistant message": 1}
    for key in ("working_dir", "session_usage", "models", "hidden_from_agent", "compactions"):
        assert key not in transcript.meta


def test_what_no_request_can_hold_is_counted(tmp_path: Path) -> None:
    transcript = _lines(
        tmp_path,
        _message("user", {"type": "text", "text": None}),
        _message("user", {"type": "image", "data": ""}),  # an image without its bytes
        _message("assistant", {"type": "toolRequest", "toolCall": {"value": {"name": "x"}}}),
        _message(
            "user",
            {"type": "toolResponse", "toolResult": {"status": "success", "value": [_text("r")]}},
        ),
    )
    # A call without an id gets one; a result without one answers nothing, and the call is
    # answered by the repair.
    assert shown(transcript) == [
        ("assistant", ("use", "call_1", "x", {})),
        ("user", ("result", "call_1", "No result was recorded for this call.", True)),
    ]
    assert transcript.meta["skipped"] == {
        "message without content for the model": 1,
        "image without data": 1,
        "message with nothing kept": 2,
        "tool result without a call id": 1,
    }
    with pytest.raises(MessageFormatError, match="message 1: not a Goose message"):
        load({"working_dir": "/w", "conversation": ["junk"]}, format="goose")


@settings(database=None, max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=8))
def test_every_message_is_kept_or_counted(flags: list[tuple[bool, bool]]) -> None:
    # Whatever Goose hid, each message is in the transcript or counted skipped, and every
    # hidden one that the model saw is counted in hidden_from_agent.
    import tempfile

    records = []
    for i, (agent, user) in enumerate(flags):
        role = "user" if i % 2 == 0 else "assistant"
        meta = {"agentVisible": agent, "userVisible": user}
        records.append(_message(role, _text(f"m{i}"), metadata=meta))
    with tempfile.TemporaryDirectory() as folder:
        transcript = _lines(Path(folder), *records)
    texts = [b[1] for _, b in shown(transcript)]
    assert texts == [f"m{i}" for i in range(len(flags))]
    assert transcript.meta.get("hidden_from_agent", 0) == sum(not a for a, _ in flags)
    census = transcript.census
    assert census is not None and census.adds_up and sum(census.read.values()) == len(flags)
