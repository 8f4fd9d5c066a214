"""Codex CLI rollouts, on a fixture written from Codex's own types (tests/fixtures/codex)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import recorded_compactions
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format, load
from ctxlab.messages import ProviderUsage, RedactedThinkingBlock, find_tool_pair_problems
from tests.io.shown import added_up, texts
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
    # The reasoning item is sent back with its reply (its encrypted content); its summary,
    # shown to the user, is counted left out.
    assert transcript.meta["skipped"] == {
        "event user_message": 1,
        "reasoning summary (shown to the user, not sent back)": 1,
        "event exec_command_end": 1,
    }
    (reasoning,) = [b for m in transcript.messages for b in m.content if b.type != "text"][:1]
    assert reasoning == RedactedThinkingBlock(data="gAAAA...")


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
    reasoning = [i["encrypted_content"] for i in items if i["type"] == "reasoning"]
    kept = [b.data for m in transcript.messages for b in m.content if b.type == "redacted_thinking"]  # type: ignore[union-attr]
    assert kept == reasoning


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


# --- usage by what each version writes -------------------------------------------------------

VERSIONS = Path(__file__).parents[1] / "fixtures" / "codex"
ANSWER = "The build fails: the Makefile has no default rule."


@pytest.mark.parametrize(
    ("name", "order"),
    [
        ("rollout-0.40.0-usage-before.jsonl", "before its reply"),
        ("rollout-0.58.0-usage-before.jsonl", "before its reply"),
        ("rollout-current-usage-after.jsonl", "after its reply"),
    ],
)
def test_each_versions_usage_lands_on_the_reply_it_counts(name: str, order: str) -> None:
    transcript = load(VERSIONS / name)
    assert transcript.meta["usage_order"] == order
    replies = [m for m in transcript.messages if m.role == "assistant"]
    # Each reply and the bill of its own request (output tokens name the request: 120, 60, 30).
    billed = {
        ("call_make" if r.tool_uses else r.content[0].text): transcript.usage.get(i)  # type: ignore[union-attr]
        for i, r in enumerate(transcript.messages)
        if r in replies
    }
    assert billed == {
        "call_make": ProviderUsage(1_500, 120, 3_500, 0),
        ANSWER: ProviderUsage(400, 60, 5_000, 0),
        "Done: added an `all` rule.": ProviderUsage(300, 30, 5_300, 0),
    }
    census = added_up(transcript)
    assert (census.usage_read, census.usage_placed, census.usage_lost) == (3, 3, {})
    # The repeats sent with the rate limits, and the first one's empty usage, are counted.
    skipped = census.skipped
    if order == "before its reply":
        assert skipped["token_count repeated"] == 2
        assert skipped["token_count without usage (rate limits only)"] == 1
    else:
        assert "token_count repeated" not in skipped


def _rollout(requests: list[tuple[int, int]], first: bool, repeats: bool) -> list[dict[str, Any]]:
    # A rollout written as the versions write it: ``first`` the usage before the request's
    # items (0.40, 0.58), else after; ``repeats`` the previous usage again at each request start.
    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        return {"timestamp": "t", "type": kind, "payload": payload}

    def count(i: int, calls: int) -> dict[str, Any]:
        last = {"input_tokens": 1_000 + i, "cached_input_tokens": i, "output_tokens": 10 + i}
        return line("event_msg", {"type": "token_count", "info": {"last_token_usage": last}})

    out = [line("response_item", {"type": "message", "role": "user", "content": "go"})]
    previous: dict[str, Any] | None = None
    for i, (calls, reasoning) in enumerate(requests):
        items = [line("response_item", {"type": "reasoning"}) for _ in range(reasoning)]
        items += [
            line(
                "response_item",
                {"type": "function_call", "name": "sh", "arguments": "{}", "call_id": f"c{i}_{n}"},
            )
            for n in range(calls)
        ] or [
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": f"r{i}"}],
                },
            )
        ]
        outputs = [
            line(
                "response_item",
                {"type": "function_call_output", "call_id": f"c{i}_{n}", "output": "ok"},
            )
            for n in range(calls)
        ]
        usage = count(i, calls)
        if repeats and previous is not None:
            out.append(previous)
        out += [usage, *items, *outputs] if first else [*items, usage, *outputs]
        if not calls:
            out.append(
                line("response_item", {"type": "message", "role": "user", "content": "more"})
            )
        previous = usage
    return out


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=1, max_size=6),
    st.booleans(),
    st.booleans(),
)
def test_any_rollout_pairs_each_usage_with_its_own_request(
    requests: list[tuple[int, int]], first: bool, repeats: bool
) -> None:
    transcript = load(_rollout(requests, first, repeats), format="codex")
    # Request i billed 10 + i output tokens: each reply carries its own request's number.
    replies = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    assert len(replies) == len(requests)
    assert [transcript.usage[i].output_tokens for i in replies] == [
        10 + i for i in range(len(requests))
    ]
    census = transcript.census
    assert census is not None and census.adds_up and census.usage_lost == {}


def test_the_2026_items_a_rollout_sends_back_are_kept() -> None:
    # Codex's ResponseItem (codex-rs/protocol models.rs, 2026): a client-run tool search is a
    # call and its output (paired by call_id unless the server ran it); a web search, an image
    # made and a server-run tool search are calls the provider ran; an agent message is the
    # assistant's words — every one sent back to the model in later requests.
    def item(payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "timestamp": "2026-08-03T10:00:00.000Z",
            "type": "response_item",
            "payload": payload,
        }

    lines = [
        _lines()[0],
        item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}),
        item({"type": "tool_search_call", "call_id": "ts1", "execution": "client",
              "arguments": {"query": "calendar"}}),
        item({"type": "tool_search_output", "call_id": "ts1", "execution": "client",
              "tools": [{"type": "function", "name": "create_event"}]}),
        item({"type": "web_search_call", "id": "ws1", "status": "completed",
              "action": {"type": "search", "query": "x"}}),
        item({"type": "image_generation_call", "id": "ig1", "status": "completed",
              "result": "iVBOR"}),
        item({"type": "tool_search_call", "call_id": "ts2", "execution": "server",
              "arguments": {"query": "y"}}),
        item({"type": "agent_message", "message": "Found 2 files.", "phase": "output"}),
    ]  # fmt: skip
    transcript = load(lines, format="codex")
    blocks = [(m.role, b.type) for m in transcript.messages for b in m.content]
    assert ("assistant", "tool_use") in blocks and ("user", "tool_result") in blocks
    (call,) = [b for m in transcript.messages for b in m.content if b.type == "tool_use"]
    assert (call.id, call.name, call.input) == ("ts1", "tool_search", {"query": "calendar"})  # type: ignore[union-attr]
    (result,) = [b for m in transcript.messages for b in m.content if b.type == "tool_result"]
    assert "create_event" in str(result.content)  # type: ignore[union-attr]
    provided = [
        b.data["type"] for m in transcript.messages for b in m.content if b.type == "provider"
    ]  # type: ignore[union-attr]
    assert provided == ["web_search_call", "image_generation_call", "tool_search_call"]
    said = texts(transcript)
    assert said == ["Found 2 files."]
    census = transcript.census
    assert census is not None and census.whole, census
