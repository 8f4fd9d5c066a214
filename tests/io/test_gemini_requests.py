"""Each Gemini CLI response is a request: a ``gemini`` record billed on its own replays as its
own reply with its own usage, whatever the file records between two of them; an all-zero
``tokens`` is no bill. On a real session of the 2025-10 layout (tests/fixtures/gemini/README.md)
and on records written as the current recorder writes them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import calibrate, load, recorded_requests
from ctxlab.analysis._recorded import unrecorded_parts
from ctxlab.io import detect_format
from ctxlab.io.formats._gemini import STAND_IN_EXCHANGE
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage, find_tool_pair_problems
from tests.io.shown import added_up
from tests.strategies import SETTINGS

REAL = Path(__file__).parents[1] / "fixtures" / "gemini" / "session-2025-10-11T13-00-2d9ea14f.json"


def _raw_replies() -> list[dict[str, Any]]:
    return [m for m in json.loads(REAL.read_text())["messages"] if m["type"] == "gemini"]


def test_thirteen_responses_in_a_row_replay_as_thirteen_requests() -> None:
    raw = _raw_replies()
    assert len(raw) == 13  # after one user message, with nothing recorded between them
    transcript = load(REAL)
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    assert [transcript.messages[i].content[0].text for i in replies] == [r["content"] for r in raw]  # type: ignore[union-attr]
    # Between two replies, a stand-in for the calls and results the file does not hold.
    between = [transcript.messages[i + 1] for i in replies[:-1]]
    assert all(
        isinstance(m, UserMessage) and m.content[0].text == STAND_IN_EXCHANGE  # type: ignore[union-attr]
        for m in between
    )
    assert transcript.meta["unrecorded_exchanges"] == 12
    assert "tool calls and results between replies" in unrecorded_parts(transcript)
    # Each request carries its own response's bill; the four the CLI wrote as zeros carry none.
    billed = [
        ProviderUsage.with_cache_inside(t["input"], t["output"], t["cached"])
        if (t := r["tokens"])["input"]
        else None
        for r in raw
    ]
    requests = recorded_requests(transcript)
    assert [r.usage for r in requests] == billed
    assert sum(u is not None for u in billed) == 9
    assert requests[1].usage == ProviderUsage(18_070, 88, 0, 0)
    assert requests[8].usage == ProviderUsage(1_402, 228, 19_138, 0)
    census = added_up(transcript)
    assert (census.usage_read, census.usage_placed) == (13, 9)
    assert census.usage_lost == {"all-zero tokens (Gemini CLI wrote no bill)": 4}


def test_the_calibration_reads_only_the_bills_the_file_holds() -> None:
    calibration = calibrate(load(REAL))
    assert [int(r["billed"]) for r in calibration.rows] == [  # type: ignore[call-overload]
        8_175,
        18_070,
        20_112,
        20_237,
        20_540,
        20_793,
        22_568,
        22_758,
        22_926,
    ]


def _record(n: int, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
    return {
        "id": f"r{n}",
        "timestamp": f"2026-05-01T10:00:{n:02d}Z",
        "type": kind,
        "content": content,
        **extra,
    }


def _tokens(prompt: int) -> dict[str, int]:
    return {
        "input": prompt,
        "output": 7,
        "cached": 0,
        "thoughts": 0,
        "tool": 0,
        "total": prompt + 7,
    }


ZERO = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0}


def test_a_first_reply_billed_zero_is_no_bill() -> None:
    records = [
        {"sessionId": "s", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z"},
        _record(1, "user", [{"text": "hello"}]),
        _record(2, "gemini", "Hi.", tokens=ZERO, model="gemini-2.5-pro"),
        _record(3, "user", [{"text": "and?"}]),
        _record(4, "gemini", "More.", tokens=_tokens(900), model="gemini-2.5-pro"),
    ]
    assert detect_format(records) == "gemini_cli"  # records handed over as a list
    transcript = load(records)
    assert transcript.usage == {3: ProviderUsage(900, 7, 0, 0)}
    assert [r.billed for r in calibrate(transcript).points] == [900]
    census = added_up(transcript)
    assert census.usage_lost == {"all-zero tokens (Gemini CLI wrote no bill)": 1}


def _call(call_id: str, output: str | None) -> dict[str, Any]:
    call: dict[str, Any] = {"id": call_id, "name": "read_file", "args": {"path": "a.py"}}
    if output is not None:
        response = {"id": call_id, "name": "read_file", "response": {"output": output}}
        call["result"] = [{"functionResponse": response}]
    return call


def _response(call_id: str, output: str) -> dict[str, Any]:
    return {
        "functionResponse": {"id": call_id, "name": "read_file", "response": {"output": output}}
    }


def test_the_current_recorders_tool_response_record_is_not_read_twice() -> None:
    # The CLI now records the tool responses it sends as a ``user`` record (a synthetic
    # message), though the reply's ``toolCalls`` hold them too: one result per call.
    records = [
        _record(1, "user", [{"text": "read a.py"}]),
        _record(2, "gemini", "", toolCalls=[_call("c1", "print(1)")], tokens=_tokens(500)),
        _record(3, "user", [_response("c1", "print(1)")]),
        _record(4, "gemini", "It prints 1.", tokens=_tokens(600)),
    ]
    transcript = load(records, format="gemini_cli")
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert [(r.tool_use_id, r.text) for r in results] == [("c1", "print(1)")]
    assert "unrecorded_exchanges" not in transcript.meta
    assert transcript.meta["skipped"]["tool responses the reply's toolCalls hold too"] == 1
    assert [r.usage.input_tokens for r in recorded_requests(transcript)] == [500, 600]  # type: ignore[union-attr]


def test_a_tool_response_record_answers_a_call_its_reply_recorded_without_result() -> None:
    records = [
        _record(1, "user", [{"text": "read a.py"}]),
        _record(2, "gemini", "", toolCalls=[_call("c1", None)], tokens=_tokens(500)),
        _record(3, "user", [_response("c1", "print(2)")]),
        _record(4, "gemini", "It prints 2.", tokens=_tokens(600)),
    ]
    transcript = load(records, format="gemini_cli")
    results = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert [(r.tool_use_id, r.text, r.is_error) for r in results] == [("c1", "print(2)", False)]
    assert "unrecorded_exchanges" not in transcript.meta


_REPLY = st.fixed_dictionaries(
    {
        "text": st.sampled_from(["", "ok", "done"]),
        "calls": st.integers(0, 2),
        "results": st.booleans(),
        "tokens": st.sampled_from([None, "zero", 700]),
    }
)


@SETTINGS
@given(st.lists(st.one_of(st.just("user"), _REPLY), min_size=1, max_size=8))
def test_every_response_that_shows_something_is_its_own_request(turns: list[Any]) -> None:
    records: list[dict[str, Any]] = [_record(0, "user", [{"text": "go"}])]
    showing: list[int | None] = []  # per response that holds text or calls: its bill
    for n, turn in enumerate(turns, 1):
        if turn == "user":
            records.append(_record(n, "user", [{"text": f"more {n}"}]))
            continue
        calls = [
            _call(f"c{n}_{k}", "out" if turn["results"] else None) for k in range(turn["calls"])
        ]
        tokens = {"zero": ZERO, None: None}.get(turn["tokens"], _tokens(700 + n))
        extra = {"toolCalls": calls} if calls else {}
        records.append(_record(n, "gemini", turn["text"], tokens=tokens, **extra))
        if turn["text"] or calls:
            showing.append(700 + n if turn["tokens"] == 700 else None)
    transcript = load(records, format="gemini_cli")
    requests = recorded_requests(transcript)
    assert [r.usage.input_tokens if r.usage else None for r in requests] == showing
    assert find_tool_pair_problems(transcript.messages) == []
    added_up(transcript)
