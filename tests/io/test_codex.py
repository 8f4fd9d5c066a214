"""Codex CLI rollouts, on a fixture written from Codex's own types (tests/fixtures/codex)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import recorded_compactions
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format, load
from ctxlab.messages import ProviderUsage, find_tool_pair_problems
from tests.strategies import SETTINGS, json_value

ROLLOUT = (
    Path(__file__).parents[1] / "fixtures" / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl"
)


def _lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in ROLLOUT.read_text().splitlines()]


def test_a_rollout_loads_with_its_calls_usage_and_compaction() -> None:
    assert detect_format(_lines()[0]) == "codex"
    transcript = load(ROLLOUT)
    assert transcript.meta["source"] == "codex" and transcript.meta["models"] == ["gpt-5-codex"]
    assert transcript.system == "You are Codex. Run commands with the shell tool."
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    assert [(u.id, u.name) for u in uses] == [
        ("call_A1", "shell"),
        ("call_B2", "apply_patch"),
        ("call_C3", "shell"),
    ]
    assert uses[0].input["command"] == ["bash", "-lc", "cat cart.py"]
    assert uses[1].input["input"].startswith("*** Begin Patch")
    results = {
        r.tool_use_id: r for m in transcript.messages for r in getattr(m, "tool_results", ())
    }
    assert results["call_C3"].is_error and results["call_C3"].text == "sandbox denied: network"
    assert not results["call_B2"].is_error and "M cart.py" in results["call_B2"].text
    assert find_tool_pair_problems(transcript.messages) == []
    # Usage of each model call, the cached input split out of the input.
    assert list(transcript.usage.values()) == [
        ProviderUsage(1_200, 80, 3_000, 0),
        ProviderUsage(400, 120, 4_100, 0),
        ProviderUsage(200, 15, 4_500, 0),
    ]
    # Codex's own compaction: the conversation restarts from its summary.
    (compaction,) = recorded_compactions(transcript)
    summary = transcript.messages[compaction.index].content[compaction.block]
    assert summary.text.startswith("Summary: the cart total skipped")  # type: ignore[union-attr]
    assert compaction.replies_before == 4
    assert transcript.meta["skipped"] == {
        "event user_message": 1,
        "reasoning": 1,
        "event exec_command_end": 1,
    }


def test_nothing_in_the_rollout_is_lost() -> None:
    # Counted from the raw lines: every item is a block of the transcript or counted as skipped.
    lines = _lines()
    items = [line["payload"] for line in lines if line["type"] == "response_item"]
    calls = [i["call_id"] for i in items if i["type"].endswith("call")]
    outputs = [i["call_id"] for i in items if i["type"].endswith("call_output")]
    transcript = load(ROLLOUT)
    uses = [u.id for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    results = [r.tool_use_id for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert uses == calls and results == outputs
    said = [
        c["text"]
        for i in items
        if i["type"] == "message" and i["role"] in ("user", "assistant")
        for c in i["content"]
    ]
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert [t for t in texts if not t.startswith("Summary:")] == said
    events = [line["payload"]["type"] for line in lines if line["type"] == "event_msg"]
    skipped = transcript.meta["skipped"]
    # Each event is a call's usage or counted as skipped.
    assert len(transcript.usage) == events.count("token_count")
    assert sum(v for k, v in skipped.items() if k.startswith("event ")) == len(
        events
    ) - events.count("token_count")
    assert skipped["reasoning"] == sum(1 for i in items if i["type"] == "reasoning")


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "timestamp": st.just("t"),
                "type": st.sampled_from(
                    ["response_item", "event_msg", "compacted", "session_meta", "turn_context"]
                ),
                "payload": json_value,
            }
        ),
        max_size=6,
    )
)
def test_any_rollout_lines_load_or_raise_a_typed_error(lines: list[Any]) -> None:
    try:
        load(lines, format="codex")
    except MessageFormatError as exc:
        assert str(exc).strip()
