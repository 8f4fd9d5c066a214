"""A trace of several agents loads one conversation per agent; a clock that steps back does not
reorder a conversation; a span exported twice is counted once (each checked against the spans
the test wrote)."""

from __future__ import annotations

import json
from typing import Any

from ctxlab import load
from ctxlab.messages import find_tool_pair_problems
from tests.helpers import validations

TRACE = "7" * 32


def _value(v: Any) -> dict[str, Any]:
    return (
        {"intValue": str(v)}
        if isinstance(v, int)
        else {"stringValue": v if isinstance(v, str) else json.dumps(v)}
    )


def _span(span_id: str, parent: str, start: int, attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "parentSpanId": parent,
        "name": "chat" if "gen_ai.input.messages" in attributes else "invoke_agent",
        "startTimeUnixNano": str(start),
        "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
    }


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _call(role: str, name: str, arguments: dict[str, Any], call_id: str) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": arguments}
    return {"role": role, "parts": [part]}


def _result(call_id: str, response: str) -> dict[str, Any]:
    return {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": call_id, "response": response}],
    }


def _chat(
    span_id: str,
    parent: str,
    start: int,
    system: str,
    inputs: list[Any],
    outputs: list[Any],
    out: int,
) -> dict[str, Any]:
    return _span(
        span_id,
        parent,
        start,
        {
            "gen_ai.system_instructions": system,
            "gen_ai.input.messages": inputs,
            "gen_ai.output.messages": outputs,
            "gen_ai.usage.input_tokens": 1_000 + out,
            "gen_ai.usage.output_tokens": out,
        },
    )


def _supervisor_and_worker(named: bool) -> list[dict[str, Any]]:
    # The supervisor hands the task to the worker (a tool call), the worker runs its own
    # conversation inside that call, and the supervisor gets the worker's answer as the result.
    ask = _text("user", "Fix the failing test.")
    hand = _call("assistant", "transfer_to_worker", {"task": "fix test_cart"}, "call_sup")
    task = _text("user", "fix test_cart")
    run = _call("assistant", "bash", {"cmd": "pytest"}, "call_w")
    ran = _result("call_w", "1 failed")
    fixed = _text("assistant", "Fixed: tax applied once.")
    done = _result("call_sup", "Fixed: tax applied once.")
    supervisor = {"gen_ai.agent.name": "supervisor"} if named else {}
    worker = {"gen_ai.agent.name": "worker"} if named else {}
    return [
        _span("a0", "", 1, supervisor),
        _chat("s1", "a0", 2, "You are the supervisor.", [ask], [hand], 11),
        _span("a1", "s1", 3, worker),
        _chat("w1", "a1", 4, "You are the worker.", [task], [run], 21),
        _chat("w2", "a1", 5, "You are the worker.", [task, run, ran], [fixed], 22),
        _chat(
            "s2",
            "a0",
            6,
            "You are the supervisor.",
            [ask, hand, done],
            [_text("assistant", "Done.")],
            12,
        ),
    ]


def _body(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}


async def _valid(transcript: Any) -> bool:
    passed = [set(await validations(transcript, window)) for window in (200_000, 32_000)]
    return passed == [{"passed"}, {"passed"}]


async def test_a_supervisor_and_its_worker_are_two_conversations_named_or_not() -> None:
    for named in (True, False):
        body = _body(_supervisor_and_worker(named))
        supervisor, worker = load(body), load(body, episode=1)
        assert supervisor.meta["conversations"] == 2
        assert (
            supervisor.system == "You are the supervisor."
            and worker.system == "You are the worker."
        )
        # The supervisor's real tool result (the worker's answer), not a synthesized error.
        (result,) = [r for m in supervisor.messages for r in getattr(m, "tool_results", ())]
        assert (result.tool_use_id, result.text, result.is_error) == (
            "call_sup",
            "Fixed: tax applied once.",
            None,
        )
        assert "repairs" not in supervisor.meta
        assert [
            m.content[0].text
            for m in worker.messages
            if m.role == "user" and m.content[0].type == "text"
        ] == ["fix test_cart"]  # type: ignore[union-attr]
        # Each reply with its own call's bill (output tokens 11, 12 / 21, 22).
        assert [u.output_tokens for u in supervisor.usage.values()] == [11, 12]
        assert [u.output_tokens for u in worker.usage.values()] == [21, 22]
        if named:
            assert [a["agent"] for a in supervisor.meta["agents"]] == ["supervisor", "worker"]
        for transcript in (supervisor, worker):
            census = transcript.census
            assert census is not None and census.adds_up and sum(census.read.values()) == 6
            assert find_tool_pair_problems(transcript.messages) == []
            assert await _valid(transcript)


def test_a_clock_that_steps_back_does_not_duplicate_or_reorder_messages() -> None:
    spans = [s for s in _supervisor_and_worker(True) if s["spanId"] in ("w1", "w2")]
    in_time = load(_body(spans))
    spans[1]["startTimeUnixNano"] = "1"  # the second call's clock stepped back before the first
    stepped = load(_body(spans))
    assert stepped.messages == in_time.messages and stepped.usage == in_time.usage
    assert "rewritten_requests" not in stepped.meta


def test_a_span_exported_twice_is_counted_once() -> None:
    spans = [s for s in _supervisor_and_worker(True) if s["spanId"] in ("w1", "w2")]
    once = load(_body(spans))
    twice = load(_body([*spans, spans[1]]))
    assert twice.messages == once.messages and twice.usage == once.usage
    census = twice.census
    assert census is not None and census.adds_up
    assert census.skipped["span exported twice"] == 1
