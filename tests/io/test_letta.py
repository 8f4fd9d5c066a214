"""Letta agent files (``tests/fixtures/letta``: real ``.af`` files Letta published, v1 and v2):
each agent's whole history — checked against the test's own reading of the raw file — with the
in-context System message, the agent's tool schemas, Letta's summary of evicted messages as a
recorded compaction, its opening "bootup" exchange counted rather than replayed, a file saved as
a JSON string of itself, and hostile variants refused with a typed error or loaded with their
losses counted (the fixtures mutated or cut short: `test_census_mutations`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format

FOLDER = Path(__file__).parents[1] / "fixtures" / "letta"
V1 = FOLDER / "outreach_workflow_agent.af"
BOOTUP = FOLDER / "composio_github_star_agent.af"
V2 = FOLDER / "lettabot-builder.af"


def _raw(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _content_text(message: dict[str, Any]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p["type"] == "text")


def _check(
    transcript: ctxlab.Transcript, agent: dict[str, Any], tools: list[dict[str, Any]]
) -> None:
    messages = agent["messages"]
    opening = []  # the test's own reading: replies before the first user message
    for message in messages:
        if message["role"] == "user":
            break
        if message["role"] == "assistant":
            opening += [c["id"] for c in message.get("tool_calls") or ()]
    calls = [
        c["id"]
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
        if c["id"] not in opening
    ]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == calls
    answered = [m["tool_call_id"] for m in messages if m["role"] == "tool"]
    results = [
        b.tool_use_id for m in transcript.messages if m.role == "user" for b in m.tool_results
    ]
    assert results == [a for a in answered if a not in opening]
    replies = [m for m in messages if m["role"] == "assistant"]
    assert sum(m.role == "assistant" for m in transcript.messages) == len(replies) - (
        1 if opening else 0
    )
    systems = [m for m in messages if m["role"] == "system"]
    assert transcript.system == _content_text(systems[0])
    assert sorted(t.name for t in transcript.tools) == sorted(
        t["json_schema"]["name"] for t in tools
    )
    skipped = transcript.meta.get("skipped", {})
    assert skipped.get("system message (an older copy)", 0) == len(systems) - 1
    assert transcript.usage == {}  # agent files hold no usage
    # The replies' reasoning is their thinking, as the model gave it.
    reasoning = [
        p["reasoning"]
        for m in replies
        if not set(c["id"] for c in m.get("tool_calls") or ()) & set(opening)
        and isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "reasoning"
    ]
    thinking = [
        b.thinking  # type: ignore[union-attr]
        for m in transcript.messages
        if m.role == "assistant"
        for b in m.content
        if b.type == "thinking"
    ]
    assert thinking == reasoning


def test_a_v1_agent_file_loads_whole() -> None:
    document = _raw(V1)
    transcript = load(V1)
    assert transcript.meta["source"] == "letta" and transcript.meta["version"] == 1
    _check(transcript, document, document["tools"])
    # The workflow agent clears its context: everything but the System is outside it.
    assert transcript.meta["outside_context_window"] == len(document["messages"]) - 1


def test_letta_s_opening_exchange_is_counted_not_replayed() -> None:
    document = _raw(BOOTUP)
    transcript = load(BOOTUP)
    _check(transcript, document, document["tools"])
    assert transcript.messages[0].role == "user"
    assert transcript.meta["skipped"]["opening reply before any user message"] == 1
    assert transcript.meta["skipped"]["result of an opening reply's call"] == 1


@pytest.mark.parametrize("episode", [0, 1])
def test_each_agent_of_a_v2_file_is_an_episode(episode: int) -> None:
    document = _raw(V2)
    agent = document["agents"][episode]
    transcript = load(V2, episode=episode)
    assert transcript.meta["agent"] == agent["name"] and transcript.meta["version"] == 2
    tools = [t for t in document["tools"] if t["id"] in agent["tool_ids"]]
    _check(transcript, agent, tools)
    assert transcript.meta["agents"] == [a["name"] for a in document["agents"]]


def test_letta_s_summary_of_evicted_messages_is_a_recorded_compaction() -> None:
    transcript = load(V2, episode=1)
    (compaction,) = recorded_compactions(transcript)
    summary = transcript.messages[compaction.index].content[compaction.block]
    assert "have been hidden from view" in summary.text  # type: ignore[union-attr]


def test_redacted_and_omitted_reasoning(tmp_path: Path) -> None:
    document = _raw(V2)
    replies = [m for m in document["agents"][1]["messages"] if m["role"] == "assistant"]
    replies[0]["content"][0] = {"type": "redacted_reasoning", "data": "EqQBCkgIARAB"}
    replies[1]["content"][0] = {"type": "omitted_reasoning"}
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(document))
    transcript = load(path, episode=1)
    first = next(m for m in transcript.messages if m.role == "assistant")
    assert first.content[0].type == "redacted_thinking"
    assert first.content[0].data == "EqQBCkgIARAB"  # type: ignore[union-attr]
    assert transcript.meta["skipped"]["omitted reasoning"] == 1


def test_no_such_agent_names_the_agents_held() -> None:
    with pytest.raises(MessageFormatError, match=r"2 agents, 2 with messages"):
        load(V2, episode=2)


def test_a_file_saved_as_a_json_string_of_itself(tmp_path: Path) -> None:
    path = tmp_path / "agent.af"
    path.write_text(json.dumps(V1.read_text()))
    assert load(path).messages == load(V1).messages


def test_detected_and_listed(tmp_path: Path) -> None:
    assert detect_format(_raw(V1)) == "letta" and detect_format(_raw(V2)) == "letta"
    (tmp_path / "a.af").write_bytes(V1.read_bytes())
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert frame["format"].tolist() == ["letta"] and frame["problem"].isna().all()
