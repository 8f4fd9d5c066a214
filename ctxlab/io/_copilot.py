"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/<id>/events.jsonl`` (older CLIs:
``<id>.jsonl``), one event a line — ``{type, data, id, timestamp, parentId}``, with ``agentId`` on
a sub-agent's events.

Read from the event schema of Copilot's own SDK (``github/copilot-sdk``,
``nodejs/src/generated/session-events.ts``): ``user.message`` (``transformedContent``, what the
model was sent, else ``content``), ``assistant.message`` (``content``, ``toolRequests`` with
``toolCallId``, ``name``, ``arguments``), ``tool.execution_complete`` (``toolCallId``,
``success``, ``result.content`` — else its ``contents`` blocks — or ``error.message``),
``system.message`` (the System prompt), ``assistant.usage`` (per model call:
``model``, ``inputTokens``, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens``) and
``session.compaction_complete`` (``success``, ``summaryContent``: a recorded compaction).
Every other event (session state, turn marks, streaming deltas, the start of a tool run whose
request the message holds) is counted in ``meta["skipped"]``, as are a sub-agent's events.

The schema does not say whether ``inputTokens`` holds the cached tokens; Copilot's API mirrors
OpenAI's, whose input count does, so they are taken as included (and split out).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.io._build import ConversationBuilder, as_mapping
from ctxlab.io._chat import arguments_of
from ctxlab.messages import ProviderUsage

__all__ = ["from_copilot", "is_copilot_line"]

_FAMILIES = frozenset(
    {
        "session",
        "user",
        "assistant",
        "tool",
        "abort",
        "model",
        "skill",
        "subagent",
        "hook",
        "system",
    }
)


def is_copilot_line(value: Any) -> bool:
    """A Copilot CLI event line: a dotted ``type`` of the CLI's families, ``data``, ``id`` and
    ``parentId``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("data"), Mapping):
        return False
    kind = value.get("type")
    return (
        isinstance(kind, str)
        and kind.split(".", 1)[0] in _FAMILIES
        and "id" in value
        and "parentId" in value
    )


def from_copilot(
    records: Iterable[tuple[int, Any]], where: str
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The main agent's conversation of a Copilot CLI session, its System text (its
    ``system.message`` events) and what was learned of it."""
    builder = ConversationBuilder(where, unit="event")
    meta: dict[str, Any] = {"compactions": [], "models": [], "replied": False}
    system: list[str] = []
    for _, event in records:
        if not is_copilot_line(event):
            builder.record("line of another format")
            builder.skip("not a Copilot CLI event")
            continue
        kind, data = event["type"], event["data"]
        builder.record(kind)
        if event.get("agentId"):
            builder.skip("sub-agent event")
        elif kind == "user.message":
            text = data.get("transformedContent") or data.get("content")
            if not (isinstance(text, str) and builder.text("user", text)):
                builder.skip("empty user message")
        elif kind == "assistant.message":
            meta["replied"] = _reply(builder, data) or meta["replied"]
        elif kind == "tool.execution_complete":
            _result(builder, data)
        elif kind == "assistant.usage":
            _usage(builder, data, meta)
        elif kind == "session.compaction_complete" and data.get("success"):
            _compaction(builder, data, meta)
        elif kind == "system.message" and isinstance(data.get("content"), str):
            system.append(data["content"])
            builder.use()
        elif kind == "session.start":
            meta.setdefault("session_id", data.get("sessionId"))
            meta.setdefault("copilot_version", data.get("copilotVersion"))
            builder.use()
        else:
            builder.skip(kind)
    del meta["replied"]
    if not meta["compactions"]:
        del meta["compactions"]
    return builder, "\n\n".join(system), meta


def _reply(builder: ConversationBuilder, data: Mapping[str, Any]) -> bool:
    blocks: list[dict[str, Any]] = []
    content = data.get("content")
    if isinstance(content, str) and content.strip():
        blocks.append({"type": "text", "text": content})
    for request in data.get("toolRequests") or ():
        request = as_mapping(request)
        blocks.append(
            {
                "type": "tool_use",
                "id": str(request.get("toolCallId") or ""),
                "name": str(request.get("name") or "tool"),
                "input": arguments_of(request.get("arguments")),
            }
        )
    if blocks and builder.add("assistant", blocks):
        return True
    builder.skip("empty assistant message")
    return False


def _result(builder: ConversationBuilder, data: Mapping[str, Any]) -> None:
    success = bool(data.get("success"))
    if success:
        result = as_mapping(data.get("result"))
        # ``content`` is what the model was sent; ``contents`` the tool's own blocks.
        output = result.get("content")
        content = _result_content(result.get("contents") if output is None else output)
    else:
        message = as_mapping(data.get("error")).get("message")
        content = message if isinstance(message, str) else json.dumps(message)
    block = {
        "type": "tool_result",
        "tool_use_id": str(data.get("toolCallId") or ""),
        "content": content,
        "is_error": not success or None,
    }
    builder.add("user", [block])


def _result_content(output: Any) -> Any:
    # A string as it is; a list of content blocks (text, terminal output, images) as the
    # result's parts — never dropped for not being a string.
    if isinstance(output, str):
        return output
    if not isinstance(output, list):
        return "" if output is None else json.dumps(output, ensure_ascii=False)
    parts: list[dict[str, Any]] = []
    for item in output:
        item = as_mapping(item) if not isinstance(item, str) else {"type": "text", "text": item}
        if item.get("type") in ("text", "terminal") and isinstance(item.get("text"), str):
            parts.append({"type": "text", "text": item["text"]})
        elif item.get("type") == "image" and isinstance(item.get("data"), str):
            media = str(item.get("mimeType") or "image/png")
            source = {"type": "base64", "media_type": media, "data": item["data"]}
            parts.append({"type": "image", "source": source})
        elif item:
            parts.append({"type": "text", "text": json.dumps(item, ensure_ascii=False)})
    return parts


def _usage(builder: ConversationBuilder, data: Mapping[str, Any], meta: dict[str, Any]) -> None:
    model = data.get("model")
    if isinstance(model, str) and model and model not in meta["models"]:
        meta["models"].append(model)
    usage = ProviderUsage.with_cache_inside(
        data.get("inputTokens"),
        data.get("outputTokens"),
        data.get("cacheReadTokens"),
        data.get("cacheWriteTokens"),
    )
    builder.use()
    if meta["replied"]:
        builder.usage_of_last_reply(usage)
    else:
        # A model call whose reply was not recorded (or was empty): its usage is not the
        # previous reply's.
        builder.lose_usage("no reply since the previous usage")
    meta["replied"] = False


def _compaction(
    builder: ConversationBuilder, data: Mapping[str, Any], meta: dict[str, Any]
) -> None:
    summary = data.get("summaryContent")
    if not isinstance(summary, str) or not summary.strip():
        builder.skip("compaction without its summary")
        return
    replies = sum(t["role"] == "assistant" for t in builder.turns)
    trigger = data.get("trigger")
    meta["compactions"].append(
        {
            "kind": "compact",
            "trigger": trigger if isinstance(trigger, str) else "auto",
            "replies_before": replies,
            "summary_head": summary[:200],
            "pre_tokens": data.get("preCompactionTokens"),
        }
    )
    builder.text("user", summary)
