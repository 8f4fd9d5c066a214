"""Reasoning the recorded agent sent back: Codex sends every reasoning item again, encrypted, and
the API reads those of the current user turn only. The recorded view counts a turn's reasoning in
its requests and drops it after the next user message — on a real rollout of a reasoning model
(gpt-5-codex, Codex 0.40) and on hand-made ones."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab import calibrate, load, recorded_requests
from ctxlab.messages import AssistantMessage, RedactedThinkingBlock, ThinkingBlock
from ctxlab.tokens import ApproximateCounter, TokenCache

REAL = (
    Path(__file__).parents[1]
    / "fixtures"
    / "codex"
    / "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl"
)


def _sent_reasoning_by_request(path: Path) -> list[list[str]]:
    """From the raw lines, for each request (each new ``token_count``; this version writes it
    before the items of its response): the encrypted reasoning items of the user's current turn
    written before it — what Codex sent back and the API read."""
    out: list[list[str]] = []
    turn: list[str] = []
    last: Any = None
    for line in path.read_text().splitlines():
        record = json.loads(line)
        payload = record["payload"]
        if record["type"] == "event_msg" and payload.get("type") == "token_count":
            if payload.get("info") and payload["info"] != last:
                last = payload["info"]
                out.append(list(turn))
        elif record["type"] == "response_item" and payload.get("type") == "reasoning":
            turn.append(payload["encrypted_content"])
        elif (
            record["type"] == "response_item"
            and payload.get("type") == "message"
            and payload.get("role") == "user"
        ):
            turn = []  # the user spoke: earlier reasoning is no longer read
    return out


def test_each_request_holds_the_reasoning_of_its_own_user_turn() -> None:
    transcript = load(REAL)
    expected = _sent_reasoning_by_request(REAL)
    held = [
        [b.data for m in r.messages for b in m.content if isinstance(b, RedactedThinkingBlock)]
        for r in recorded_requests(transcript)
    ]
    assert len(held) == len(expected) == 18
    assert held == expected
    # The first turn's requests hold one more item each (one response wrote none); the second
    # turn's none of them.
    assert [len(h) for h in held] == [*range(11), *range(10, 16), 0]


def test_the_bill_less_the_estimate_stays_the_unrecorded_part_through_the_turns() -> None:
    # What the file does not hold (Codex's instructions, its tool schemas) is about the same in
    # every request: once the reasoning sent back is counted, billed − estimate stays flat, and
    # comes back to its first value after the second user message. Without it the difference
    # grew from 1,603 to 3,482 tokens over the first turn, and fell to 1,736 in the second.
    calibration = calibrate(load(REAL))
    gaps = [int(r["billed"]) - int(r["estimate"]) for r in calibration.rows]  # type: ignore[call-overload]
    assert len(gaps) == 18
    assert max(gaps) - min(gaps) < 250
    assert abs(gaps[-1] - gaps[0]) < 250
    error = calibration.out_of_sample_error
    assert error is not None and error < 0.005  # 2.1 % when the reasoning was skipped


def _line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "t", "type": kind, "payload": payload}


def _user(text: str) -> dict[str, Any]:
    content = [{"type": "input_text", "text": text}]
    return _line("response_item", {"type": "message", "role": "user", "content": content})


def _reasoning(length: int) -> dict[str, Any]:
    summary = [{"type": "summary_text", "text": "**Planning**"}]
    encrypted = "gAAAAABo" + "z" * (length - 8)
    item = {
        "type": "reasoning",
        "summary": summary,
        "content": None,
        "encrypted_content": encrypted,
    }
    return _line("response_item", item)


def _usage(n: int) -> dict[str, Any]:
    last = {"input_tokens": 1_000 * n, "cached_input_tokens": 0, "output_tokens": n}
    return _line("event_msg", {"type": "token_count", "info": {"last_token_usage": last}})


def _call(n: int) -> list[dict[str, Any]]:
    call = {"type": "function_call", "name": "sh", "arguments": "{}", "call_id": f"c{n}"}
    output = {"type": "function_call_output", "call_id": f"c{n}", "output": "ok"}
    return [_line("response_item", call), _usage(n), _line("response_item", output)]


def _answer(n: int) -> list[dict[str, Any]]:
    text = [{"type": "output_text", "text": f"done {n}"}]
    message = {"type": "message", "role": "assistant", "content": text}
    return [_line("response_item", message), _usage(n)]


def test_a_turns_reasoning_is_counted_in_its_requests_and_dropped_after_the_next_message() -> None:
    # Turn 1: reasoning (2,000 chars: 213 tokens as Codex sizes it) + a call; reasoning (2,008:
    # 214) + an answer. Turn 2: an answer.
    lines = [
        _user("fix it"),
        _reasoning(2_000),
        *_call(1),
        _reasoning(2_008),
        *_answer(2),
        _user("thanks"),
        *_answer(3),
    ]
    transcript = load(lines, format="codex")
    requests = recorded_requests(transcript)
    cache = TokenCache(ApproximateCounter())

    def counted(messages: Any) -> int:
        return sum(cache.message(m) for m in messages)

    first, second, third = requests
    # Within the turn: the messages as recorded, the first item's reasoning included.
    assert tuple(second.messages) == tuple(transcript.messages[: second.reply])
    assert any(isinstance(b, RedactedThinkingBlock) for m in second.messages for b in m.content)
    reasoning = [
        b
        for m in third.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, RedactedThinkingBlock | ThinkingBlock)
    ]
    assert reasoning == []  # after the user's next message: none of the first turn's
    # The third request is the recorded conversation less the two items' 213 + 214 tokens.
    assert counted(transcript.messages[: third.reply]) - counted(third.messages) == 213 + 214
    assert first.usage is not None and [r.usage.output_tokens for r in requests] == [1, 2, 3]  # type: ignore[union-attr]


def test_a_reply_of_reasoning_alone_is_a_request_and_keeps_its_place() -> None:
    # An interrupted response: its reasoning was written, then the user spoke again. It was
    # billed (its usage lands on it), and the turn after drops it without moving any index.
    text = [{"type": "output_text", "text": "ok"}]
    answer = {"type": "message", "role": "assistant", "content": text}
    lines = [_user("go"), _usage(1), _reasoning(2_000), _user("stop"), _usage(2)]
    lines.append(_line("response_item", answer))
    transcript = load(lines, format="codex")
    assert transcript.meta["usage_order"] == "before its reply"
    requests = recorded_requests(transcript)
    assert [r.usage.output_tokens for r in requests] == [1, 2]  # type: ignore[union-attr]
    last = requests[-1]
    assert len(last.messages) == last.reply  # the view still lines up with the transcript
    assert last.messages[1] == AssistantMessage(content=())


def test_without_the_providers_rule_earlier_thinking_stays_counted() -> None:
    # Control: a transcript that does not say its provider drops earlier reasoning (Claude
    # Code's thinking, a chat log) keeps every turn's thinking in later requests.
    transcript = load(
        [
            {"role": "user", "content": "a"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "plan a", "signature": "s"},
                    {"type": "text", "text": "A"},
                ],
            },
            {"role": "user", "content": "b"},
            {"role": "assistant", "content": "B"},
        ],
        format="anthropic",
    )
    assert not transcript.meta.get("earlier_reasoning_dropped")
    last = recorded_requests(transcript)[-1]
    assert any(isinstance(b, ThinkingBlock) for m in last.messages for b in m.content)
