"""The clock and the cache split of the formats whose fixtures hold no time of their own:
pydantic-ai (run with the real library), LangChain's usage as langchain-anthropic writes it,
mini-SWE-agent (2.x's ``extra.timestamp``, 1.x's response ``created``), aider's LLM log, and
opencode's steps — each written here from the tool's source, its times known to the test."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from ctxlab.io import load
from ctxlab.io._transcript import Transcript, corpus_dir
from ctxlab.messages import AssistantMessage


def _in_order(transcript: Transcript) -> list[float]:
    return [transcript.times[i] for i in sorted(transcript.times)]


def _replies(transcript: Transcript) -> list[int]:
    return [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]


async def test_pydantic_ai_responses_are_dated_by_their_timestamp() -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai")
    from pydantic_ai.messages import ModelMessagesTypeAdapter, ModelResponse
    from pydantic_ai.models.test import TestModel

    agent = pydantic_ai.Agent(TestModel())

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    run = await agent.run("2 + 3?")
    responses = [m for m in run.all_messages() if isinstance(m, ModelResponse)]
    expected = [r.timestamp.timestamp() for r in responses]
    as_json = json.loads(ModelMessagesTypeAdapter.dump_json(run.all_messages()))
    for source in (run.all_messages(), as_json):
        transcript = load(source)
        assert _in_order(transcript) == pytest.approx(expected)
        assert len(transcript.times) == len(_replies(transcript)) == 2


def _langchain(read: int, creation: int, ttl: tuple[int, int] | None = None) -> Transcript:
    """An AIMessage as langchain-anthropic's ``_create_usage_metadata`` leaves it, loaded: the
    input holding the cache, the writes in the TTL keys ``ttl`` (5 minutes, 1 hour) when any
    is above 0."""
    details = {"cache_read": read, "cache_creation": creation}
    if ttl is not None:
        details |= {"ephemeral_5m_input_tokens": ttl[0], "ephemeral_1h_input_tokens": ttl[1]}
    usage = {"input_tokens": 1000, "output_tokens": 5, "total_tokens": 1005}
    usage["input_token_details"] = details
    ai = {"content": "ok", "tool_calls": [], "usage_metadata": usage}
    messages = [
        {"type": "human", "data": {"content": "hi"}},
        {"type": "ai", "data": ai},
    ]
    return load(messages, format="langchain")


def test_langchain_anthropic_writes_in_the_ttl_keys_are_cache_writes() -> None:
    transcript = _langchain(100, 0, ttl=(200, 300))
    (usage,) = transcript.usage.values()
    # The 500 written are writes (not input), 300 of them with the 1-hour TTL.
    assert (usage.input_tokens, usage.cache_read_input_tokens) == (400, 100)
    assert (usage.cache_creation_input_tokens, usage.cache_creation_1h_input_tokens) == (500, 300)
    assert transcript.meta["cache_split_recorded"] == 1
    assert "cache_split_flagged" not in transcript.meta


def test_a_langchain_split_that_does_not_add_up_is_flagged() -> None:
    transcript = _langchain(100, 500, ttl=(100, 300))
    (index,) = transcript.usage
    usage = transcript.usage[index]
    assert (usage.cache_creation_input_tokens, usage.cache_creation_1h_input_tokens) == (500, 300)
    assert transcript.meta["cache_split_flagged"] == [index]
    # Without a split, the writes are cache_creation's, as before.
    plain = _langchain(100, 400)
    (usage,) = plain.usage.values()
    assert (usage.input_tokens, usage.cache_creation_input_tokens) == (500, 400)
    assert "cache_split_recorded" not in plain.meta


def _mini(extra: list[dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    for n, more in enumerate(extra):
        messages.append({"role": "user", "content": f"step {n}"})
        usage = {"prompt_tokens": 900 + n, "completion_tokens": 20}
        said = f"THOUGHT: {n}\n\n```mswea_bash_command\nls\n```"
        messages.append(
            {"role": "assistant", "content": said, "extra": {"response": {"usage": usage}, **more}}
        )
    return {"info": {}, "messages": messages, "trajectory_format": "mini-swe-agent-1"}


def test_mini_swe_agent_2_replies_are_dated_by_extra_timestamp(tmp_path: Path) -> None:
    stamps = [1_763_510_130.25, 1_763_510_136.5, 1_763_510_100.0]  # the last out of order
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(_mini([{"timestamp": t} for t in stamps])))
    assert _in_order(load(path)) == stamps


def test_mini_swe_agent_1_replies_are_dated_by_the_responses_created(tmp_path: Path) -> None:
    created = [1_763_510_130, 1_763_510_136]
    path = tmp_path / "run.traj.json"
    data = _mini([{}, {}])
    replies = [m for m in data["messages"] if m["role"] == "assistant"]
    for message, when in zip(replies, created, strict=True):
        message["extra"]["response"]["created"] = when
    path.write_text(json.dumps(data))
    assert _in_order(load(path)) == [float(c) for c in created]


def _mini_corpus() -> list[Path]:
    return sorted((corpus_dir() / "raw" / "mini_swe_agent").glob("*.traj.json"))


@pytest.mark.skipif(not _mini_corpus(), reason="no mini-SWE-agent files under $CTXLAB_CORPUS/raw")
def test_real_mini_swe_agent_1_runs_are_dated_reply_by_reply() -> None:
    for path in _mini_corpus():
        data = json.loads(path.read_text())
        created = [
            float(m["extra"]["response"]["created"])
            for m in data["messages"]
            if m["role"] == "assistant"
        ]
        transcript = load(path)
        assert _in_order(transcript) == created, path.name
        assert len(created) == len(_replies(transcript)), path.name


def test_aider_replies_are_dated_by_their_requests_header(tmp_path: Path) -> None:
    entries = []
    asks = ["2025-08-25T16:19:38", "2025-08-25T16:25:02"]
    for n, asked in enumerate(asks):
        entries += [
            f"TO LLM {asked}",
            "-------",
            "SYSTEM Act as an expert software developer.",
            "-------",
            *(f"USER q{k}\n-------\nASSISTANT a{k}\n-------" for k in range(n)),
            f"USER q{n}",
            f"LLM RESPONSE {asked[:-2]}59",
            f"ASSISTANT a{n}",
        ]
    path = tmp_path / ".aider.llm.history"
    path.write_text("\n".join(entries) + "\n")
    # aider writes local time without a zone: read as UTC (gaps are right).
    expected = [datetime.fromisoformat(a).replace(tzinfo=UTC).timestamp() for a in asks]
    transcript = load(path)
    assert _in_order(transcript) == expected


def test_opencode_steps_are_each_dated_by_their_first_timed_part(tmp_path: Path) -> None:
    def part(kind: str, **more: Any) -> dict[str, Any]:
        return {"id": f"prt_{kind}_{len(more)}", "type": kind, **more}

    tokens = {"input": 10, "output": 5, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    state = {"status": "completed", "input": {"command": "ls"}, "output": "a.py"}
    parts = [
        part("step-start"),
        part("reasoning", text="look", time={"start": 1_758_069_901_000}),
        part(
            "tool", callID="c1", tool="bash", state={**state, "time": {"start": 1_758_069_902_500}}
        ),
        part("step-finish", reason="tool-calls", cost=0, tokens=tokens),
        part("step-start"),
        part(
            "tool", callID="c2", tool="bash", state={**state, "time": {"start": 1_758_069_960_000}}
        ),
        part("step-finish", reason="tool-calls", cost=0, tokens=tokens),
        part("step-start"),
        part("text", text="done"),  # no time: the step is undated
        part("step-finish", reason="stop", cost=0, tokens=tokens),
    ]
    info = {"id": "msg_2", "role": "assistant", "time": {"created": 1_758_069_900_000}}
    user = {"id": "msg_1", "role": "user", "time": {"created": 1_758_069_899_000}}
    export = {
        "info": {"id": "ses_1", "title": "t"},
        "messages": [
            {"info": user, "parts": [part("text", text="list")]},
            {"info": info, "parts": parts},
        ],
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(export))
    transcript = load(path, format="opencode")
    replies = _replies(transcript)
    assert len(replies) == 3
    # The first step: its reasoning's start (not the message's creation); the second: its
    # call's start; the third holds no time.
    assert transcript.times == {replies[0]: 1_758_069_901.0, replies[1]: 1_758_069_960.0}
