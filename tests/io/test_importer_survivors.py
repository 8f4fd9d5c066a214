"""Promises of the importers that a mutation round showed untested (issue 51): each test below
fails when the line it guards is broken — the count of a Codex compaction's replacement history,
a Gemini ``functionResponse`` error read as an error result, Copilot's and Langfuse's cache
writes read as cache writes, and two whole Gemini CLI stream-json replies kept two."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.io.formats.gemini_stream.parse import STAND_IN_EXCHANGE
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up
from tests.io.test_otel_langfuse import _api_export

FIXTURES = Path(__file__).parents[1] / "fixtures"
ROLLOUT = FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl"

# What Codex writes as a compaction's ``replacement_history`` (``CompactedItem``,
# codex-rs/protocol): the items the model keeps after it, a compaction item among them.
REPLACEMENT = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Fix it."}]},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]},
    {"type": "function_call", "name": "shell", "arguments": '{"command": ["ls"]}', "call_id": "c9"},
    {"type": "compaction", "encrypted_content": "gAAAA-compacted"},
]


@pytest.mark.parametrize("items", [REPLACEMENT, REPLACEMENT[:1], []])
def test_a_codex_replacement_history_is_counted_item_by_item(
    tmp_path: Path, items: list[Any]
) -> None:
    lines = [json.loads(line) for line in ROLLOUT.read_text().splitlines()]
    (compacted,) = [line for line in lines if line["type"] == "compacted"]
    compacted["payload"]["replacement_history"] = items
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    transcript = load(path)
    census = added_up(transcript)
    assert census.left_out.get("replacement history item", 0) == len(items)
    assert transcript.meta["skipped"].get("replacement history item", 0) == len(items)
    # Its calls and replies are set aside with it, not unaccounted.
    assert census.whole, census.unaccounted
    # The conversation goes on from the summary, as without the history.
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert "Fix it." not in texts and "Done." not in texts


def _gemini_error_call(response: dict[str, Any]) -> list[dict[str, Any]]:
    """A Gemini CLI session (records as its recorder writes them) whose one call got
    ``response`` (what ``coreToolScheduler`` sends back: ``{output}``, or ``{error}`` for a
    failed or cancelled call)."""
    call = {
        "id": "read_file-1",
        "name": "read_file",
        "args": {"path": "a.py"},
        "result": [{"functionResponse": {"id": "read_file-1", "name": "read_file", **response}}],
        "status": "error" if "error" in response.get("response", {}) else "success",
    }
    tokens = {"input": 900, "output": 7, "cached": 0, "thoughts": 0, "tool": 0, "total": 907}

    def record(n: int, kind: str, content: Any, **extra: Any) -> dict[str, Any]:
        stamp = f"2026-05-01T10:00:{n:02d}Z"
        return {"id": f"r{n}", "timestamp": stamp, "type": kind, "content": content, **extra}

    return [
        {"sessionId": "s", "projectHash": "p", "startTime": "2026-05-01T10:00:00Z"},
        record(1, "user", [{"text": "read a.py"}]),
        record(2, "gemini", "", toolCalls=[call], tokens=tokens, model="gemini-2.5-pro"),
        record(3, "gemini", "It is not there.", tokens=tokens, model="gemini-2.5-pro"),
    ]


RESPONSES = [
    ({"response": {"error": "File not found: a.py"}}, "File not found: a.py", True),
    (
        {"response": {"error": "[Operation Cancelled] Reason: User did not allow"}},
        "[Operation Cancelled] Reason: User did not allow",
        True,
    ),
    ({"response": {"error": {"code": 404}}}, '{"code": 404}', True),
    ({"response": {"output": "def add(): ..."}}, "def add(): ...", False),
    (
        {"response": {"output": "partial", "error": "x"}},
        '{"output": "partial", "error": "x"}',
        False,
    ),
]


@pytest.mark.parametrize(("response", "text", "error"), RESPONSES)
def test_a_gemini_cli_function_response_error_is_an_error_result(
    response: dict[str, Any], text: str, error: bool
) -> None:
    transcript = load(_gemini_error_call(response), format="gemini_cli")
    (result,) = [r for m in transcript.messages for r in getattr(m, "tool_results", ())]
    assert (result.tool_use_id, result.text, bool(result.is_error)) == ("read_file-1", text, error)


@pytest.mark.parametrize(("response", "text", "error"), RESPONSES)
def test_a_gemini_api_function_response_error_is_an_error_result(
    response: dict[str, Any], text: str, error: bool
) -> None:
    contents = [
        {"role": "user", "parts": [{"text": "read a.py"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"p": 1}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", **response}}]},
        {"role": "model", "parts": [{"text": "It is not there."}]},
    ]
    transcript = load(contents, format="gemini")
    (result,) = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert (result.text, bool(result.is_error)) == (text, error)


def _copilot(*events: tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"type": kind, "data": data, "id": f"e{n}", "parentId": None}
        for n, (kind, data) in enumerate(events)
    ]


def test_copilot_cache_writes_are_cache_writes_not_input() -> None:
    # ``inputTokens`` holds the cache reads and writes (a CLI 1.0.55 shutdown's totals show it).
    call = {
        "inputTokens": 1_000,
        "outputTokens": 9,
        "cacheReadTokens": 300,
        "cacheWriteTokens": 200,
    }
    transcript = load(
        _copilot(
            ("user.message", {"content": "go"}),
            ("assistant.message", {"messageId": "a", "content": "yo", "outputTokens": 9}),
            ("assistant.usage", {"model": "m", **call}),
            (
                "session.compaction_complete",
                {"success": True, "summaryContent": "S", "compactionTokensUsed": call},
            ),
            (
                "session.shutdown",
                {"modelMetrics": {"m": {"requests": {"count": 1}, "usage": call}}},
            ),
        ),
        format="copilot",
    )
    assert transcript.usage == {1: ProviderUsage(500, 9, 300, 200)}
    (compaction,) = transcript.meta["compactions"]
    assert compaction["usage"]["cache_creation_input_tokens"] == 200
    assert compaction["usage"]["input_tokens"] == 500
    (totals,) = transcript.meta["session_usage"]
    assert (totals["cache_write_tokens"], totals["cache_read_tokens"]) == (200, 300)


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("cache_creation_input_tokens", "cache_read_input_tokens"),
        ("input_cache_creation", "input_cached_tokens"),
        ("cache_write", "cache_read"),
    ],
)
def test_langfuse_cache_writes_are_cache_writes(written: str, read: str) -> None:
    export = _api_export()
    generation = next(o for o in export["data"] if o["type"] == "GENERATION")
    # Langfuse's keys are priced apart: the cache is not inside "input".
    generation["usageDetails"] = {"input": 100, "output": 10, read: 30, written: 40}
    assert load(export).usage[1] == ProviderUsage(100, 10, 30, 40)


def _stream(tmp_path: Path, replies: list[dict[str, Any]]) -> Path:
    events = [
        {"type": "init", "session_id": "s", "model": "gemini-2.5-pro"},
        {"type": "message", "role": "user", "content": "Fix it"},
        *({"type": "message", "role": "assistant", **r} for r in replies),
        {"type": "result", "status": "success", "stats": {"total_tokens": 12}},
    ]
    path = tmp_path / "run.jsonl"
    stamped = [{"timestamp": "2026-08-01T10:00:00Z", **e} for e in events]
    path.write_text("".join(json.dumps(e) + "\n" for e in stamped))
    return path


def _replies(transcript: Any) -> list[list[str]]:
    return [[b.text for b in m.content] for m in transcript.messages if m.role == "assistant"]


def test_two_whole_stream_json_replies_stay_two(tmp_path: Path) -> None:
    whole = [{"content": "First reply."}, {"content": "Second reply."}]
    transcript = load(_stream(tmp_path, whole), format="gemini_stream")
    assert _replies(transcript) == [["First reply."], ["Second reply."]]
    # Between them, what was sent to the model: not in the stream, said so.
    assert transcript.messages[2].content[0].text == STAND_IN_EXCHANGE  # type: ignore[union-attr]
    assert transcript.meta["unrecorded_exchanges"] == 1
    census = transcript.census
    assert census is not None and census.adds_up and census.whole
    assert census.read["message assistant"] == 2 and census.replies == 2
    assert not any("later chunks" in k for k in census.set_aside)


def test_the_chunks_of_a_reply_are_one_reply_and_a_whole_one_its_own(tmp_path: Path) -> None:
    replies = [
        {"content": "Look", "delta": True},
        {"content": "ing.", "delta": True},
        {"content": "Done."},
        {"content": "More", "delta": True},
        {"content": " done.", "delta": True},
    ]
    transcript = load(_stream(tmp_path, replies), format="gemini_stream")
    assert _replies(transcript) == [["Looking."], ["Done."], ["More done."]]
    assert transcript.meta["unrecorded_exchanges"] == 2
    census = transcript.census
    assert census is not None and census.adds_up and census.whole
    assert census.set_aside["reply: a streamed reply's later chunks (joined)"] == 2


def test_chunks_around_a_call_are_one_reply_with_no_stand_in(tmp_path: Path) -> None:
    # As the CLI writes them: the reply's text chunks, its call, the call's result, the next.
    path = _stream(
        tmp_path,
        [{"content": "Read", "delta": True}, {"content": "ing.", "delta": True}],
    )
    lines = path.read_text().splitlines()
    stamp = "2026-08-01T10:00:00Z"
    call = {"type": "tool_use", "timestamp": stamp, "tool_id": "t1", "tool_name": "ls"}
    result = {"type": "tool_result", "timestamp": stamp, "tool_id": "t1", "status": "success"}
    after = {"type": "message", "timestamp": stamp, "role": "assistant", "content": "Two files."}
    lines[-1:-1] = [json.dumps(call), json.dumps(result), json.dumps({**after, "delta": True})]
    path.write_text("\n".join(lines) + "\n")
    transcript = load(path, format="gemini_stream")
    texts = [[b.type for b in m.content] for m in transcript.messages]
    assert texts == [["text"], ["text", "tool_use"], ["tool_result"], ["text"]]
    assert "unrecorded_exchanges" not in transcript.meta
