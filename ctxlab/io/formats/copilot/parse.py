"""GitHub Copilot CLI sessions: ``~/.copilot/session-state/<id>/events.jsonl`` (older CLIs:
``<id>.jsonl``), one event a line — ``{type, data, id, timestamp, parentId}``, with ``agentId`` on
a sub-agent's events.

Read from the event schema of Copilot's own SDK (``github/copilot-sdk``,
``nodejs/src/generated/session-events.ts``, read at commit cc0438d, CLI 1.0.81): ``user.message``
(``transformedContent``, what the model was sent, else ``content``), ``assistant.message``
(``content``, ``toolRequests`` with ``toolCallId``, ``name``, ``arguments``; ``reasoningText``,
kept as a thinking block; ``reasoningOpaque``/``encryptedContent``, reasoning the provider
encrypted for this session only, counted; ``outputTokens``, the reply's own output count, one
per ``apiCallId``), ``assistant.reasoning`` (a reasoning text of its own, kept),
``tool.execution_complete`` (``toolCallId``, ``success``, ``result.content`` — else its
``contents`` blocks — or ``error.message``), ``system.message`` (the System prompt),
``system.notification`` (runtime news the model reads, a user turn), ``assistant.usage`` (per
model call: ``model``, ``inputTokens``, ``outputTokens``, ``cacheReadTokens``,
``cacheWriteTokens``), ``session.compaction_complete`` (``success``, ``summaryContent``: a
recorded compaction; ``compactionTokensUsed``, its own call's usage), ``session.shutdown``
(``modelMetrics``: each model's requests and token totals, ``currentTokens`` and its parts) and
``session.usage_checkpoint`` (``totalNanoAiu``). Every other event (session state, turn marks,
hooks, the start of a tool run whose request the message holds) is counted in
``meta["skipped"]``, as are a sub-agent's events.

The schema marks ``assistant.usage`` ephemeral — "not persisted to the session event log on disk" —
so a CLI's file gives each reply its output tokens alone: that usage is placed (input 0) and
``meta["usage_lacks"]`` says so; the session's totals are in ``meta["session_usage"]``. Where an
``assistant.usage`` is recorded it replaces its reply's output count. The schema does not say
whether ``inputTokens`` holds the cached tokens; a CLI 1.0.55 shutdown's totals show that it does
(``inputTokens`` = input + cache reads + cache writes), so they are split out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict
from typing import Any

from ctxlab.io._build import ConversationBuilder, as_mapping
from ctxlab.io.formats._chat import arguments_of
from ctxlab.io.formats._totals import checked_totals
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

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
    reader = _Reader(ConversationBuilder(where, unit="event"))
    for number, event in records:
        reader.at = f"{where} event {number}"
        reader.event(event)
    return reader.builder, "\n\n".join(reader.system), reader.notes()


class _Reader:
    """Reads Copilot CLI events in order into a builder (see the module)."""

    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.meta: dict[str, Any] = {
            "compactions": [],
            "models": [],
            "reply_models": {},
            "session_usage": [],
        }
        self.system: list[str] = []
        self.replied = False  # a reply since the last assistant.usage
        self.output_only: set[int] = set()  # replies whose usage is their output count alone
        self.calls: set[str] = set()  # model calls (apiCallId) whose output count is placed
        self.event_id: Any = None  # the id of the event being read
        self.at = builder.where  # the file and event being read, for what an error names
        self.reasoning = ""  # the latest assistant.reasoning text, kept as a thinking block
        self.stamp: Any = None  # the event's ``timestamp`` (ISO 8601: ``toISOString``)

    def event(self, event: Any) -> None:
        builder = self.builder
        if not is_copilot_line(event):
            builder.record("line of another format")
            builder.skip("not a Copilot CLI event")
            return
        kind, data = event["type"], event["data"]
        builder.record(kind, raw=event)
        self.event_id = event.get("id")
        self.stamp = event.get("timestamp")
        if kind in _TOTALS:
            # The session's totals (kept in meta), a compaction's context sizes: no bill.
            builder.set_aside_field(event, "data", _TOTALS[kind])
        handler = _HANDLERS.get(kind)
        if event.get("agentId"):
            builder.skip("sub-agent event")
        elif handler is not None:
            handler(self, data)
        elif kind == "session.start":
            self.meta.setdefault("session_id", data.get("sessionId"))
            self.meta.setdefault("copilot_version", data.get("copilotVersion"))
            builder.use()
        else:
            builder.skip(kind)

    def notes(self) -> dict[str, Any]:
        meta = {k: v for k, v in self.meta.items() if v not in ([], {})}
        if self.output_only:
            meta["usage_lacks"] = (
                f"{len(self.output_only)} replies carry their output tokens alone: the CLI "
                "does not write a call's input and cache tokens (assistant.usage) to "
                "events.jsonl, so their input is 0 here; meta['session_usage'] has the totals"
            )
        return meta

    def user(self, data: Mapping[str, Any]) -> None:
        text = data.get("transformedContent") or data.get("content")
        if not (isinstance(text, str) and self.builder.text("user", text)):
            self.builder.skip("empty user message")

    def notification(self, data: Mapping[str, Any]) -> None:
        text = data.get("content")
        if not (isinstance(text, str) and self.builder.text("user", text)):
            self.builder.skip("empty notification")

    def system_message(self, data: Mapping[str, Any]) -> None:
        if not isinstance(data.get("content"), str):
            self.builder.skip("system message without its text")
            return
        self.system.append(data["content"])
        self.builder.use()


def _reply(reader: _Reader, data: Mapping[str, Any]) -> None:
    builder = reader.builder
    blocks = _thinking(reader, data)
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
    usage = _output_usage(reader, data)
    if blocks and builder.add("assistant", blocks, usage):
        builder.reply_time(reader.stamp)  # a reply's first event (its reasoning's) dates it
        reader.replied = True
        if usage is not None:
            reader.output_only.add(len(builder.turns) - 1)
        model = data.get("model")
        if isinstance(model, str) and model:
            # By the reply's rank (repairs may move message indexes, never replies' order).
            rank = sum(t["role"] == "assistant" for t in builder.turns) - 1
            reader.meta["reply_models"][str(rank)] = model
            _model(reader, model)
        return
    if usage is not None:
        builder.lose_usage("on an empty assistant message")
    builder.skip("empty assistant message")


def _thinking(reader: _Reader, data: Mapping[str, Any]) -> list[dict[str, Any]]:
    # The reply's readable reasoning, unless its assistant.reasoning event already gave it.
    blocks: list[dict[str, Any]] = []
    text = data.get("reasoningText")
    if isinstance(text, str) and text.strip():
        if text == reader.reasoning:
            reader.builder.leave_out("reasoning text also recorded as its reasoning event")
        else:
            blocks.append({"type": "thinking", "thinking": text})
    reader.reasoning = ""
    for key in ("reasoningOpaque", "encryptedContent"):
        if data.get(key):
            # Sent back to the provider within the session, but opaque: its size is unknown.
            reader.builder.leave_out("encrypted reasoning (session-bound, not readable)")
    return blocks


def _output_usage(reader: _Reader, data: Mapping[str, Any]) -> ProviderUsage | None:
    # The reply's own output count: once per model call (a call's response may be split in
    # several messages, one per reasoning boundary, sharing its apiCallId).
    tokens = data.get("outputTokens")
    call = data.get("apiCallId")
    if tokens is None:
        return None
    if isinstance(call, str) and call in reader.calls:
        # The call's count again, on a later message of its response: set aside, as the file's
        # inventory knows it (the data of this event).
        counted = {"id": reader.event_id, "data": {"outputTokens": tokens}}
        reader.builder.set_aside_field(counted, "data", "a model call's output, counted once")
        return None
    if isinstance(call, str) and call:
        reader.calls.add(call)
    try:
        return ProviderUsage(0, token_count(tokens, "outputTokens"))
    except ValueError:
        reader.builder.lose_usage("an output count that is no count of tokens")
        return None


def _reasoning(reader: _Reader, data: Mapping[str, Any]) -> None:
    text = data.get("content")
    if not (isinstance(text, str) and text.strip()):
        reader.builder.skip("empty reasoning")
        return
    if reader.builder.add("assistant", [{"type": "thinking", "thinking": text}]):
        reader.builder.reply_time(reader.stamp)
    reader.reasoning = text


def _result(reader: _Reader, data: Mapping[str, Any]) -> None:
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
    reader.builder.add("user", [block])


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


def _call_usage(data: Mapping[str, Any]) -> ProviderUsage:
    # A model call's usage (assistant.usage, a compaction's compactionTokensUsed).
    return ProviderUsage.with_cache_inside(
        data.get("inputTokens"),
        data.get("outputTokens"),
        data.get("cacheReadTokens"),
        data.get("cacheWriteTokens"),
    )


def _usage(reader: _Reader, data: Mapping[str, Any]) -> None:
    builder = reader.builder
    _model(reader, data.get("model"))
    usage = _call_usage(data)
    builder.use()
    if reader.replied:
        # The call's whole usage: it stands for its reply's output count, if that was placed.
        last = max(i for i, t in enumerate(builder.turns) if t["role"] == "assistant")
        reader.output_only.discard(last)
        builder.usage_of_last_reply(usage)
    else:
        # A model call whose reply was not recorded (or was empty): its usage is not the
        # previous reply's.
        builder.lose_usage("no reply since the previous usage")
    reader.replied = False


def _model(reader: _Reader, model: Any) -> None:
    if isinstance(model, str) and model and model not in reader.meta["models"]:
        reader.meta["models"].append(model)


def _compaction(reader: _Reader, data: Mapping[str, Any]) -> None:
    builder = reader.builder
    summary = data.get("summaryContent")
    spent = data.get("compactionTokensUsed")
    if not data.get("success") or not isinstance(summary, str) or not summary.strip():
        builder.skip("compaction without its summary" if data.get("success") else _FAILED)
        if isinstance(spent, Mapping):
            builder.lose_usage("a compaction call that gave no summary")
        return
    replies = sum(t["role"] == "assistant" for t in builder.turns)
    trigger = data.get("trigger")
    record = {
        "kind": "compact",
        "trigger": trigger if isinstance(trigger, str) else "auto",
        "replies_before": replies,
        "summary_head": summary[:200],
        "pre_tokens": data.get("preCompactionTokens"),
    }
    builder.text("user", summary)
    if isinstance(spent, Mapping):
        # The summarizing call's own usage: its reply is the summary, a user turn here.
        try:
            record["usage"] = asdict(_call_usage(spent))
        except ValueError:
            builder.lose_usage("a compaction call's usage that is no count of tokens")
        else:
            builder.lose_usage("a compaction call's (in meta['compactions'])")
    reader.meta["compactions"].append(record)


def _shutdown(reader: _Reader, data: Mapping[str, Any]) -> None:
    # The session's totals by model (main agent and sub-agents together) and its context.
    # Each count checked as a request's is: a total no bill has refuses the file.
    for model, metric in as_mapping(data.get("modelMetrics")).items():
        metric = as_mapping(metric)
        usage = as_mapping(metric.get("usage"))
        totals = {"model": model, "requests": as_mapping(metric.get("requests")).get("count")}
        totals |= {_SNAKE[k]: usage.get(k) for k in _SNAKE if k in usage}
        reader.meta["session_usage"].append(
            checked_totals(totals, reader.at, "the session's totals", counts=("requests",))
        )
    context = {k: data[k] for k in _CONTEXT if data.get(k) is not None}
    if context:
        reader.meta["context_at_shutdown"] = checked_totals(
            context, reader.at, "the context's size at shutdown"
        )
    reader.builder.use()


def _checkpoint(reader: _Reader, data: Mapping[str, Any]) -> None:
    if _whole(data.get("totalNanoAiu")):
        reader.meta["total_nano_aiu"] = data["totalNanoAiu"]
    reader.builder.use()


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


_TOTALS = {
    "session.shutdown": "the session's totals",
    "session.usage_checkpoint": "the session's totals",
    "session.compaction_complete": "a compaction's context sizes",
}
_FAILED = "compaction that failed"
_SNAKE = {
    "inputTokens": "input_tokens",
    "outputTokens": "output_tokens",
    "cacheReadTokens": "cache_read_tokens",
    "cacheWriteTokens": "cache_write_tokens",
    "reasoningTokens": "reasoning_tokens",
}
_CONTEXT = ("currentTokens", "systemTokens", "conversationTokens", "toolDefinitionsTokens")
_HANDLERS: dict[str, Callable[[_Reader, Mapping[str, Any]], None]] = {
    "user.message": _Reader.user,
    "system.message": _Reader.system_message,
    "system.notification": _Reader.notification,
    "assistant.message": _reply,
    "assistant.reasoning": _reasoning,
    "tool.execution_complete": _result,
    "assistant.usage": _usage,
    "session.compaction_complete": _compaction,
    "session.shutdown": _shutdown,
    "session.usage_checkpoint": _checkpoint,
}
"""What each event of the conversation becomes (the others are counted, skipped by kind)."""
