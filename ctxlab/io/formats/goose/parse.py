"""Goose sessions: the JSON Lines files Goose kept in ``~/.local/share/goose/sessions/`` (to
1.9, 2025: a metadata line, then one message per line), and ``goose session export`` output
(from 1.10, when sessions moved to SQLite: the session as JSON, its messages in
``conversation``).

Read from Goose's own code (block/goose, 2026: ``crates/goose/src/conversation/message.rs`` —
``Message``, ``MessageContent``, ``ToolRequest``, ``ToolResponse``, ``MessageMetadata`` —,
``crates/goose/src/session/legacy.rs``, ``session_manager.rs``). A message is ``{id, role,
created, content, metadata}``; its content items are ``text``, ``image``, ``toolRequest``
(``toolCall``: ``{status: "success", value: {name, arguments}}`` or ``{status: "error",
error}``), ``toolResponse`` (``toolResult``: ``{status: "success", value}`` — MCP content, or a
``CallToolResult`` with ``content`` and ``isError`` — or ``{status: "error", error}``),
``thinking``, ``redactedThinking``, and items for the user's screen only
(``toolConfirmationRequest``, ``actionRequired``, ``frontendToolRequest``,
``systemNotification``). ``metadata.agentVisible: false`` marks what the agent no longer sees
(after Goose summarized the conversation): it was sent before, so it is kept, and counted in
``meta["hidden_from_agent"]``; a user message only the agent sees is Goose's summary, a recorded
compaction; a message of items for the screen alone is counted as skipped, such an item in a
message the model sees as a part left out. Goose records usage per session, not per request:
the totals are kept in ``meta["session_usage"]``. The census counts a line a record (the
metadata line, then each message), or, of an export, the session and each message of its
``conversation``. A file may open with a line of the tool schemas the session offered
(``{"tools": [{name, description, input_schema}]}``, as session logs kept for token analysis
hold them): read as the transcript's tools, the file known as Goose's by the message lines after
it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, tool_result
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.io.formats._totals import checked_totals
from ctxlab.messages._request import ToolSchema

__all__ = ["from_goose", "is_goose_export", "is_goose_line"]

_UI_ONLY = {
    "toolConfirmationRequest",
    "actionRequired",
    "frontendToolRequest",
    "systemNotification",
}
_USAGE = (
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "accumulated_total_tokens",
    "accumulated_input_tokens",
    "accumulated_output_tokens",
)


def is_goose_line(value: Any) -> bool:
    """A line of a Goose session file: its metadata (``working_dir``, ``message_count``) or a
    message (``role``, ``created``, ``content`` items with a camelCase ``type``)."""
    if not isinstance(value, Mapping):
        return False
    if "working_dir" in value and ("message_count" in value or "description" in value):
        return True
    return _is_message(value)


def _is_message(value: Any) -> bool:
    content = value.get("content") if isinstance(value, Mapping) else None
    return (
        isinstance(value, Mapping)
        and value.get("role") in ("user", "assistant")
        and isinstance(value.get("created"), int)
        and isinstance(content, list)
    )


def is_goose_export(value: Any) -> bool:
    """``goose session export`` output: a session with ``working_dir`` and a ``conversation``."""
    return (
        isinstance(value, Mapping)
        and "working_dir" in value
        and isinstance(value.get("conversation"), list)
    )


def _is_tools_line(value: Any) -> bool:
    # A line of tool schemas alone: {"tools": [{name, description, input_schema}, ...]}.
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("tools"), list)
        and not _is_message(value)
        and "working_dir" not in value
    )


def from_goose(
    records: Sequence[Any], where: str
) -> tuple[ConversationBuilder, dict[str, Any], tuple[ToolSchema, ...]]:
    """The conversation, notes and tool schemas of a session file's lines, or of an export's
    session."""
    notes: dict[str, Any] = {}
    if len(records) == 1 and is_goose_export(records[0]):
        builder, messages, tools = _export_head(records[0], where, notes)
    else:
        builder, messages, tools = _file_head(records, where, notes)
    _read_messages(builder, messages, where, notes)
    return builder, notes, tools


_Head = tuple[ConversationBuilder, Sequence[Any], tuple[ToolSchema, ...]]
"""The builder, the messages still to read, and the tool schemas the head declared."""


def _export_head(session: Mapping[str, Any], where: str, notes: dict[str, Any]) -> _Head:
    """An export: the session object is one record, then each message of its conversation."""
    builder = ConversationBuilder(where, unit="record")
    builder.record("session")
    builder.use()
    _session_notes(session, notes, where)
    _totals_aside(builder, session)
    return builder, session["conversation"], ()


def _file_head(records: Sequence[Any], where: str, notes: dict[str, Any]) -> _Head:
    """A session file: the lines before the first message (its metadata, its tool schemas)."""
    builder = ConversationBuilder(where, unit="line")
    tools: tuple[ToolSchema, ...] = ()
    head = 0
    while head < len(records) and isinstance(records[head], Mapping):
        line = records[head]
        if _is_message(line) or (head and not (_is_tools_line(line) or is_goose_line(line))):
            break  # after the first, only a line Goose's own (metadata) or of tools
        if _is_tools_line(line):
            builder.record("tool schemas")
            tools = tool_schemas(line["tools"], f"{where} line {head + 1}")
        else:
            builder.record("session metadata")
            _session_notes(line, notes, f"{where} line {head + 1}")
            _totals_aside(builder, line)
        builder.use()
        head += 1
    return builder, records[head:], tools


def _read_messages(
    builder: ConversationBuilder, messages: Sequence[Any], where: str, notes: dict[str, Any]
) -> None:
    """Every message into the builder; what the agent no longer sees and Goose's summaries
    (recorded compactions) counted in ``notes``."""
    hidden = 0
    compactions: list[dict[str, Any]] = []
    for number, message in enumerate(messages, 1):
        if not _is_message(message):
            msg = f"{where} message {number}: not a Goose message (role, created, content)"
            raise MessageFormatError(msg)
        builder.record(f"{message['role']} message")
        visible = as_mapping(message.get("metadata"))
        if visible.get("agentVisible") is False:
            if _only_for_the_screen(message):
                builder.skip("message only the user sees")
                continue
            hidden += 1  # sent before Goose summarized; no longer in the agent's context
        elif visible.get("userVisible") is False and message["role"] == "user":
            # Only the agent sees it: Goose's summary of the conversation it compacted.
            compactions.append(_summary(builder, message))
        _message(builder, message)
        builder.settle("message with nothing kept")
    if hidden:
        notes["hidden_from_agent"] = hidden
    if compactions:
        notes["compactions"] = compactions


def _summary(builder: ConversationBuilder, message: Mapping[str, Any]) -> dict[str, Any]:
    """Goose's summary message as a recorded compaction, after the replies read so far."""
    text = " ".join(str(as_mapping(c).get("text") or "") for c in message["content"])
    return {
        "kind": "compact",
        "trigger": "unknown",
        "replies_before": sum(t["role"] == "assistant" for t in builder.turns),
        "summary_head": text.strip()[:200],
    }


def _totals_aside(builder: ConversationBuilder, session: Mapping[str, Any]) -> None:
    # The session's token totals (kept in meta["session_usage"]): no request's bill. Its
    # counts alone, as the inventory knows them (the session holds its conversation too):
    # its numbers, and its totals written as digits (read as the numbers they say).
    counts = {k: v for k, v in session.items() if isinstance(v, int | float) or (k in _USAGE and v)}
    builder.set_aside(counts, "the session's totals")


def _session_notes(session: Mapping[str, Any], notes: dict[str, Any], where: str) -> None:
    for key in ("id", "name", "description", "working_dir"):
        if isinstance(session.get(key), str):
            notes[key] = session[key]
    # Goose's counts are optional (``Option<i32>``): a null one is not recorded, not 0.
    usage = {k: session[k] for k in _USAGE if session.get(k) is not None}
    if usage:
        notes["session_usage"] = checked_totals(usage, where, "the session's totals")
    model = as_mapping(session.get("model_config")).get("model_name")
    if isinstance(model, str):
        notes["models"] = [model]


def _only_for_the_screen(message: Mapping[str, Any]) -> bool:
    return all(as_mapping(c).get("type") in _UI_ONLY for c in message["content"])


def _message(builder: ConversationBuilder, message: Mapping[str, Any]) -> None:
    role = message["role"]
    blocks: list[dict[str, Any]] = []
    for item in message["content"]:
        kind = as_mapping(item).get("type")
        if kind == "text":
            if str(item.get("text") or "").strip():
                blocks.append({"type": "text", "text": str(item["text"])})
        elif kind == "image" and isinstance(item.get("data"), str):
            source = {
                "type": "base64",
                "media_type": str(item.get("mimeType") or "image/png"),
                "data": item["data"],
            }
            blocks.append({"type": "image", "source": source})
        elif kind == "toolRequest":
            blocks.append(_request(item))
        elif kind == "toolResponse":
            blocks.append(_response(item))
        elif kind == "thinking":
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(item.get("thinking") or ""),
                    "signature": str(item.get("signature") or ""),
                }
            )
        elif kind == "redactedThinking" and isinstance(item.get("data"), str):
            blocks.append({"type": "redacted_thinking", "data": item["data"]})
        else:
            builder.leave_out(f"{kind or 'unreadable'} item")  # the user's screen only
    if not blocks:
        builder.skip("message without content for the model")
    elif builder.add(role, blocks) and role == "assistant":
        # ``created``: ``Utc::now().timestamp()``, epoch seconds (a reply streamed as several
        # messages: its first).
        builder.reply_time(message.get("created"), "s")


def _request(item: Mapping[str, Any]) -> dict[str, Any]:
    call = as_mapping(item.get("toolCall"))
    value = as_mapping(call.get("value"))
    if call.get("status") == "error":
        # The model's call could not be parsed: kept with the error as its input.
        value = {"name": "invalid_tool_call", "arguments": {"error": call.get("error")}}
    arguments = value.get("arguments")
    return {
        "type": "tool_use",
        "id": str(item.get("id") or ""),
        "name": str(value.get("name") or "tool"),
        "input": dict(arguments) if isinstance(arguments, Mapping) else {},
    }


def _response(item: Mapping[str, Any]) -> dict[str, Any]:
    result = as_mapping(item.get("toolResult"))
    error = result.get("status") == "error"
    if error:
        text = str(result.get("error") or "error")
    else:
        value = result.get("value")
        # Older files hold the content list; later ones a CallToolResult.
        content = value.get("content") if isinstance(value, Mapping) else value
        error = isinstance(value, Mapping) and value.get("isError") is True
        parts = content if isinstance(content, list) else []
        texts = [str(p.get("text")) for p in parts if isinstance(p, Mapping) and "text" in p]
        if texts:
            text = "\n".join(texts)
        elif content is None:
            text = ""  # a CallToolResult without content, or no value: "(no output)", not "null"
        else:
            text = json.dumps(content, ensure_ascii=False)
    return tool_result(str(item.get("id") or ""), text, is_error=error)
