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
from tests.io.contracts.goose import EACH_ITEM, META, NOTHING_SENT, message, text
from tests.io.shown import added_up, census_read, shown


def _lines(tmp_path: Path, *records: Any) -> Any:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return load(path, format="goose")


def test_which_lines_and_documents_are_gooses() -> None:
    assert is_goose_line(META)
    assert is_goose_line({"working_dir": "/w", "message_count": 0})
    assert is_goose_line({"working_dir": "/w", "description": ""})
    assert is_goose_line(message("user", text("hi")))
    assert is_goose_line(message("assistant"))
    for bad in (
        None,
        [META],
        {"working_dir": "/w"},
        {"message_count": 1, "description": ""},
        message("system", text("x")),
        {**message("user"), "created": "1"},
        {**message("user"), "content": "hi"},
    ):
        assert not is_goose_line(bad)
    export = {"working_dir": "/w", "conversation": []}
    assert is_goose_export(export) and detect_format(export) == "goose"
    for bad in (None, {"conversation": []}, {"working_dir": "/w", "conversation": {}}):
        assert not is_goose_export(bad)


def test_a_line_that_is_no_message_is_refused_naming_its_place(tmp_path: Path) -> None:
    with pytest.raises(MessageFormatError) as raised:
        _lines(tmp_path, META, message("user", text("hi")), {"role": "user"})
    assert str(raised.value).endswith(
        "s.jsonl message 2: not a Goose message (role, created, content)"
    )


def test_each_item_as_the_model_saw_it(tmp_path: Path) -> None:
    # The lines: `EACH_ITEM` (tests/io/contracts/goose.py), whose census the contract checks.
    transcript = load(EACH_ITEM.made(tmp_path), format="goose")
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
        message("assistant", *calls),
        message(
            "user",
            response("c0", {"content": [text("done")], "isError": False}),
            response("c1", {"content": [text("failed")], "isError": True}),
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
        message("user", text("go"), **hidden),
        message("assistant", text("one"), **hidden),
        message("user", {"type": "systemNotification"}, {"type": "actionRequired"}, **hidden),
        message("user", text(" " + long), text("tail"), **summary),
        message("assistant", text("two")),
        message("assistant", text("three"), metadata={"userVisible": False}),
        message(
            "user",
            text("x"),
            {"type": "image", "data": "iVBORw0KGgo="},
            text("y"),
            metadata={"agentVisible": True, "userVisible": False},
        ),
        message("user", {"type": "frontendToolRequest"}),
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
        # The message of only that item: skipped once, for it (i67-skip).
        "frontendToolRequest item": 1,
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
        "conversation": [message("user", text("hi")), message("assistant", text("yo"))],
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
    transcript = _lines(tmp_path, message("user", text("hi")), message("assistant", text("yo")))
    census = transcript.census
    assert census is not None and census.read == {"user message": 1, "assistant message": 1}
    for key in ("working_dir", "session_usage", "models", "hidden_from_agent", "compactions"):
        assert key not in transcript.meta


def test_what_no_request_can_hold_is_counted(tmp_path: Path) -> None:
    # The lines: `NOTHING_SENT` (tests/io/contracts/goose.py), whose census the contract checks.
    transcript = load(NOTHING_SENT.made(tmp_path), format="goose")
    # A call without an id gets one; a result without one answers nothing, and the call is
    # answered by the repair.
    assert shown(transcript) == [
        ("assistant", ("use", "call_1", "x", {})),
        ("user", ("result", "call_1", "No result was recorded for this call.", True)),
    ]
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
        records.append(message(role, text(f"m{i}"), metadata=meta))
    with tempfile.TemporaryDirectory() as folder:
        transcript = _lines(Path(folder), *records)
    texts = [b[1] for _, b in shown(transcript)]
    assert texts == [f"m{i}" for i in range(len(flags))]
    assert transcript.meta.get("hidden_from_agent", 0) == sum(not a for a, _ in flags)
    census = transcript.census
    assert census is not None and census.adds_up and sum(census.read.values()) == len(flags)
