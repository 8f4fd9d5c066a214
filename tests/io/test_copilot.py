"""GitHub Copilot CLI sessions (``tests/fixtures/copilot``, hand-written from the event schema of
Copilot's own SDK — the CLI needs a sign-in to record one): the main agent's conversation with
what the model was sent, calls paired with their results (failures as errors), usage per model
call, the CLI's own compaction recorded, and every other event counted — checked against
counts taken from the raw file."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.messages import ProviderUsage
from tests.strategies import SETTINGS, json_value, typed

SESSION = "5f0c1a2e-7b7d-4c9e-9a51-3b8e2d6f1c44"
FIXTURE = (
    Path(__file__).parents[1] / "fixtures" / "copilot" / "session-state" / SESSION / "events.jsonl"
)


def _events() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]


def test_a_session_loads_whole_and_nothing_is_lost() -> None:
    transcript = load(FIXTURE)
    assert transcript.meta["source"] == "copilot" and transcript.name == SESSION
    assert transcript.meta["models"] == ["claude-sonnet-4.5"]
    events = _events()
    main = [e for e in events if not e.get("agentId")]
    # Independent counts from the raw file.
    requests = [
        r
        for e in main
        if e["type"] == "assistant.message"
        for r in e["data"].get("toolRequests") or ()
    ]
    completed = [e for e in main if e["type"] == "tool.execution_complete"]
    uses = [b for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    results = [b for m in transcript.messages if m.role == "user" for b in m.tool_results]
    assert [u.id for u in uses] == [r["toolCallId"] for r in requests]
    assert [r.tool_use_id for r in results] == [e["data"]["toolCallId"] for e in completed]
    assert [r.is_error for r in results] == [None, True]
    assert results[1].text == "Path does not exist: /home/dev/shop/cart.py"
    # What the model was sent, not what the timeline shows.
    assert transcript.messages[0].content[0].text.startswith("<current_datetime>")
    read = {
        "session.start",
        "user.message",
        "assistant.message",
        "tool.execution_complete",
        "assistant.usage",
        "session.compaction_complete",
        "session.shutdown",
    }
    skipped = Counter(e["type"] for e in main if e["type"] not in read)
    skipped["sub-agent event"] = sum(1 for e in events if e.get("agentId"))
    assert transcript.meta["skipped"] == dict(skipped)
    # Usage per model call, the cache split out of the input.
    assert transcript.usage[1] == ProviderUsage(1_410, 96, 12_800, 0)
    assert len(transcript.usage) == sum(e["type"] == "assistant.usage" for e in main)


def test_the_clis_compaction_is_a_recorded_compaction() -> None:
    transcript = load(FIXTURE)
    (compaction,) = recorded_compactions(transcript)
    assert (compaction.trigger, compaction.pre_tokens) == ("manual", 15_720)
    summary = transcript.messages[compaction.index].content[compaction.block]
    assert summary.text.startswith("<summary>The user asked why test_checkout fails")


def test_it_is_recognised_among_other_jsonl_sessions(tmp_path: Path) -> None:
    import ctxlab

    folder = tmp_path / "session-state" / SESSION
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_bytes(FIXTURE.read_bytes())
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["format"].tolist() == ["copilot"] and frame["problem"].isna().all()


@pytest.mark.parametrize("broken", ['{"type": "user.message"}', "[1, 2]"])
def test_a_line_that_is_not_an_event_is_skipped_and_counted(tmp_path: Path, broken: str) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(FIXTURE.read_text() + broken + "\n")
    whole, with_line = load(FIXTURE), load(path)
    assert with_line.messages == whole.messages
    census = with_line.census
    assert census is not None and census.adds_up
    assert census.skipped["not a Copilot CLI event"] == 1
    assert sum(census.read.values()) == len(path.read_text().splitlines())


def test_a_list_result_and_the_system_message_are_kept(tmp_path: Path) -> None:
    events = [json.loads(line) for line in FIXTURE.read_text().splitlines()]
    done = next(e for e in events if e["type"] == "tool.execution_complete")
    done["data"]["result"]["content"] = [
        {"type": "text", "text": "F 1 failed"},
        {"type": "terminal", "text": "$ pytest", "exitCode": 1},
        {"type": "resource_link", "uri": "file:///log.txt", "name": "log"},
    ]
    system = {**events[1], "type": "system.message"}
    system["data"] = {"content": "You are Copilot.", "role": "system"}
    path = tmp_path / "events.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in [events[0], system, *events[1:]]) + "\n")
    transcript = load(path)
    assert transcript.system == "You are Copilot."
    result = next(r for m in transcript.messages for r in getattr(m, "tool_results", ()))
    assert result.text.startswith("F 1 failed\n$ pytest\n")
    assert '"uri": "file:///log.txt"' in result.text


def test_each_kind_of_result_content_is_kept() -> None:
    def result(n: int, content: Any, **data: Any) -> dict[str, Any]:
        data = {"toolCallId": f"t{n}", "success": True, "result": {"content": content}, **data}
        return {"type": "tool.execution_complete", "data": data, "id": f"r{n}", "parentId": None}

    requests = [{"toolCallId": f"t{n}", "name": "view", "arguments": {}} for n in range(5)]
    said = {"content": "", "toolRequests": requests}
    lines = [
        {"type": "user.message", "data": {"content": "go"}, "id": "u", "parentId": None},
        {"type": "assistant.message", "data": said, "id": "a", "parentId": None},
        result(0, [{"type": "image", "data": "AAAA", "mimeType": "image/jpeg"}, "plain"]),
        result(1, [{"type": "image", "data": "BBBB"}, {"type": "audio", "note": "é"}]),
        result(2, None),
        result(3, {"x": "é"}),
        result(4, None),
    ]
    # No content: the tool's own blocks (``contents``).
    lines[-1]["data"]["result"] = {"contents": [{"type": "text", "text": "from contents"}]}
    transcript = load(lines, format="copilot")
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    parts = [
        [(b.type, getattr(b, "text", None) or b.source.media_type) for b in r.content]  # type: ignore[union-attr]
        if isinstance(r.content, tuple | list)
        else r.content
        for r in results
    ]
    assert parts == [
        [("image", "image/jpeg"), ("text", "plain")],
        [("image", "image/png"), ("text", '{"type": "audio", "note": "é"}')],
        "",
        '{"x": "é"}',
        [("text", "from contents")],
    ]
    assert results[0].content[0].source.data == "AAAA"  # type: ignore[union-attr]


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "user.message",
                    "assistant.message",
                    "tool.execution_complete",
                    "assistant.usage",
                    "session.compaction_complete",
                    "session.info",
                ]
            ),
            st.dictionaries(
                st.sampled_from(
                    [
                        "content",
                        "toolRequests",
                        "toolCallId",
                        "success",
                        "result",
                        "error",
                        "inputTokens",
                        "summaryContent",
                    ]
                ),
                json_value,
                max_size=4,
            ),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_any_events_load_or_raise_a_typed_error(events: list[tuple[str, dict[str, Any]]]) -> None:
    lines = [
        {"type": t, "data": d, "id": str(n), "parentId": None} for n, (t, d) in enumerate(events)
    ]
    typed(lambda: load(lines, format="copilot"))
