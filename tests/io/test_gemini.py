"""Gemini CLI sessions (JSONL and the older JSON) and Gemini API contents, on fixtures written
from the CLI's own recorder (tests/fixtures/gemini/README.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format, load
from ctxlab.messages import AssistantMessage, ProviderUsage, find_tool_pair_problems
from tests.io.shown import added_up
from tests.strategies import SETTINGS, json_value

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gemini"
JSONL = FIXTURES / "session-2026-03-02T10-00-4a1c.jsonl"


@pytest.mark.parametrize("path", [JSONL, FIXTURES / "session-legacy.json"])
def test_a_gemini_cli_session_loads_as_the_cli_resumes_it(path: Path) -> None:
    transcript = load(path)
    assert transcript.meta["source"] == "gemini_cli"
    assert [m.role for m in transcript.messages] == ["user", "assistant"] * 3  # three exchanges
    first, reply = transcript.messages[0], transcript.messages[1]
    assert first.content[0].text == "Fix the failing test in calc.py"  # type: ignore[union-attr]
    assert isinstance(reply, AssistantMessage)
    (use,) = reply.tool_uses
    assert (use.id, use.name, use.input) == (
        "read_file-1",
        "read_file",
        {"absolute_path": "/work/calc.py"},
    )
    (result,) = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert result.tool_use_id == "read_file-1" and "return a - b" in result.text
    # The record re-written under the same id replaced the first ("Working…"); the message
    # after the rewind point is gone.
    assert transcript.messages[3].content[0].text == "I will fix the operator."  # type: ignore[union-attr]
    assert all("never mind" not in str(m.model_dump()) for m in transcript.messages)
    assert find_tool_pair_problems(transcript.messages) == []
    # Usage: Gemini's prompt count includes the cached tokens.
    assert transcript.usage[1] == ProviderUsage(200, 40, 1_000, 0)
    assert transcript.usage[5] == ProviderUsage(200, 15, 1_500, 0)
    assert transcript.meta["models"] == ["gemini-2.5-pro"]
    # What is not a message is counted, not dropped silently — the JSONL's rewound and
    # rewritten records too (the legacy JSON holds only the records in force).
    rewritten = {
        "replaced by a later record of the same id": 1,
        "rewound ($rewindTo)": 1,
    }
    assert transcript.meta["skipped"] == {
        "info record": 1,
        "command or injected context": 1,
        "thought summary": 1,
        **(rewritten if path.suffix == ".jsonl" else {}),
    }
    census = added_up(transcript)
    assert census.left_out == {"thought summary": 1}


def test_nothing_in_the_file_is_lost() -> None:
    # Counted independently from the raw file, with the CLI's replacement and rewind rules.
    records: dict[str, Any] = {}
    for line in JSONL.read_text().splitlines():
        record = json.loads(line)
        if "$rewindTo" in record:
            ids = list(records)
            for gone in ids[ids.index(record["$rewindTo"]) :]:
                del records[gone]
        elif "id" in record:
            records[record["id"]] = record
    calls = [c for r in records.values() for c in r.get("toolCalls", [])]
    transcript = load(JSONL)
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert [u.id for u in uses] == [c["id"] for c in calls]
    assert [r.tool_use_id for r in results] == [c["id"] for c in calls]
    texts = sum(1 for r in records.values() if r["type"] in ("user", "gemini"))
    skipped = transcript.meta["skipped"]
    # Every user/gemini record is a message or counted; info records are counted.
    assert texts - skipped["command or injected context"] == sum(
        1 for m in transcript.messages if not getattr(m, "tool_results", ())
    )
    assert skipped["info record"] == sum(1 for r in records.values() if r["type"] == "info")


def test_gemini_api_contents_pair_calls_by_name_without_ids() -> None:
    contents = [
        {"role": "user", "parts": [{"text": "weather in Oslo and Bergen?"}]},
        {
            "role": "model",
            "parts": [
                {"thought": True, "text": "two calls"},
                {"functionCall": {"name": "weather", "args": {"city": "Oslo"}}},
                {"functionCall": {"name": "weather", "args": {"city": "Bergen"}}},
            ],
        },
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "weather", "response": {"output": "rain"}}},
                {"functionResponse": {"name": "weather", "response": {"output": "sun"}}},
            ],
        },
        {"role": "model", "parts": [{"text": "Rain in Oslo, sun in Bergen."}]},
    ]
    assert detect_format(contents) == "gemini"
    transcript = load(contents)
    uses = transcript.messages[1].tool_uses  # type: ignore[union-attr]
    results = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert [u.input["city"] for u in uses] == ["Oslo", "Bergen"]
    assert [(r.tool_use_id, r.text) for r in results] == [(uses[0].id, "rain"), (uses[1].id, "sun")]
    assert transcript.meta["skipped"] == {"thought": 1}
    assert find_tool_pair_problems(transcript.messages) == []


@SETTINGS
@given(st.lists(json_value, max_size=6))
def test_any_gemini_records_load_or_raise_a_typed_error(records: list[Any]) -> None:
    lines = [{"sessionId": "s", "projectHash": "p"}, *records]
    try:
        load(lines, format="gemini_cli")
    except MessageFormatError as exc:
        assert str(exc).strip()
