"""A reply whose recorded usage is empty (``usage: {}``) or counts nothing (every count zero) was
billed nothing anyone knows of — Claude Code's synthetic replies, a failed request, Gemini CLI's
first reply written with zero tokens: it gets no usage, and the census counts the report lost
for that reason (`EMPTY_USAGE`), in every format — where usage dicts meet the builder
(`ConversationBuilder`), Claude Code's own response tracker, and ctxlab's own files. A reply with
a real count beside it keeps its usage (the control)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import Transcript, load, load_transcript
from ctxlab.io._build import EMPTY_USAGE
from ctxlab.messages import AssistantMessage, ProviderUsage, TextBlock, UserMessage
from tests.io.shown import added_up
from tests.strategies import SETTINGS


def _openai(empty: Any) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello", "usage": empty},
        {"role": "user", "content": "again"},
        {
            "role": "assistant",
            "content": "hello again",
            "usage": {"prompt_tokens": 30, "completion_tokens": 4},
        },
    ]


def _claude_code_line(kind: str, number: int, **message: Any) -> dict[str, Any]:
    return {
        "type": kind,
        "sessionId": "s",
        "uuid": f"u{number}",
        "requestId": f"r{number}",
        "message": {"role": kind, **message},
    }


def _claude_code() -> list[dict[str, Any]]:
    # Claude Code writes its own replies (an API error, "No response requested.") as model
    # "<synthetic>" with every count zero: no request was billed for them.
    zero = {
        "input_tokens": 0,
        "output_tokens": 0,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
    }

    def reply(number: int, model: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
        content = [{"type": "text", "text": text}]
        message = {"id": f"m{number // 2}", "model": model, "content": content, "usage": usage}
        return _claude_code_line("assistant", number, **message)

    return [
        _claude_code_line("user", 1, content="hi"),
        reply(2, "<synthetic>", "API Error: 529 Overloaded", zero),
        _claude_code_line("user", 3, content="again"),
        reply(4, "claude-sonnet-4-6", "hello", {**zero, "input_tokens": 30, "output_tokens": 4}),
    ]


def _gemini_cli() -> list[dict[str, Any]]:
    zero = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0}
    return [
        {"sessionId": "g", "projectHash": "p", "startTime": "2026-03-02T10:00:00Z"},
        {"id": "u1", "timestamp": "t", "type": "user", "content": [{"text": "hi"}]},
        {"id": "g1", "timestamp": "t", "type": "gemini", "content": "hello", "tokens": zero},
        {"id": "u2", "timestamp": "t", "type": "user", "content": [{"text": "again"}]},
        {
            "id": "g2",
            "timestamp": "t",
            "type": "gemini",
            "content": "hello again",
            "tokens": {**zero, "input": 30, "output": 4, "total": 34},
        },
    ]


def _otel() -> list[dict[str, Any]]:
    def span(start: int, asked: list[dict[str, Any]], said: str, usage: dict[str, int]) -> Any:
        return {
            "name": "chat",
            "context": {"trace_id": "t", "span_id": f"s{start}"},
            "start_time": start,
            "attributes": {
                "gen_ai.input.messages": json.dumps(asked),
                "gen_ai.output.messages": json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": said}]}]
                ),
                **usage,
            },
        }

    first = [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
    second = [
        *first,
        {"role": "assistant", "parts": [{"type": "text", "content": "hello"}]},
        {"role": "user", "parts": [{"type": "text", "content": "again"}]},
    ]
    zero = {"gen_ai.usage.input_tokens": 0, "gen_ai.usage.output_tokens": 0}
    real = {"gen_ai.usage.input_tokens": 30, "gen_ai.usage.output_tokens": 4}
    return [span(1, first, "hello", zero), span(2, second, "hello again", real)]


def _written(tmp_path: Path, name: str, lines: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize(
    ("make", "name", "source"),
    [
        (lambda: _openai({}), "chat.jsonl", "openai"),
        (lambda: _openai({"prompt_tokens": 0, "completion_tokens": 0}), "chat0.jsonl", "openai"),
        (_claude_code, "session.jsonl", "claude_code"),
        (_gemini_cli, "session-g.jsonl", "gemini_cli"),
        (_otel, "spans.jsonl", "otel"),
    ],
)
def test_an_empty_usage_is_no_bill_in_every_format(
    tmp_path: Path, make: Any, name: str, source: str
) -> None:
    # (Chat messages of plain text are told apart by nothing: their format is said.)
    transcript = load(_written(tmp_path, name, make()), format="openai" if "chat" in name else None)
    assert transcript.meta.get("source", "ctxlab") == source
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    assert len(replies) == 2
    first, second = replies
    assert first not in transcript.usage  # no bill of 0 on the reply nobody billed
    assert transcript.usage[second].total_input_tokens == 30  # the control keeps its bill
    assert transcript.usage[second].output_tokens == 4
    census = added_up(transcript)
    # Lost as no bill: in the shared words, or in the format's own (Gemini CLI's zero tokens).
    ((reason, lost),) = census.usage_lost.items()
    assert lost == 1 and "no bill" in reason
    assert reason == EMPTY_USAGE or source == "gemini_cli"
    assert (census.usage_read, census.usage_placed) == (2, 1)


def test_an_empty_usage_in_a_ctxlab_file_is_no_bill(tmp_path: Path) -> None:
    messages = (
        UserMessage(content="hi"),
        AssistantMessage(content=(TextBlock(text="hello"),)),
        UserMessage(content="again"),
        AssistantMessage(content=(TextBlock(text="hello again"),)),
    )
    usage = {1: ProviderUsage(0, 0), 3: ProviderUsage(30, 4)}
    path = Transcript("t", {}, "", messages, usage=usage).save(tmp_path / "own.jsonl")
    transcript = load_transcript(path)
    assert transcript.usage == {3: ProviderUsage(30, 4)}
    census = added_up(transcript)
    assert census.usage_lost == {EMPTY_USAGE: 1}


_ZERO = st.sampled_from([0, 0.0, "0", None])
_OPENAI_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")


@SETTINGS
@given(st.dictionaries(st.sampled_from(_OPENAI_KEYS), _ZERO, max_size=3))
def test_any_usage_that_counts_nothing_is_placed_on_no_reply(empty: dict[str, Any]) -> None:
    transcript = load(_openai(empty), format="openai")
    assert sorted(transcript.usage) == [3]
    census = added_up(transcript)
    assert census.usage_lost == {EMPTY_USAGE: 1}


@SETTINGS
@given(st.integers(0, 3), st.integers(1, 10**6))
def test_one_count_above_zero_is_a_bill(which: int, count: int) -> None:
    # The control: any single count, even output alone, is a bill and is kept.
    counts = [0, 0, 0, 0]
    counts[which] = count
    assert not ProviderUsage(*counts).empty
    assert ProviderUsage(0, 0, 0, 0).empty
