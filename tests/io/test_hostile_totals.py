"""A session's totals — Goose's and Continue's session usage, Copilot's totals by model and its
context at shutdown, ``codex exec``'s turn usage, Gemini CLI's stream stats — are token counts
like a request's: NaN, a negative, a count past ``MAX_TOKENS``, text or a bool refuses the file
with a `MessageFormatError` naming the record and the field (docs/errors.md), and a whole
number (``12.0``, ``"12"``) is kept as the ``int`` it is (hypothesis too)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import MAX_TOKENS
from tests.strategies import SETTINGS


def _goose_lines(value: Any) -> list[Any]:
    metadata = {"working_dir": "/w", "description": "d", "message_count": 2, "input_tokens": value}
    return [metadata, *_goose_messages()]


def _goose_messages() -> list[dict[str, Any]]:
    return [
        {"role": role, "created": 1, "content": [{"type": "text", "text": role}]}
        for role in ("user", "assistant")
    ]


def _goose_export(value: Any) -> dict[str, Any]:
    return {
        "id": "s",
        "working_dir": "/w",
        "accumulated_output_tokens": value,
        "conversation": _goose_messages(),
    }


def _codex_exec(value: Any) -> list[Any]:
    return [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "done"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": value, "cached_input_tokens": 0, "output_tokens": 3},
        },
    ]


def _gemini_stream(value: Any) -> list[Any]:
    at = "2026-01-01T00:00:00Z"
    stats = {
        "total_tokens": 10,
        "input_tokens": 8,
        "output_tokens": 2,
        "cached": value,  # a token count whose name does not say so (``StreamStats``)
        "input": 8,
        "duration_ms": 1.5,
        "tool_calls": 0,
    }
    return [
        {"type": "init", "timestamp": at, "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "message", "timestamp": at, "role": "user", "content": "hi"},
        {"type": "message", "timestamp": at, "role": "assistant", "content": "yo"},
        {"type": "result", "timestamp": at, "status": "success", "stats": stats},
    ]


def _continue(value: Any) -> dict[str, Any]:
    history = [
        {"message": {"role": "user", "content": "hi"}, "contextItems": []},
        {"message": {"role": "assistant", "content": "yo"}, "contextItems": []},
    ]
    usage = {
        "promptTokens": 10,
        "completionTokens": 2,
        "promptTokensDetails": {"cachedTokens": value},
        "totalCost": 0.5,
    }
    return {"sessionId": "s", "title": "t", "history": history, "usage": usage}


def _copilot(value: Any, *, context: bool = False) -> list[Any]:
    metrics = {
        "m": {
            "requests": {"count": 1, "cost": 1},
            "usage": {"inputTokens": 10, "outputTokens": 2, "cacheWriteTokens": value},
        }
    }
    shutdown: dict[str, Any] = {"modelMetrics": metrics, "currentTokens": 40}
    if context:
        shutdown = {"modelMetrics": {}, "currentTokens": value}
    events = [
        ("user.message", {"content": "hi"}),
        ("assistant.message", {"messageId": "a", "content": "yo"}),
        ("session.shutdown", shutdown),
    ]
    return [
        {"type": kind, "data": data, "id": f"e{n}", "parentId": None}
        for n, (kind, data) in enumerate(events)
    ]


@dataclass(frozen=True)
class Totals:
    """A format's file around one total, where its meta keeps it, and what a refusal names."""

    format: str
    name: str
    build: Callable[[Any], Any]
    kept: Callable[[dict[str, Any]], Any]
    named: str


CASES = [
    Totals(
        "goose",
        "s.jsonl",
        _goose_lines,
        lambda m: m["session_usage"]["input_tokens"],
        r"s\.jsonl line 1: usage field 'input_tokens' is .* \(the session's totals\)",
    ),
    Totals(
        "goose",
        "export.json",
        _goose_export,
        lambda m: m["session_usage"]["accumulated_output_tokens"],
        r"export\.json: usage field 'accumulated_output_tokens' is ",
    ),
    Totals(
        "codex_exec",
        "exec.jsonl",
        _codex_exec,
        lambda m: m["turn_usage"][0]["input_tokens"],
        r"exec\.jsonl line 4: usage field 'input_tokens' is .* \(the turn's usage\)",
    ),
    Totals(
        "gemini_stream",
        "stream.jsonl",
        _gemini_stream,
        lambda m: m["session_stats"]["cached"],
        r"stream\.jsonl line 4: usage field 'cached' is ",
    ),
    Totals(
        "continue",
        "session.json",
        _continue,
        lambda m: m["session_usage"]["promptTokensDetails"]["cachedTokens"],
        r"session\.json: usage field 'promptTokensDetails\.cachedTokens' is ",
    ),
    Totals(
        "copilot",
        "events.jsonl",
        _copilot,
        lambda m: m["session_usage"][0]["cache_write_tokens"],
        r"events\.jsonl event 3: usage field 'cache_write_tokens' is .* \(the session's totals\)",
    ),
    Totals(
        "copilot",
        "events.jsonl",
        lambda v: _copilot(v, context=True),
        lambda m: m["context_at_shutdown"]["currentTokens"],
        r"events\.jsonl event 3: usage field 'currentTokens' is .* \(the context's size",
    ),
]
IDS = [
    "goose lines",
    "goose export",
    "codex_exec",
    "gemini_stream",
    "continue",
    "copilot totals",
    "copilot context",
]


def _write(tmp_path: Path, case: Totals, value: Any) -> Path:
    path = tmp_path / case.name
    data = case.build(value)
    # json.dumps writes NaN and Infinity as JavaScript does; Python's json reads them back.
    if isinstance(data, list):
        path.write_text("".join(json.dumps(line) + "\n" for line in data))
    else:
        path.write_text(json.dumps(data))
    return path


BAD = [math.nan, math.inf, -7, 1e22, 10**22, MAX_TOKENS + 1, 2.5, True, "many", [3]]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("bad", BAD, ids=repr)
def test_a_total_no_bill_has_refuses_the_file_naming_its_record_and_field(
    tmp_path: Path, case: Totals, bad: Any
) -> None:
    path = _write(tmp_path, case, bad)
    with pytest.raises(MessageFormatError, match=case.named):
        load(path, format=case.format)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize(
    ("given_", "kept"), [(12, 12), (12.0, 12), ("12", 12), (0, 0), (MAX_TOKENS, MAX_TOKENS)]
)
def test_a_whole_total_is_kept_as_the_number_it_is(
    tmp_path: Path, case: Totals, given_: Any, kept: int
) -> None:
    transcript = load(_write(tmp_path, case, given_), format=case.format)  # type: ignore[arg-type]
    figure = case.kept(transcript.meta)
    assert figure == kept and type(figure) is int
    assert [m.role for m in transcript.messages] == ["user", "assistant"]


def test_the_figures_beside_the_counts_are_kept_as_the_file_has_them(tmp_path: Path) -> None:
    # A cost in dollars, a duration: no token count, kept as they are.
    session = load(_write(tmp_path, CASES[4], 7), format="continue")
    assert session.meta["session_usage"] == {
        "promptTokens": 10,
        "completionTokens": 2,
        "promptTokensDetails": {"cachedTokens": 7},
        "totalCost": 0.5,
    }
    stream = load(_write(tmp_path, CASES[3], 7), format="gemini_stream")
    assert stream.meta["session_stats"]["duration_ms"] == 1.5
    assert stream.meta["session_stats"]["tool_calls"] == 0
    copilot = load(_write(tmp_path, CASES[5], 7), format="copilot")
    assert copilot.meta["session_usage"] == [
        {
            "model": "m",
            "requests": 1,
            "input_tokens": 10,
            "output_tokens": 2,
            "cache_write_tokens": 7,
        }
    ]


def test_a_null_total_stays_unknown(tmp_path: Path) -> None:
    # Goose's counts are optional: a null one is not recorded (never 0).
    lines = load(_write(tmp_path, CASES[0], None), format="goose")
    assert "session_usage" not in lines.meta
    turn = load(_write(tmp_path, CASES[2], None), format="codex_exec")
    assert turn.meta["turn_usage"] == [
        {"input_tokens": None, "cached_input_tokens": 0, "output_tokens": 3}
    ]


def _a_count(value: Any) -> bool:
    """The test's own reading of a token count: a whole number from 0 to MAX_TOKENS, not a
    bool."""
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and 0 <= value <= MAX_TOKENS
    return isinstance(value, int) and 0 <= value <= MAX_TOKENS


@SETTINGS
@given(
    case=st.sampled_from(CASES),
    value=st.integers(-(2**70), 2**70)
    | st.integers(MAX_TOKENS - 3, MAX_TOKENS + 3)
    | st.floats()
    | st.booleans(),
)
@example(case=CASES[0], value=-1)
@example(case=CASES[3], value=float(MAX_TOKENS))
def test_any_number_as_a_total_is_kept_whole_or_refused(
    tmp_path_factory: Any, case: Totals, value: Any
) -> None:
    path = _write(tmp_path_factory.mktemp("totals"), case, value)
    if not _a_count(value):
        with pytest.raises(MessageFormatError, match=case.named):
            load(path, format=case.format)  # type: ignore[arg-type]
        return
    figure = case.kept(load(path, format=case.format).meta)  # type: ignore[arg-type]
    assert figure == value and type(figure) is int
