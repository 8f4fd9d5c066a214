"""Continue sessions: ``~/.continue/sessions/<session id>.json`` (the IDE extensions and the
``cn`` CLI write the same file; ``sessions.json`` beside them is the list of sessions).

Read from Continue's own code (continuedev/continue at 2026-06: ``core/index.d.ts`` —
``Session``, ``ChatHistoryItem``, ``ChatMessage``, ``ToolCallState``, ``Usage`` —,
``core/util/history.ts``, ``gui/src/redux/util/constructMessages.ts`` (how the extension turns
the history into a request), ``core/util/messageConversion.ts`` (how the CLI does),
``core/tools/constants.ts``). A session is ``{sessionId, title, workspaceDirectory, history,
usage?}``; each history item holds a ``message`` (role ``user``, ``assistant``, ``thinking``,
``system`` or ``tool``; ``content`` a string or ``text``/``imageUrl`` parts), the
``contextItems`` attached to it, and for a reply its ``toolCallStates`` (2025-07 on; before,
one ``toolCallState``) with each call's status and ``output`` (context items).

As Continue builds the request: a user message is its context items' text, then its own
content; a reply's tool calls are ``message.toolCalls`` (else the calls of its states, as the
CLI records them) and their results are rendered from the states (a cancelled call says so, a
call without output says "No tool output"); ``tool`` history messages are the results of
calls that have no state (older sessions) and are otherwise counted as skipped. A
``thinking`` message is the reply's reasoning. An item's ``conversationSummary`` is Continue's
own compaction: the requests after it start from the summary (recorded here as a compaction,
the summary as a user message). Usage is a reply's ``usage`` where present (Continue's
``Usage``: ``promptTokens`` holds the cache for OpenAI-style providers; Anthropic's, which
also reports ``cacheWriteTokens``, leaves it out); the session's cumulative ``usage`` is kept
in ``meta["session_usage"]``, never spread over requests. The census counts a history item a
record (its kind the message's role); prompt logs are parts of it left out, counted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, tool_result
from ctxlab.io.formats._chat import arguments_of
from ctxlab.io.formats._totals import checked_totals
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = ["from_continue", "is_continue_session"]

_NO_OUTPUT = "No tool output"
_CANCELLED = "The user cancelled this tool call."
_ERRORED = "There was an error calling the tool."


def is_continue_session(value: Any) -> bool:
    """A Continue session: ``sessionId`` and a ``history`` of items holding a ``message``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("history"), list):
        return False
    if not isinstance(value.get("sessionId"), str):
        return False
    items = value["history"][:20]
    return all(isinstance(i, Mapping) and isinstance(i.get("message"), Mapping) for i in items)


def from_continue(
    session: Mapping[str, Any], where: str
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of a Continue session."""
    history = session.get("history")
    if not isinstance(history, list):
        msg = f"{where}: a Continue session holds a 'history' list"
        raise MessageFormatError(msg)
    reader = _Reader(ConversationBuilder(where, unit="history item"))
    for item in history:
        message = item.get("message") if isinstance(item, Mapping) else None
        if not isinstance(message, Mapping):
            reader.builder.record("item without a message")
            reader.builder.skip("history item without a message")
            continue
        reader.builder.record(f"{message.get('role')} message")
        reader.item(item, message)
        reader.builder.settle("message with nothing kept")
    reader.finish_results()
    notes: dict[str, Any] = {
        k: session[k] for k in ("sessionId", "title", "workspaceDirectory") if k in session
    }
    if isinstance(session.get("usage"), Mapping):
        notes["session_usage"] = checked_totals(
            session["usage"], where, "the session's cumulative usage"
        )
        reader.builder.set_aside(session["usage"], "the session's cumulative usage")
    if reader.compactions:
        notes["compactions"] = reader.compactions
    models = session.get("chatModelTitle")
    if isinstance(models, str):
        notes["models"] = [models]
    return reader.builder, "\n\n".join(reader.system), notes


class _Reader:
    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.system: list[str] = []
        self.compactions: list[dict[str, Any]] = []
        self.waiting: list[str] = []  # calls without a state: answered by tool messages
        self.calls = 0

    def item(self, item: Mapping[str, Any], message: Mapping[str, Any]) -> None:
        role = message.get("role")
        if role == "tool":
            self.tool_message(message)
        elif role == "system":
            text = _text(message.get("content"))
            if text.strip():
                self.system.append(text)
                self.builder.use()
            else:
                self.builder.skip("empty message")
        elif role == "user":
            self.finish_results()
            blocks = [
                {"type": "text", "text": f"{c.get('content')}\n"}
                for c in _list(item.get("contextItems"))
                if isinstance(c, Mapping) and str(c.get("content") or "").strip()
            ]
            blocks += _parts(message.get("content"))
            if blocks:
                self.builder.add("user", blocks)
            else:
                self.builder.skip("empty message")
        elif role == "thinking":
            self.finish_results()
            self.thinking(message)
        elif role == "assistant":
            self.finish_results()
            self.reply(item, message)
        else:
            self.builder.skip(f"message of role {role!r}")
        # The requests as logged (prompt and completion text): the same turns again.
        self.builder.leave_out("prompt log", len(_list(item.get("promptLogs"))))
        summary = item.get("conversationSummary")
        if isinstance(summary, str) and summary.strip():
            self.finish_results()
            replies = sum(t["role"] == "assistant" for t in self.builder.turns)
            self.compactions.append(
                {
                    "kind": "compact",
                    "trigger": "unknown",  # the session does not say who asked for it
                    "replies_before": replies,
                    "summary_head": summary[:200],
                }
            )
            self.builder.text("user", summary)

    def thinking(self, message: Mapping[str, Any]) -> None:
        redacted = message.get("redactedThinking")
        if isinstance(redacted, str) and redacted:
            self.builder.add("assistant", [{"type": "redacted_thinking", "data": redacted}])
            return
        text = _text(message.get("content"))
        signature = message.get("signature")
        if text.strip():
            block = {"type": "thinking", "thinking": text}
            block["signature"] = signature if isinstance(signature, str) else ""
            self.builder.add("assistant", [block])
        else:
            self.builder.skip("empty message")

    def reply(self, item: Mapping[str, Any], message: Mapping[str, Any]) -> None:
        states = [s for s in _states(item) if isinstance(s, Mapping)]
        calls = [c for c in _list(message.get("toolCalls")) if isinstance(c, Mapping)]
        if not calls:  # the CLI keeps the calls in their states only
            calls = [as_mapping(s.get("toolCall")) for s in states if s.get("toolCall")]
        blocks = _parts(message.get("content"))
        uses = []
        for call in calls:
            self.calls += 1
            uses.append(_use(call, f"continue_call_{self.calls}"))
        blocks += uses
        usage = _usage(message.get("usage"))
        if not blocks:
            self.builder.skip("empty message")
            if usage is not None:
                self.builder.lose_usage("on a reply with nothing kept")
            return
        self.builder.add("assistant", blocks, usage)
        by_id = {
            str(s.get("toolCallId") or as_mapping(s.get("toolCall")).get("id")): s for s in states
        }
        results = []
        for use in uses:
            state = by_id.get(use["id"])
            if state is None:
                self.waiting.append(use["id"])
                continue
            results.append(_result(use["id"], state))
        self.builder.leave_out(
            "tool call state without a call", len(by_id.keys() - {u["id"] for u in uses})
        )
        if results:
            self.builder.add("user", results)

    def tool_message(self, message: Mapping[str, Any]) -> None:
        call_id = str(message.get("toolCallId") or "")
        if call_id not in self.waiting:
            # Continue renders the result from the call's state, not from this message.
            self.builder.skip("tool message (the result comes from its call's state)")
            return
        self.waiting.remove(call_id)
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        self.builder.add(
            "user", [{"type": "tool_result", "tool_use_id": call_id, "content": text or _NO_OUTPUT}]
        )

    def finish_results(self) -> None:
        # Calls nobody answered are left to the builder's repair, which says so.
        self.waiting = []


def _states(item: Mapping[str, Any]) -> list[Any]:
    states = item.get("toolCallStates")
    if isinstance(states, list):
        return states
    single = item.get("toolCallState")  # before July 2025: one state per item
    return [single] if isinstance(single, Mapping) else []


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    # A text part without text adds no line (it would be a blank line in the System text).
    return "\n".join(
        str(p["text"])
        for p in _list(content)
        if isinstance(p, Mapping) and p.get("type") == "text" and p.get("text")
    )


def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}] if content.strip() else []
    blocks: list[dict[str, Any]] = []
    for part in _list(content):
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"].strip():
                blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "imageUrl" and isinstance(
            as_mapping(part.get("imageUrl")).get("url"), str
        ):
            blocks.append(image_block(part["imageUrl"]["url"]))
        else:
            blocks.append({"type": "provider", "data": dict(part)})
    return blocks


def _use(call: Mapping[str, Any], fallback: str) -> dict[str, Any]:
    function = as_mapping(call.get("function"))
    call_id = call.get("id")
    return {
        "type": "tool_use",
        "id": str(call_id) if isinstance(call_id, str) and call_id else fallback,
        "name": str(function.get("name") or "tool"),
        "input": arguments_of(function.get("arguments")),
    }


def _result(call_id: str, state: Mapping[str, Any]) -> dict[str, Any]:
    status = state.get("status")
    output = [o for o in _list(state.get("output")) if isinstance(o, Mapping)]
    if status == "canceled":
        text = _CANCELLED
    elif output:
        text = "\n\n".join(_rendered(o) for o in output)
    elif isinstance(state.get("output"), str):  # not Continue's type, but seen in the wild
        text = state["output"]
    elif status == "errored":
        text = _ERRORED
    else:
        text = _NO_OUTPUT
    return tool_result(call_id, text, is_error=status == "errored", empty=_NO_OUTPUT)


def _rendered(item: Mapping[str, Any]) -> str:
    content = str(item.get("content") or "")
    status = item.get("status")
    # A terminal command's items carry their status after the content.
    return f"{content}\n[Status: {status}]" if isinstance(status, str) and status else content


def _usage(usage: Any) -> ProviderUsage | None:
    if not isinstance(usage, Mapping) or "promptTokens" not in usage:
        return None
    details = as_mapping(usage.get("promptTokensDetails"))
    cached = details.get("cachedTokens") or 0
    written = details.get("cacheWriteTokens") or 0
    if "cacheWriteTokens" in details:  # Anthropic's own counts: the cache is not in the prompt
        return ProviderUsage(
            token_count(usage.get("promptTokens"), "promptTokens"),
            token_count(usage.get("completionTokens"), "completionTokens"),
            cached,
            written,
        )
    return ProviderUsage.with_cache_inside(
        usage.get("promptTokens"), usage.get("completionTokens"), cached
    )
