"""Claude Code's clock and cache split, against the file read here without ctxlab: each reply
is dated by its response's first line (``timestamp``, ISO 8601 with ``Z``), and its cache
writes of the 1-hour TTL are the ``usage.cache_creation.ephemeral_1h_input_tokens`` of the
response's final line. The independent reading below shares no code with the importer: it
finds each reply's response by the reply's first block (a call id, a text) and parses the
time with ``strptime``."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from ctxlab.io import load
from ctxlab.io._transcript import Transcript, corpus_dir
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock
from tests.conftest import requires_corpus
from tests.io.test_claude_code_usage import main_replies

FIXTURE = Path(__file__).parents[1] / "fixtures" / "claude_code"
SESSION = FIXTURE / "ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"


def _stamp(text: str) -> float:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def _responses(path: Path) -> list[dict[str, Any]]:
    """Each response of the file's main thread (a sidechain-only file: all of it), in order
    of its first line: the blocks it holds, its first line's time, its final line's usage."""
    found: dict[tuple[Any, Any], dict[str, Any]] = {}
    for key, record in main_replies(path):
        message = record["message"]
        if key not in found:
            found[key] = {"time": _stamp(record["timestamp"]), "blocks": set(), "usage": None}
        response = found[key]
        for block in message.get("content") or []:
            if block.get("type") == "tool_use":
                response["blocks"].add(("call", block["id"]))
            elif block.get("type") == "text":
                response["blocks"].add(("text", block["text"]))
        usage = message.get("usage") or {}
        best = response["usage"]
        if best is None or usage.get("output_tokens", 0) >= best.get("output_tokens", 0):
            response["usage"] = usage
    return list(found.values())


def _first_block(reply: AssistantMessage) -> tuple[str, str]:
    for block in reply.content:
        if isinstance(block, ToolUseBlock):
            return ("call", block.id)
        if isinstance(block, TextBlock):
            return ("text", block.text)
    raise AssertionError(f"a reply with no text and no call: {reply}")


def _expected_times(path: Path, transcript: Transcript) -> dict[int, float]:
    # Each reply's response: the next one in the file that holds the reply's first block.
    responses = iter(_responses(path))
    expected: dict[int, float] = {}
    for index, message in enumerate(transcript.messages):
        if isinstance(message, AssistantMessage):
            block = _first_block(message)
            response = next(r for r in responses if block in r["blocks"])
            expected[index] = response["time"]
    return expected


def _one_hour_total(path: Path) -> int:
    return sum(
        int((r["usage"].get("cache_creation") or {}).get("ephemeral_1h_input_tokens") or 0)
        for r in _responses(path)
        if any(r["usage"].get(k) for k in ("input_tokens", "output_tokens"))
    )


def test_each_reply_of_a_real_session_is_dated_by_its_responses_first_line() -> None:
    transcript = load(SESSION)
    expected = _expected_times(SESSION, transcript)
    assert len(expected) == 20
    assert transcript.times == pytest.approx(expected, abs=1e-6)
    # The figures that mattered: the first reply at 14:12:01.177 UTC, the clock's span.
    first = min(transcript.times)
    assert transcript.times[first] == pytest.approx(1770905521.177)
    assert max(transcript.times.values()) - min(transcript.times.values()) > 60


def test_a_subagents_own_file_is_dated_too() -> None:
    agent = FIXTURE / SESSION.stem / "subagents" / "agent-aac57f5.jsonl"
    transcript = load(agent)
    assert transcript.times
    assert transcript.times == pytest.approx(_expected_times(agent, transcript), abs=1e-6)
    assert load(SESSION, episode=1).times == transcript.times


def test_the_fixtures_5_minute_writes_are_recorded_as_such() -> None:
    transcript = load(SESSION)
    assert transcript.meta["cache_split_recorded"] == 20
    assert "cache_split_flagged" not in transcript.meta
    assert all(u.cache_creation_1h_input_tokens == 0 for u in transcript.usage.values())


def test_a_file_with_a_line_cut_off_keeps_its_clock(tmp_path: Path) -> None:
    # The lines left out are counted in the census afterwards: the clock goes with the usage.
    path = tmp_path / SESSION.name
    path.write_text(SESSION.read_text() + '{"type": "assistant", "timestamp": "2026-02-1')
    transcript = load(path)
    assert transcript.census is not None and transcript.census.skipped
    assert transcript.times == load(SESSION).times
    assert len(transcript.times) == 20


def _corpus_paths() -> list[Path]:
    folder = corpus_dir() / "raw" / "claude_code"
    return sorted(folder.glob("*.jsonl")) + sorted(folder.glob("*/subagents/agent-*.jsonl"))


@pytest.mark.skipif(
    not _corpus_paths(), reason="no raw Claude Code files under $CTXLAB_CORPUS/raw/claude_code"
)
@requires_corpus
def test_every_real_claude_code_file_is_dated_reply_by_reply() -> None:
    for path in _corpus_paths():
        transcript = load(path)
        expected = _expected_times(path, transcript)
        assert transcript.times == pytest.approx(expected, abs=1e-6), path.name
        assert len(transcript.times) == len(expected), path.name


@pytest.mark.skipif(
    not _corpus_paths(), reason="no raw Claude Code files under $CTXLAB_CORPUS/raw/claude_code"
)
@requires_corpus
def test_the_1_hour_writes_of_every_real_file_add_up_to_the_files_own() -> None:
    hours = 0
    for path in _corpus_paths():
        transcript = load(path)
        loaded = sum(u.cache_creation_1h_input_tokens for u in transcript.usage.values())
        assert loaded == _one_hour_total(path), path.name
        assert "cache_split_flagged" not in transcript.meta, path.name
        hours += loaded
    # Two of the corpus's sessions wrote with the 1-hour TTL, three with the 5-minute one.
    assert hours > 500_000
