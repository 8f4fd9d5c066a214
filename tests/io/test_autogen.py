"""AutoGen AgentChat saved state (``tests/fixtures/autogen``, made by the real
autogen-agentchat 0.7.5 on its offline replay client): one conversation per agent — its own
``llm_context`` — with each model call's usage from the team's thread, checked against the
test's own reading of the raw state; 0.4's ``name/<team id>`` keys and a society-of-mind agent's
inner team; hostile states refused with a typed error or loaded with their losses counted (the
fixtures mutated: `test_mutated_documents`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up

FOLDER = Path(__file__).parents[1] / "fixtures" / "autogen"
TEAM = FOLDER / "team_state.json"
AGENT = FOLDER / "coder_state.json"


def _raw(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def _thread(state: dict[str, Any]) -> list[dict[str, Any]]:
    manager = next(v for v in state["agent_states"].values() if "message_thread" in v)
    return manager["message_thread"]


@pytest.mark.parametrize(("episode", "name"), [(0, "coder"), (1, "reviewer")])
def test_each_agent_is_its_own_conversation_with_its_usage(episode: int, name: str) -> None:
    state = _raw(TEAM)
    container = state["agent_states"][name]
    context = container["agent_state"]["llm_context"]["messages"]
    transcript = load(TEAM, episode=episode)
    assert transcript.meta["agent"] == name and transcript.meta["agents"] == ["coder", "reviewer"]
    replies = [m for m in context if m["type"] == "AssistantMessage"]
    assert sum(m.role == "assistant" for m in transcript.messages) == len(replies)
    calls = [c["id"] for m in replies if isinstance(m["content"], list) for c in m["content"]]
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    assert uses == calls
    done = [
        r["call_id"]
        for m in context
        if m["type"] == "FunctionExecutionResultMessage"
        for r in m["content"]
    ]
    results = [
        b.tool_use_id for m in transcript.messages if m.role == "user" for b in m.tool_results
    ]
    assert results == done
    # The agent's model calls, from the team's thread, on its replies in order.
    thread = _thread(state)
    billed = [m["models_usage"] for m in thread if m["source"] == name and m.get("models_usage")]
    expected = [ProviderUsage(u["prompt_tokens"], u["completion_tokens"]) for u in billed]
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    skipped = transcript.meta.get("skipped", {})
    assert skipped["team thread message (not this agent's model call)"] == len(thread) - len(billed)
    # Every buffer of the state (the other agent's too) is read and skipped, and so is the
    # other agent's whole conversation.
    buffers = sum(len(c.get("message_buffer", ())) for c in state["agent_states"].values())
    assert skipped["message buffered for an agent (not yet in its context)"] == buffers
    other = next(
        c for n, c in state["agent_states"].items() if n not in (name, "RoundRobinGroupChatManager")
    )
    others = len(other["agent_state"]["llm_context"]["messages"])
    assert skipped["another agent's llm_context (episode=N opens it)"] == others
    census = added_up(transcript)
    assert (census.usage_read, census.usage_placed) == (len(billed), len(billed))
    assert sum(census.read.values()) == len(context) + len(thread) + buffers + others


def test_an_agents_own_state_loads_without_usage() -> None:
    transcript = load(AGENT)
    assert transcript.messages == load(TEAM).messages
    assert transcript.usage == {}  # an agent's state holds no usage; the team's thread does


def test_version_0_4_keys_and_a_society_of_mind_agent() -> None:
    state = _raw(TEAM)
    state["agent_states"] = {f"{k}/4f6e": v for k, v in state["agent_states"].items()}
    outer = {
        "type": "TeamState",
        "version": "1.0.0",
        "agent_states": {
            "society/9a1b": {
                "type": "SocietyOfMindAgentState",
                "version": "1.0.0",
                "inner_team_state": state,
            }
        },
    }
    transcript = load(outer, episode=1)
    assert transcript.meta["agent"] == "society/reviewer"
    assert transcript.usage == load(TEAM, episode=1).usage


def test_no_such_agent_names_the_agents() -> None:
    with pytest.raises(MessageFormatError, match=r"holds 2: coder, reviewer"):
        load(TEAM, episode=2)


def test_usage_that_does_not_match_the_replies_is_counted() -> None:
    state = _raw(TEAM)
    thread = _thread(state)
    del thread[1]  # the coder's first call, and its usage, gone from the thread
    transcript = load(state, episode=0)
    assert transcript.usage == {}
    census = added_up(transcript)
    assert census.usage_lost == {"model call usage not matched to a reply": 3}
    assert (census.usage_read, census.usage_placed) == (3, 0)


def test_a_failed_call_is_an_error_result() -> None:
    state = _raw(TEAM)
    context = state["agent_states"]["coder"]["agent_state"]["llm_context"]["messages"]
    failed = next(m for m in context if m["type"] == "FunctionExecutionResultMessage")
    failed["content"][0].update(content="KeyError: 'apple'", is_error=True)
    transcript = load(state)
    first = next(b for m in transcript.messages if m.role == "user" for b in m.tool_results)
    assert first.is_error and first.text == "KeyError: 'apple'"
