"""AutoGen AgentChat states written here, each rule of ``ctxlab/io/formats/autogen/parse.py`` by the value a
user reads: which documents are states, the agents an episode picks (teams, containers,
society-of-mind teams, 0.4's ``name/<team id>`` keys), each ``llm_context`` message as the model
saw it, the usage of an agent's model calls from the team's thread, and the census over the whole
state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.autogen.parse import is_autogen_state
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, billed, census_read, shown


def _agent(*messages: Any) -> dict[str, Any]:
    return {
        "type": "AssistantAgentState",
        "version": "1.0.0",
        "llm_context": {"messages": list(messages)},
    }


def _container(agent: Any, buffer: list[Any] | None = None) -> dict[str, Any]:
    return {"type": "ChatAgentContainerState", "agent_state": agent, "message_buffer": buffer or []}


def _team(agents: dict[str, Any], thread: list[Any] | None = None) -> dict[str, Any]:
    manager = {"type": "RoundRobinManagerState", "message_thread": thread or []}
    return {
        "type": "TeamState",
        "version": "1.0.0",
        "agent_states": {**agents, "RoundRobinGroupChatManager": manager},
    }


def _user(content: Any) -> dict[str, Any]:
    return {"type": "UserMessage", "content": content, "source": "user"}


def _reply(content: Any, **extra: Any) -> dict[str, Any]:
    return {"type": "AssistantMessage", "content": content, "source": "a", **extra}


def _said(source: str, usage: Any = None, kind: str = "TextMessage") -> dict[str, Any]:
    return {"type": kind, "source": source, "models_usage": usage, "content": "x"}


def test_which_documents_are_states() -> None:
    for kind in (
        "TeamState",
        "AssistantAgentState",
        "ChatAgentContainerState",
        "SocietyOfMindAgentState",
    ):
        state = {"type": kind, "version": "1.0.0"}
        assert is_autogen_state(state) and detect_format(state) == "autogen"
    for bad in (
        None,
        [{"type": "TeamState", "version": 1}],
        {"type": "TeamState"},
        {"type": "Other", "version": 1},
    ):
        assert not is_autogen_state(bad)


def test_an_episode_picks_an_agent_of_the_state_in_order() -> None:
    inner = _team({"critic/t2": _container(_agent(_user("inner")))})
    society = {"type": "SocietyOfMindAgentState", "inner_team_state": inner}
    state = _team(
        {
            "writer/t1": _container(_agent(_user("w"))),
            "user_proxy/t1": _container({"type": "UserProxyAgentState"}),
            "mind/t1": _container(society),
            "junk": "x",
        }
    )
    names = ["writer", "mind/critic"]
    for episode, name in enumerate(names):
        transcript = load(state, format="autogen", episode=episode)
        assert transcript.meta["agent"] == name and transcript.meta["agents"] == names
    assert [b[1] for _, b in shown(load(state, format="autogen", episode=1))] == ["inner"]
    with pytest.raises(MessageFormatError) as raised:
        load(state, format="autogen", episode=2)
    assert str(raised.value).endswith(
        "no agent 2 with a model conversation in this AutoGen state (it holds 2: writer, "
        "mind/critic; episode= picks one, from 0)"
    )
    empty = _team({})
    with pytest.raises(MessageFormatError, match=r"it holds 0: none;"):
        load(empty, format="autogen")
    alone = load(_agent(_user("solo")), format="autogen")
    assert alone.meta["agent"] == "agent"


def test_an_agent_without_a_context_list_is_refused_naming_it() -> None:
    state = _team({"writer": _container({"type": "AssistantAgentState", "llm_context": {}})})
    with pytest.raises(MessageFormatError) as raised:
        load(state, format="autogen")
    assert str(raised.value).endswith("agent 'writer' has no llm_context.messages list")


def test_each_context_message_as_the_model_saw_it() -> None:
    agent = _agent(
        {"type": "SystemMessage", "content": "Be brief."},
        {"type": "SystemMessage", "content": None},
        _user(["look", " ", {"data": "iVBORw0KGgo="}, {"uri": "x"}, None, 5]),
        _user(""),
        _user({"not": "a list"}),
        _user([{"data": ""}]),  # an image without its bytes
        _reply(
            [
                {"id": "c1", "name": "search", "arguments": '{"q": 1}'},
                {"arguments": "{}"},
                "junk",
            ],
            thought="Let me search.",
        ),
        {
            "type": "FunctionExecutionResultMessage",
            "content": [
                {"call_id": "c1", "content": "found", "is_error": False},
                {"call_id": "autogen_call_1", "content": "", "is_error": True},
                {"content": "whose?"},
                "junk",
            ],
        },
        {"type": "FunctionExecutionResultMessage", "content": []},
        _reply("Done.", thought="  "),
        _reply("  "),
        _reply(5),
        {"type": "Other"},
        "junk",
    )
    transcript = load(agent, format="autogen")
    assert transcript.system == "Be brief.\n\n"
    assert shown(transcript) == [
        ("user", ("text", "look")),
        ("user", ("image", "image/png", "iVBORw0KGgo=")),
        ("user", ("provider", {"value": {"uri": "x"}})),
        ("user", ("provider", {"value": 5})),
        ("assistant", ("thinking", "Let me search.", "")),
        ("assistant", ("use", "c1", "search", {"q": 1})),
        ("assistant", ("use", "autogen_call_1", "tool", {})),
        ("user", ("result", "c1", "found", False)),
        ("user", ("result", "autogen_call_1", "(no output)", True)),
        ("assistant", ("text", "Done.")),
    ]
    census_read(
        transcript,
        "message",
        read={
            "llm_context SystemMessage": 2,
            "llm_context UserMessage": 4,
            "llm_context AssistantMessage": 4,
            "llm_context FunctionExecutionResultMessage": 2,
            "llm_context Other": 1,
            "llm_context unreadable": 1,
        },
        skipped={
            "empty message": 4,
            "result message without results": 1,
            "Other message": 1,
            "unreadable message": 1,
            # The message of only an image without data: skipped once, for it (i67-skip).
            "image without data": 1,
            "tool result without a call id": 1,
        },
    )


def test_usage_from_the_agents_model_calls_in_the_thread() -> None:
    writer = _container(
        _agent(_user("go"), _reply("one"), _user("more"), _reply("two")), [_said("user")]
    )
    critic = _container(_agent(_user("check")))
    thread = [
        _said("user"),
        _said("writer", {"prompt_tokens": 100, "completion_tokens": 7}),
        _said("critic", {"prompt_tokens": 1, "completion_tokens": 1}),
        _said("writer", None),
        _said("writer", {"prompt_tokens": 150}, kind="ToolCallRequestEvent"),
        "junk",
    ]
    state = _team({"writer/t1": writer, "critic/t1": critic}, thread)
    state["participant_names"] = ["writer", "critic"]  # a list that holds no messages
    transcript = load(state, format="autogen")
    census = billed(transcript, {1: ProviderUsage(100, 7), 3: ProviderUsage(150, 0)})
    assert census.read == {
        "llm_context UserMessage": 2,
        "llm_context AssistantMessage": 2,
        "message_thread TextMessage": 4,
        "message_thread ToolCallRequestEvent": 1,
        "message_thread unreadable": 1,
        "llm_context message": 1,
        "message_buffer": 1,  # the writer's (the critic's is empty)
    }
    assert transcript.meta["skipped"] == {
        "team thread message (not this agent's model call)": 4,
        "another agent's llm_context (episode=N opens it)": 1,
        "message buffered for an agent (not yet in its context)": 1,
    }
    # As many calls as replies, or none placed: one call fewer and both are counted lost.
    fewer = load(_team({"writer/t1": writer}, thread[:3]), format="autogen")
    assert fewer.usage == {}
    lost = fewer.census
    assert lost is not None and lost.usage_lost == {"model call usage not matched to a reply": 1}


def test_an_inner_teams_thread_bills_its_agents() -> None:
    inner = _team(
        {"critic/t2": _container(_agent(_user("go"), _reply("ok")))},
        [_said("critic", {"prompt_tokens": 9, "completion_tokens": 2})],
    )
    society = {"type": "SocietyOfMindAgentState", "inner_team_state": inner}
    # In a container (0.5 on), or the team's own entry (0.4).
    for wrapped in (_container(society), society):
        state = _team({"mind": wrapped})
        transcript = load(state, format="autogen")
        assert transcript.usage == {1: ProviderUsage(9, 2)}
    # A society in a society: the agent is named by its path, its calls by its own name.
    outer = {"type": "SocietyOfMindAgentState", "inner_team_state": _team({"inner/t3": society})}
    state = _team({"mind": _container(outer)})
    transcript = load(state, format="autogen")
    assert transcript.meta["agent"] == "mind/inner/critic"
    assert transcript.usage == {1: ProviderUsage(9, 2)}


@settings(database=None, max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 10**5), min_size=1, max_size=6), st.integers(-1, 1))
def test_calls_bill_the_replies_in_order_only_when_they_agree(
    prompts: list[int], extra: int
) -> None:
    messages: list[Any] = []
    for i in range(len(prompts)):
        messages += [_user(f"q{i}"), _reply(f"a{i}")]
    calls = [
        _said("w", {"prompt_tokens": p, "completion_tokens": i}) for i, p in enumerate(prompts)
    ]
    if extra > 0:
        calls.append(_said("w", {"prompt_tokens": 1, "completion_tokens": 1}))
    elif extra < 0:
        calls = calls[1:]
    transcript = load(_team({"w": _container(_agent(*messages))}, calls), format="autogen")
    census = added_up(transcript)
    if extra == 0:
        # A call that counts nothing (0 prompt, 0 completion tokens) is no bill.
        assert transcript.usage == {
            2 * i + 1: ProviderUsage(p, i) for i, p in enumerate(prompts) if p or i
        }
    else:
        assert transcript.usage == {}
        lost = {"model call usage not matched to a reply": len(calls)} if calls else {}
        assert census.usage_lost == lost
