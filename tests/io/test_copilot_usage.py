"""Copilot CLI 1.0 usage and reasoning (``ctxlab/io/formats/copilot/parse.py``): on a real CLI 1.0.55 session
(tests/fixtures/copilot, MIT) each reply gets its own output tokens and keeps its reasoning, the
session's totals are read, what the file lacks is said — checked against the test's own reading
of the file —; then each rule by hand-made events, and a property over generated replies."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.messages import ProviderUsage
from tests.io.contracts.copilot import (
    COMPACTION_CALL,
    REASONING_ONCE,
    USAGE_STANDS,
    USER,
    reply_event,
    session_events,
)
from tests.io.shown import added_up, billed, shown
from tests.strategies import SETTINGS

SESSION = "030f200c-c26f-4ef0-9099-6d1156c83631"
REAL = Path(__file__).parents[1] / "fixtures" / "copilot" / "session-state" / SESSION
EVENTS = REAL / "events.jsonl"


def test_a_cli_1_0_session_gives_each_reply_its_output_tokens_and_keeps_its_reasoning() -> None:
    events = [json.loads(line) for line in EVENTS.read_text().splitlines()]
    main = [e for e in events if not e.get("agentId")]
    said = [e["data"] for e in main if e["type"] == "assistant.message"]
    transcript = load(EVENTS)
    replies = [i for i, m in enumerate(transcript.messages) if m.role == "assistant"]
    assert len(replies) == len(said) == 3
    # Each reply's own output count; the input is not in the file (0, and said so).
    assert [transcript.usage[i] for i in replies] == [
        ProviderUsage(0, d["outputTokens"]) for d in said
    ]
    assert transcript.meta["usage_lacks"].startswith("3 replies carry their output tokens alone")
    # The file's own totals agree: the main model's output over its calls is these replies'.
    shutdown = next(e["data"] for e in main if e["type"] == "session.shutdown")
    metrics = shutdown["modelMetrics"]
    model = said[0]["model"]
    assert sum(d["outputTokens"] for d in said) == metrics[model]["usage"]["outputTokens"] == 521
    assert transcript.meta["session_usage"] == [
        {
            "model": name,
            "requests": m["requests"]["count"],
            "input_tokens": m["usage"]["inputTokens"],
            "output_tokens": m["usage"]["outputTokens"],
            "cache_read_tokens": m["usage"]["cacheReadTokens"],
            "cache_write_tokens": m["usage"]["cacheWriteTokens"],
            "reasoning_tokens": m["usage"]["reasoningTokens"],
        }
        for name, m in metrics.items()
    ]
    assert transcript.meta["context_at_shutdown"] == {
        k: shutdown[k] for k in ("currentTokens", "systemTokens", "conversationTokens")
    } | {"toolDefinitionsTokens": 12_415}
    assert transcript.meta["context_at_shutdown"]["currentTokens"] == 20_493
    assert transcript.meta["models"] == [model]
    assert transcript.meta["reply_models"] == {"0": model, "1": model, "2": model}
    # Each readable reasoning a thinking block of its reply; the encrypted one counted.
    thinking = [
        [b.thinking for b in transcript.messages[i].content if b.type == "thinking"]
        for i in replies
    ]
    assert thinking == [[d["reasoningText"]] if "reasoningText" in d else [] for d in said]
    assert transcript.meta["usage_lacks"] == (
        "3 replies carry their output tokens alone: the CLI does not write a call's input and "
        "cache tokens (assistant.usage) to events.jsonl, so their input is 0 here; "
        "meta['session_usage'] has the totals"
    )
    assert transcript.meta["copilot_version"] == "1.0.55-1"
    census = transcript.census
    assert census is not None and census.adds_up and census.unaccounted == {}
    assert census.unit == "event" and census.read == dict(Counter(e["type"] for e in events))
    assert census.left_out == {"encrypted reasoning (session-bound, not readable)": 1}
    assert census.usage_placed == 3 and census.usage_lost == {}
    assert census.tool_calls == sum(len(d["toolRequests"]) for d in said) == 3
    uses = [
        (u.id, u.name, u.input) for m in transcript.messages for u in getattr(m, "tool_uses", ())
    ]
    assert uses == [
        (r["toolCallId"], r["name"], r["arguments"]) for d in said for r in d["toolRequests"]
    ]


def test_an_assistant_usage_stands_for_its_replys_output_count() -> None:
    # The events: `USAGE_STANDS` (tests/io/contracts/copilot.py), whose census (usage lost by
    # reason) the contract checks.
    transcript = load(USAGE_STANDS.source, format="copilot")
    assert transcript.usage == {1: ProviderUsage(10, 5, 60, 30), 3: ProviderUsage(0, 7)}
    # Only the reply without its call's usage is said to lack its input.
    assert transcript.meta["usage_lacks"].startswith("1 replies")


def test_what_holds_nothing_is_counted_and_each_replys_model_kept_by_its_rank() -> None:
    events = session_events(
        reply_event("first", model="m1"),  # a reply before any user turn: rank 0
        ("system.message", {"content": "You are Copilot."}),
        ("system.message", {"content": "Be brief."}),
        ("system.message", {"role": "system"}),
        ("user.message", {"content": " "}),
        ("system.notification", {"content": 5}),
        ("line", {}),
        USER,
        reply_event("second", model=""),
        USER,
        reply_event("third", model="m2", toolRequests=[{"toolCallId": "t9", "name": "x"}]),
        ("assistant.message", {"content": " ", "toolRequests": []}),
        ("session.compaction_complete", {"success": True, "summaryContent": " "}),
        (
            "tool.execution_complete",
            {"toolCallId": "t9", "success": False, "error": {"message": 7}},
        ),
    )
    transcript = load([*events, {"no": "event"}], format="copilot")
    assert transcript.system == "You are Copilot.\n\nBe brief."
    assert transcript.meta["reply_models"] == {"0": "m1", "2": "m2"}
    assert transcript.meta["models"] == ["m1", "m2"]
    census = added_up(transcript)
    assert census.skipped == {
        "system message without its text": 1,
        "empty user message": 1,
        "empty notification": 1,
        "empty assistant message": 1,
        "compaction without its summary": 1,
        "not a Copilot CLI event": 2,
    }
    # A failure whose message is no text is kept as its JSON.
    assert shown(transcript)[-1] == ("user", ("result", "t9", "7", True))
    assert census.read["line of another format"] == 2


def test_the_chunks_of_one_call_are_billed_once() -> None:
    # A response split at a reasoning boundary: two messages of one apiCallId, one reply.
    transcript = load(
        session_events(
            USER,
            reply_event("a", outputTokens=9, apiCallId="c1", chunkIndex=0, chunkCount=2),
            reply_event("b", outputTokens=9, apiCallId="c1", chunkIndex=1, chunkCount=2),
        ),
        format="copilot",
    )
    assert shown(transcript)[1:] == [("assistant", ("text", "a")), ("assistant", ("text", "b"))]
    billed(transcript, {1: ProviderUsage(0, 9)})


def test_reasoning_events_and_texts_are_thinking_once() -> None:
    # The events: `REASONING_ONCE` (tests/io/contracts/copilot.py), whose census (skipped by
    # reason) the contract checks; of its table, only the empty event is a record skipped, the
    # rest parts left out.
    transcript = load(REASONING_ONCE.source, format="copilot")
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("assistant", ("thinking", "Look first.", "")),
        ("assistant", ("text", "a")),
        ("user", ("text", "go")),
        ("assistant", ("thinking", "Then answer.", "")),
        ("assistant", ("text", "b")),
    ]
    assert added_up(transcript).skipped == {"empty reasoning": 1}


def test_a_compactions_own_call_is_kept_with_it_and_counted() -> None:
    # The events: `COMPACTION_CALL` (tests/io/contracts/copilot.py), whose census (usage lost
    # and skipped by reason) the contract checks.
    transcript = load(COMPACTION_CALL.source, format="copilot")
    assert transcript.meta["total_nano_aiu"] == 21_893_915_000
    (compaction,) = transcript.meta["compactions"]
    assert compaction["usage"] == {
        "input_tokens": 391,
        "output_tokens": 80,
        "cache_read_input_tokens": 500,
        "cache_creation_input_tokens": 9,
        "cache_creation_1h_input_tokens": 0,
    }
    assert {k: compaction[k] for k in ("kind", "trigger", "replies_before", "summary_head")} == {
        "kind": "compact",
        "trigger": "auto",
        "replies_before": 1,
        "summary_head": "<summary>S</summary>",
    }
    assert shown(transcript)[2:] == [
        ("user", ("text", "<summary>S</summary>")),
        ("user", ("text", "<system_notification>done</system_notification>")),
    ]
    assert added_up(transcript).left_out == {}


def test_odd_counts_or_an_empty_reply_lose_their_usage_not_the_file() -> None:
    done = {"success": True, "summaryContent": "S", "compactionTokensUsed": {"inputTokens": -1}}
    transcript = load(
        session_events(
            USER,
            reply_event("a", outputTokens=-3),
            USER,
            reply_event("", outputTokens=4),
            ("session.compaction_complete", done),
            # (a count no bill has in the totals refuses the file: test_hostile_totals)
            ("session.shutdown", {"currentTokens": None, "modelMetrics": 1}),
            ("session.usage_checkpoint", {"totalNanoAiu": float("nan")}),
        ),
        format="copilot",
    )
    assert shown(transcript)[1] == ("assistant", ("text", "a")) and transcript.usage == {}
    assert "usage" not in transcript.meta["compactions"][0]
    for figure in ("context_at_shutdown", "session_usage", "total_nano_aiu"):
        assert figure not in transcript.meta
    census = added_up(transcript)
    assert census.usage_lost == {
        "an output count that is no count of tokens": 1,
        "on an empty assistant message": 1,
        "a compaction call's usage that is no count of tokens": 1,
    }


replies = st.lists(
    st.tuples(
        st.none() | st.text(min_size=1, max_size=12).filter(str.strip),  # reasoningText
        st.none() | st.integers(0, 10_000),  # outputTokens
        st.none() | st.sampled_from(["c1", "c2", "c3", ""]),  # apiCallId ("" is none)
    ),
    min_size=1,
    max_size=8,
)


@SETTINGS
@given(replies)
def test_every_reasoning_is_kept_and_every_calls_output_billed_once(
    said: list[tuple[str | None, int | None, str | None]],
) -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    for n, (reasoning, tokens, call) in enumerate(said):
        data: dict[str, Any] = {}
        if reasoning is not None:
            data["reasoningText"] = reasoning
        if tokens is not None:
            data["outputTokens"] = tokens
        if call is not None:
            data["apiCallId"] = call
        events += [USER, reply_event(f"reply {n}", **data)]
    transcript = load(session_events(*events), format="copilot")
    thinking = [b.thinking for m in transcript.messages for b in m.content if b.type == "thinking"]
    assert thinking == [r for r, _, _ in said if r is not None]
    # A call's output once (its first message's), a message of no call each its own; an
    # output of 0 tokens, and nothing else counted, is no bill (placed on no reply).
    billed: dict[str, int] = {}
    expected = []
    for _, tokens, call in said:
        if tokens is not None and (not call or call not in billed):
            billed[call or ""] = tokens
            if tokens:
                expected.append(tokens)
    assert [u.output_tokens for _, u in sorted(transcript.usage.items())] == expected
    assert all(u.total_input_tokens == 0 for u in transcript.usage.values())
    census = transcript.census
    assert census is not None and census.adds_up and census.unaccounted == {}
