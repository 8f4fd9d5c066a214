"""Letta agent files (``.af``): an agent — or several — exported with its conversation.

Read from Letta's own code and files (letta-ai/letta before its archiving in 2026-08:
``letta/schemas/agent_file.py`` — ``AgentFileSchema``, ``AgentSchema``, ``MessageSchema`` —,
``letta/serialize_schemas/pydantic_agent_schema.py``; letta-ai/agent-file's published agents).
Two generations:

- **v1** (to mid-2025): one agent — ``messages``, ``in_context_message_indices`` (positions in
  ``messages``), ``system``, ``tools`` (each with its ``json_schema``), ``llm_config``;
- **v2** (2025 on): ``agents`` (each with ``messages``, ``in_context_message_ids``,
  ``tool_ids``, ``system``, ``llm_config``), ``tools``, ``blocks``, ``groups``, ... — ``episode``
  picks the agent (0: the first with a conversation).

A message has a ``role`` (``system``, ``user``, ``assistant``, ``tool``, ``approval``) and
``content`` — a string or a list of parts (``text``, ``image``, ``reasoning``,
``redacted_reasoning``, ``omitted_reasoning``); a reply's calls are ``tool_calls`` (OpenAI's shape), a ``tool`` message answers one
(``tool_call_id``; ``tool_returns`` with a ``status``). The whole history is read, in the file's
order — Letta keeps evicted messages beside the ones in its context window; its summary of
evicted messages (a user message saying "prior messages … have been hidden") is a recorded
compaction. The in-context System message is the System text (older copies of it are counted
as skipped); the agent's tools are its tool schemas. Agent files hold no usage. The census
counts a message a record, over every agent of the file (the other agents' skipped); omitted
reasoning is a part left out, and so is a tool call of no id, name or arguments (Letta's calls
are OpenAI's, which require all three: such a call names nothing to run or answer); a message
of which nothing else is kept is skipped for it, once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, tool_result
from ctxlab.io.formats._chat import arguments_of, tool_schemas
from ctxlab.messages._request import ToolSchema

__all__ = ["from_letta", "is_letta_agent_file"]

_SUMMARY_MARK = "prior messages"
_HIDDEN_MARK = "have been hidden from view"
_NAMELESS_CALL = "tool call without an id, a name or arguments"


def is_letta_agent_file(value: Any) -> bool:
    """A Letta agent file: v2 (``agents`` with ``messages`` and in-context ids) or v1 (one
    agent with ``messages`` and ``in_context_message_indices``)."""
    if not isinstance(value, Mapping):
        return False
    agents = value.get("agents")
    if isinstance(agents, list) and isinstance(value.get("tools"), list):
        return all(isinstance(a, Mapping) and "messages" in a for a in agents)
    return isinstance(value.get("messages"), list) and "in_context_message_indices" in value


def from_letta(
    document: Mapping[str, Any], where: str, episode: int
) -> tuple[ConversationBuilder, str, tuple[ToolSchema, ...], dict[str, Any]]:
    """The conversation, System text, tool schemas and notes of agent ``episode``."""
    agents = document.get("agents")
    if isinstance(agents, list):
        listed = [a for a in agents if isinstance(a, Mapping)]
        talking = [a for a in listed if isinstance(a.get("messages"), list) and a["messages"]]
        if not 0 <= episode < len(talking):
            msg = (
                f"{where}: no agent {episode} with a conversation (the file holds {len(listed)} "
                f"agents, {len(talking)} with messages; episode= picks one, from 0)"
            )
            raise MessageFormatError(msg)
        agent = talking[episode]
        ids = [str(i) for i in agent.get("in_context_message_ids") or ()]
        wanted = {str(i) for i in agent.get("tool_ids") or ()}
        tools = [t for t in document.get("tools") or () if isinstance(t, Mapping)]
        tools = [t for t in tools if not wanted or str(t.get("id")) in wanted]
        notes: dict[str, Any] = {"agents": [str(a.get("name")) for a in talking], "version": 2}
    else:
        agent = document
        positions = agent.get("in_context_message_indices") or ()
        messages = agent.get("messages") or []
        ids = [
            _key(messages[p], p)
            for p in positions
            if isinstance(p, int) and not isinstance(p, bool) and 0 <= p < len(messages)
        ]
        tools = [t for t in agent.get("tools") or () if isinstance(t, Mapping)]
        notes = {"version": 1}
    messages = agent.get("messages")
    if not isinstance(messages, list):
        msg = f"{where}: an agent's 'messages' must be a list"
        raise MessageFormatError(msg)
    notes["agent"] = str(agent.get("name") or "")
    model = as_mapping(agent.get("llm_config")).get("model")
    if isinstance(model, str):
        notes["models"] = [model]
    reader = _Reader(ConversationBuilder(where, unit="message"), ids)
    for index, message in enumerate(messages):
        reader.message(message, index)
        reader.builder.settle("message with nothing kept")
    if isinstance(agents, list):
        # The census is of the whole file: the other agents' messages are read, and skipped.
        for other in agents:
            held = as_mapping(other).get("messages")
            if other is not agent and isinstance(held, list):
                reader.builder.record("message of another agent", len(held), raw=held)
                reader.builder.skip("another agent's message (episode=N opens it)")
    notes.update(reader.notes())
    schemas = tool_schemas([_schema(t) for t in tools], where)
    return reader.builder, reader.system or str(agent.get("system") or ""), schemas, notes


def _key(message: Any, index: int) -> str:
    """How the in-context list names a message: its id (v2), else its position (v1)."""
    found = message.get("id") if isinstance(message, Mapping) else None
    return str(found) if found is not None else str(index)


def _schema(tool: Mapping[str, Any]) -> dict[str, Any]:
    schema = as_mapping(tool.get("json_schema"))
    return {
        "name": schema.get("name") or tool.get("name"),
        "description": schema.get("description") or tool.get("description") or "",
        "parameters": schema.get("parameters") or {"type": "object"},
    }


class _Reader:
    def __init__(self, builder: ConversationBuilder, in_context: Sequence[str]) -> None:
        self.builder = builder
        self.in_context = set(in_context)
        self.system = ""
        self.compactions: list[dict[str, Any]] = []
        self.outside = 0
        self.opening: set[str] = set()  # calls of replies before any user message
        self.heard = False  # a user message was read

    def message(self, message: Any, index: int) -> None:
        if not isinstance(message, Mapping):
            self.builder.record("unreadable message")
            self.builder.skip("unreadable message")
            return
        self.builder.record(f"{message.get('role')} message", raw=message)
        key = _key(message, index)
        if self.in_context and key not in self.in_context:
            self.outside += 1
        role = message.get("role")
        parts = _parts(message.get("content"))
        if role == "system":
            self.system_message(parts, key)
        elif role == "user":
            self.user(parts)
        elif role == "assistant" and not self.heard:
            # Letta writes an opening exchange (its "bootup" send_message) before any user
            # message; no request produced it, and a conversation starts with the user's turn.
            self.builder.skip("opening reply before any user message")
            self.opening |= {str(as_mapping(c).get("id")) for c in message.get("tool_calls") or ()}
        elif role == "assistant":
            self.assistant(message, parts, index)
        elif role == "tool":
            self.tool(message, parts)
        else:
            self.builder.skip(f"{role} message")  # approval requests and responses

    def system_message(self, parts: list[Any], key: str) -> None:
        # The first system message in context is the System text; any other an older copy.
        if not self.system and (not self.in_context or key in self.in_context):
            self.system = _text(parts)
            self.builder.use()
        else:
            self.builder.skip("system message (an older copy)")

    def user(self, parts: list[Any]) -> None:
        self.heard = True
        text = _text(parts)
        if _SUMMARY_MARK in text and _HIDDEN_MARK in text:
            self.compactions.append(
                {
                    "kind": "compact",
                    "trigger": "auto",  # Letta summarizes when its context fills
                    "replies_before": sum(t["role"] == "assistant" for t in self.builder.turns),
                    "summary_head": text[:200],
                }
            )
        blocks = _blocks(parts, self.builder)
        if blocks:
            self.builder.add("user", blocks)
        else:
            self.builder.skip("empty message")

    def assistant(self, message: Mapping[str, Any], parts: list[Any], index: int) -> None:
        blocks = _blocks(parts, self.builder)
        for n, call in enumerate(message.get("tool_calls") or ()):
            if not isinstance(call, Mapping):
                continue
            function = as_mapping(call.get("function"))
            if not (call.get("id") or function.get("name") or function.get("arguments")):
                # Letta's tool call is OpenAI's (an id, a function's name and arguments, all
                # required): one with none of them names nothing to run and nothing a return
                # can answer, and no request carried it. Set aside as the file holds it (an
                # element of ``tool_calls``: what the inventory finds it as); a message that
                # keeps nothing is skipped for it, once (`ConversationBuilder.leave_out`).
                self.builder.leave_out(_NAMELESS_CALL, raw={"tool_calls": [call]})
                continue
            blocks.append(
                {
                    "type": "tool_use",
                    "id": str(call.get("id") or f"letta_call_{index}_{n}"),
                    "name": str(function.get("name") or "tool"),
                    "input": arguments_of(function.get("arguments")),
                }
            )
        if not blocks:
            self.builder.skip("empty message")
        elif self.builder.add("assistant", blocks):
            # ``created_at``: ISO 8601 (a reply of several messages: its first).
            self.builder.reply_time(message.get("created_at"))

    def tool(self, message: Mapping[str, Any], parts: list[Any]) -> None:
        results = _results(message, parts)
        kept = [r for r in results if r["tool_use_id"] not in self.opening]
        opening = len(results) - len(kept)
        if kept and self.builder.add("user", kept):
            self.builder.leave_out("result of an opening reply's call", opening)
        elif opening:
            self.builder.skip("result of an opening reply's call")
        # else nothing of it was kept (a result naming no call): settled by the caller

    def notes(self) -> dict[str, Any]:
        notes: dict[str, Any] = {"in_context_messages": len(self.in_context)}
        if self.outside:
            notes["outside_context_window"] = self.outside
        if self.compactions:
            notes["compactions"] = self.compactions
        return notes


def _parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def _text(parts: Sequence[Any]) -> str:
    return "\n".join(
        str(p.get("text") or "")
        for p in parts
        if isinstance(p, Mapping) and p.get("type") == "text"
    )


def _blocks(parts: Sequence[Any], builder: ConversationBuilder) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        kind = part.get("type") if isinstance(part, Mapping) else None
        if not isinstance(part, Mapping):
            builder.leave_out("unreadable part")
        elif kind == "text":
            if str(part.get("text") or "").strip():
                blocks.append({"type": "text", "text": str(part["text"])})
        elif kind == "reasoning":
            signature = part.get("signature")
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(part.get("reasoning") or ""),
                    "signature": signature if isinstance(signature, str) else "",
                }
            )
        elif kind == "redacted_reasoning" and isinstance(part.get("data"), str):
            blocks.append({"type": "redacted_thinking", "data": part["data"]})
        elif kind == "omitted_reasoning":
            builder.leave_out("omitted reasoning")
        elif kind == "image" and isinstance(part.get("source"), Mapping):
            source = part["source"]
            if source.get("type") == "url" and isinstance(source.get("url"), str):
                blocks.append(image_block(source["url"]))
            else:
                blocks.append({"type": "provider", "data": dict(part)})
        else:
            blocks.append({"type": "provider", "data": dict(part)})
    return blocks


def _results(message: Mapping[str, Any], parts: Sequence[Any]) -> list[dict[str, Any]]:
    returns = [r for r in message.get("tool_returns") or () if isinstance(r, Mapping)]
    if len(returns) > 1:  # parallel calls answered in one message
        return [
            tool_result(
                str(r.get("tool_call_id") or ""),
                str(r.get("func_response") or ""),
                is_error=r.get("status") == "error",
            )
            for r in returns
        ]
    status = returns[0].get("status") if returns else None
    text = _text(parts) or (str(returns[0].get("func_response") or "") if returns else "")
    call_id = message.get("tool_call_id") or (returns[0].get("tool_call_id") if returns else "")
    return [tool_result(str(call_id or ""), text, is_error=status == "error")]
