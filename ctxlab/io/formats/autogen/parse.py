"""AutoGen AgentChat saved state: ``await team.save_state()`` or ``await agent.save_state()``,
saved as JSON.

Read from AutoGen's own code (microsoft/autogen at 2026-04: ``autogen_agentchat/state/_states.py``
— ``TeamState``, ``ChatAgentContainerState``, ``AssistantAgentState``, the managers' states,
``SocietyOfMindAgentState`` —, ``autogen_core/models/_types.py`` — ``SystemMessage``,
``UserMessage``, ``AssistantMessage``, ``FunctionExecutionResultMessage``, ``RequestUsage`` —, and
the messages of ``autogen_agentchat/messages.py``), 0.4 to 0.7. A team's state maps each agent
(``name`` or, in 0.4, ``name/<team id>``) to its container — the agent's own state and the
messages buffered for it — and the group chat manager to its ``message_thread``.

Each assistant agent has its own conversation with the model, its ``llm_context``: one
conversation per agent, ``episode`` picks it (in the order of the state; ``meta["agents"]``
lists them; a society-of-mind agent's inner team is walked too). ``UserMessage`` is a user turn,
``AssistantMessage`` a reply (text, or ``FunctionCall`` items as calls; its ``thought`` as
thinking), ``FunctionExecutionResultMessage`` the results; a ``SystemMessage`` is the System text
(AssistantAgent adds its system message at each call, so the state often has none). Usage is
in the team's thread: the agent's messages with ``models_usage`` are its model calls, in order —
put on the replies when there are as many as replies, else counted as lost. The census counts
a message a record, over the whole state: the agent's ``llm_context`` messages, the thread's
messages (this agent's model calls used for their usage, the others skipped), and the other
agents' conversations and every ``message_buffer``, skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, tool_result
from ctxlab.io.formats._chat import arguments_of
from ctxlab.messages import ProviderUsage

__all__ = ["from_autogen", "is_autogen_state"]

_STATES = {"TeamState", "AssistantAgentState", "ChatAgentContainerState", "SocietyOfMindAgentState"}


def is_autogen_state(value: Any) -> bool:
    """An AgentChat state: a ``type`` of AutoGen's states and its ``version``."""
    return isinstance(value, Mapping) and value.get("type") in _STATES and "version" in value


def _agents(state: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Mapping[str, Any]]]:
    """(name, assistant state) of every agent with an LLM context (their buffers are counted
    with every other list of messages, by `_message_lists`)."""
    kind = state.get("type")
    if kind == "AssistantAgentState":
        return [(prefix or "agent", state)]
    if kind == "ChatAgentContainerState":
        return _agents(as_mapping(state.get("agent_state")), prefix)
    if kind == "SocietyOfMindAgentState":
        return _agents(as_mapping(state.get("inner_team_state")), prefix)
    found: list[tuple[str, Mapping[str, Any]]] = []
    for key, agent in as_mapping(state.get("agent_states")).items():
        name = str(key).split("/", 1)[0]
        found += _agents(as_mapping(agent), f"{prefix}/{name}" if prefix else name)
    return found


def _threads(state: Mapping[str, Any]) -> list[Any]:
    """The group chat managers' message threads, outer team first."""
    threads: list[Any] = []
    if isinstance(state.get("message_thread"), list):
        threads.append(state["message_thread"])
    for value in as_mapping(state.get("agent_states")).values():
        inner = as_mapping(value)
        nested = as_mapping(as_mapping(inner.get("agent_state")).get("inner_team_state"))
        threads += (
            _threads(inner) + _threads(nested) + _threads(as_mapping(inner.get("inner_team_state")))
        )
    return threads


def from_autogen(
    state: Mapping[str, Any], where: str, episode: int
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation of agent ``episode``, its System text and notes."""
    agents = _agents(state)
    if not 0 <= episode < len(agents):
        names = ", ".join(n for n, _ in agents) or "none"
        msg = (
            f"{where}: no agent {episode} with a model conversation in this AutoGen state (it "
            f"holds {len(agents)}: {names}; episode= picks one, from 0)"
        )
        raise MessageFormatError(msg)
    name, agent = agents[episode]
    messages = as_mapping(agent.get("llm_context")).get("messages")
    if not isinstance(messages, list):
        msg = f"{where}: agent {name!r} has no llm_context.messages list"
        raise MessageFormatError(msg)
    builder = ConversationBuilder(f"{where} agent {name}", unit="message")
    system: list[str] = []
    for message in messages:
        _message(builder, system, message)
        builder.settle("message with nothing kept")
    threads = _threads(state)
    _usage(builder, name.rsplit("/", 1)[-1], [m for t in threads for m in t])
    # The census is of the whole state: the other agents' conversations and every buffer are
    # read too, and skipped.
    read = {id(messages), *(id(t) for t in threads)}
    for key, found in _message_lists(state):
        if id(found) not in read:
            read.add(id(found))
            kind = "llm_context message" if key == "messages" else key
            builder.record(kind, len(found), raw=found)
            builder.skip(_OTHER_LISTS[key])
    notes = {"agent": name, "agents": [n for n, _ in agents]}
    return builder, "\n\n".join(system), notes


_OTHER_LISTS = {
    "messages": "another agent's llm_context (episode=N opens it)",
    "message_buffer": "message buffered for an agent (not yet in its context)",
    "message_thread": "team thread message (not this agent's model call)",
}


def _message_lists(value: Any) -> list[tuple[str, list[Any]]]:
    """Every list of messages in a state — each agent's ``llm_context.messages``, each
    ``message_buffer`` and ``message_thread`` — as (key, list), depth first."""
    found: list[tuple[str, list[Any]]] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in _OTHER_LISTS and isinstance(item, list):
                found.append((key, item))
            else:
                found += _message_lists(item)
    elif isinstance(value, list):
        for item in value:
            found += _message_lists(item)
    return found


def _message(builder: ConversationBuilder, system: list[str], message: Any) -> None:
    kind = message.get("type") if isinstance(message, Mapping) else None
    builder.record(f"llm_context {kind or 'unreadable'}")
    if kind == "SystemMessage":
        system.append(str(message.get("content") or ""))
        builder.use()
    elif kind == "UserMessage":
        said = _user_blocks(message.get("content"))
        if said:
            builder.add("user", said)
        else:
            builder.skip("empty message")
    elif kind == "AssistantMessage":
        content = message.get("content")
        blocks: list[dict[str, Any]] = []
        thought = message.get("thought")
        if isinstance(thought, str) and thought.strip():
            blocks.append({"type": "thinking", "thinking": thought, "signature": ""})
        if isinstance(content, list):
            blocks += [_call(c, n) for n, c in enumerate(content) if isinstance(c, Mapping)]
        elif isinstance(content, str) and content.strip():
            blocks.append({"type": "text", "text": content})
        if blocks:
            builder.add("assistant", blocks)
        else:
            builder.skip("empty message")
    elif kind == "FunctionExecutionResultMessage":
        results = [r for r in message.get("content") or () if isinstance(r, Mapping)]
        if not results:
            builder.skip("result message without results")
            return
        builder.add(
            "user",
            [
                tool_result(
                    str(r.get("call_id") or ""),
                    str(r.get("content") or ""),
                    is_error=bool(r.get("is_error")),
                )
                for r in results
            ],
        )
    else:
        builder.skip(f"{kind or 'unreadable'} message")


def _user_blocks(content: Any) -> list[dict[str, Any]]:
    items = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    blocks: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, str):
            if item.strip():
                blocks.append({"type": "text", "text": item})
        elif isinstance(item, Mapping) and isinstance(item.get("data"), str):
            # An autogen_core Image dumps as its base64 data.
            blocks.append(image_block(f"data:image/png;base64,{item['data']}"))
        elif item is not None:
            blocks.append({"type": "provider", "data": {"value": item}})
    return blocks


def _call(call: Mapping[str, Any], n: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": str(call.get("id") or f"autogen_call_{n}"),
        "name": str(call.get("name") or "tool"),
        "input": arguments_of(call.get("arguments")),
    }


def _usage(builder: ConversationBuilder, name: str, thread: list[Any]) -> None:
    """The agent's model calls in the team's thread, on its replies in order when they agree,
    each dating its reply (``created_at``, ISO 8601: when the call's message was made)."""
    calls: list[ProviderUsage] = []
    stamps: list[Any] = []
    for message in thread:
        usage = as_mapping(message).get("models_usage")
        kind = as_mapping(message).get("type")
        builder.record(f"message_thread {kind or 'unreadable'}", raw=message)
        if as_mapping(message).get("source") == name and isinstance(usage, Mapping):
            builder.use()  # read for its usage, placed below
            calls.append(
                ProviderUsage(usage.get("prompt_tokens") or 0, usage.get("completion_tokens") or 0)
            )
            stamps.append(as_mapping(message).get("created_at"))
        else:
            builder.skip("team thread message (not this agent's model call)")
    replies = [i for i, t in enumerate(builder.turns) if t["role"] == "assistant"]
    if calls and len(calls) == len(replies):
        for index, usage, stamp in zip(replies, calls, stamps, strict=True):
            builder.place_usage(index, usage)
            builder.reply_time(stamp, turn=index)
    else:
        builder.lose_usage("model call usage not matched to a reply", len(calls))
