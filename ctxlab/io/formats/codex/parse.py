"""Codex CLI rollouts: ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Read from Codex's own types (openai/codex, ``codex-rs/protocol/src/protocol.rs``:
``RolloutLine``, ``RolloutItem``, ``CompactedItem``, ``TokenCountEvent``; ``models.rs``:
``ResponseItem``, ``ContentItem``, ``FunctionCallOutputPayload``; 2025–2026). Each line is
``{"timestamp", "type", "payload"}`` with ``type`` one of:

- ``session_meta``: the session's id, cwd, CLI version (and its base instructions);
- ``response_item``: what the model saw or said — ``message`` (``role`` user / assistant /
  developer / system, ``content`` of ``input_text``/``output_text``/``input_image``),
  ``function_call`` (``name``, ``arguments`` as a JSON string, ``call_id``) and
  ``function_call_output`` (``output``: a string, content items, or ``{content, success}``),
  ``custom_tool_call``/``custom_tool_call_output`` (free-form input, e.g. ``apply_patch``),
  ``local_shell_call`` (``action.command``), ``reasoning`` (summaries, often encrypted),
  ``web_search_call``, ``ghost_snapshot``, ``compaction``;
- ``compacted``: Codex's own compaction (``message``: the summary the history restarts from);
- ``turn_context``: the model and policies of the turn that follows;
- ``event_msg``: UI events (mostly echoes of the items), among them ``token_count`` with the
  usage of the last model call (``last_token_usage``: ``input_tokens`` — cached ones included —,
  ``cached_input_tokens``, ``output_tokens``).

Where a call's usage sits depends on the version, and a rollout carries no response id to pair
them by: versions that record a turn's items once its request completes (0.40, 0.58: the items
are written after ``run_turn`` returns) write each ``token_count`` just *before* the items it
counts; versions that record each item as it completes write it just *after* them. Older versions
also repeat the previous ``token_count`` when rate limits arrive at the start of a request (the
same ``info`` again). The reader drops the repeats, tells the order from the file itself — the
first usage before or after the first reply's items — and pairs each usage with its reply; a
usage that meets no reply is counted lost in the census. ``meta["usage_order"]`` says which.

Developer and system messages become the transcript's System text; UI events and snapshots are
counted in ``meta["skipped"]``; each ``compacted`` line is a recorded compaction.

A ``reasoning`` item is part of its reply. Codex keeps every item of the history, reasoning
included, and sends it back with each request (``codex-rs/core/src/context_manager/history.rs``:
``is_api_message`` keeps ``Reasoning``, ``for_prompt`` returns them all); the API reads the
reasoning of the current user turn only and drops that of earlier turns (Codex's own accounting,
``get_non_last_reasoning_items_tokens``, adds back only the reasoning before the last user
message). So the item becomes a block the recorded view counts as sent within its turn and drops
after the next user message (``meta["earlier_reasoning_dropped"]``, read by
`ctxlab.analysis._recorded`): its ``encrypted_content`` as a ``redacted_thinking`` block (sized
from its length as Codex sizes it, `ctxlab.tokens.block_parts`), or — with no encrypted content —
its raw ``content`` text as a ``thinking`` block. Its ``summary`` (shown to the user, not what is
sent back) is left out and counted; an item with neither is counted skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.io._build import ConversationBuilder, image_block
from ctxlab.io.formats._chat import arguments_of
from ctxlab.messages import ProviderUsage

__all__ = ["from_codex", "is_codex_line"]

_LINE_TYPES = {"session_meta", "response_item", "compacted", "turn_context", "event_msg"}


def is_codex_line(value: Any) -> bool:
    """A Codex rollout line: ``timestamp``, a rollout item ``type`` and its ``payload``."""
    return (
        isinstance(value, Mapping)
        and value.get("type") in _LINE_TYPES
        and "payload" in value
        and "timestamp" in value
    )


def from_codex(
    records: Iterable[tuple[int, Any]], where: str
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of a rollout's (line number, line) pairs."""
    lines = list(records)
    builder = ConversationBuilder(where, unit="line")
    reader = _Reader(builder, usage_first=_usage_comes_first(lines))
    for _, line in lines:
        if not is_codex_line(line) or not isinstance(line["payload"], Mapping):
            builder.record("line of another format")
            builder.skip("not a Codex rollout line")
            continue
        reader.line(line["type"], line["payload"], line["timestamp"])
    reader.finish()
    return builder, "\n\n".join(reader.system), reader.meta


_MODEL_ITEMS = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
    }
)
"""Response items only the model writes (with an assistant ``message``)."""


def _usage_comes_first(lines: list[tuple[int, Any]]) -> bool:
    """Whether this rollout writes each ``token_count`` before the items it counts: its first
    usage comes before any item of the model (see the module)."""
    answered = False
    last: Any = None
    for _, line in lines:
        if not is_codex_line(line) or not isinstance(line["payload"], Mapping):
            continue
        payload = line["payload"]
        if line["type"] == "response_item":
            kind = payload.get("type")
            if kind in _MODEL_ITEMS or (kind == "message" and payload.get("role") == "assistant"):
                answered = True
        elif line["type"] == "event_msg" and payload.get("type") == "token_count":
            info = payload.get("info")
            if isinstance(info, Mapping) and isinstance(info.get("last_token_usage"), Mapping):
                if info != last:
                    return not answered
                last = info
    return False


class _Reader:
    def __init__(self, builder: ConversationBuilder, *, usage_first: bool) -> None:
        self.builder = builder
        self.system: list[str] = []
        self.meta: dict[str, Any] = {
            "compactions": [],
            "models": [],
            "usage_order": "before its reply" if usage_first else "after its reply",
            "earlier_reasoning_dropped": True,
        }
        self.usage_first = usage_first
        self.pending: ProviderUsage | None = None  # a usage written before its reply
        self.replied = False  # a reply since the last usage
        self.last_info: Any = None
        self.stamp: Any = None  # the line's ``timestamp`` (ISO 8601, written by Codex)

    def line(self, kind: str, payload: Mapping[str, Any], stamp: Any = None) -> None:
        builder = self.builder
        self.stamp = stamp
        if kind == "response_item":
            builder.record(f"response_item {payload.get('type') or 'unknown'}", raw=payload)
            self.item(payload)
            return
        if kind == "event_msg":
            builder.record(f"event_msg {payload.get('type') or 'unknown'}", raw=payload)
        else:
            builder.record(kind, raw=payload)
        if kind == "session_meta":
            for key, name in (("id", "session_id"), ("cwd", "cwd"), ("cli_version", "cli_version")):
                if isinstance(payload.get(key), str):
                    self.meta.setdefault(name, payload[key])
            base = payload.get("base_instructions") or payload.get("instructions")
            text = base.get("text") if isinstance(base, Mapping) else base
            if isinstance(text, str) and text.strip():
                self.system.append(text)
            builder.use()
        elif kind == "turn_context":
            model = payload.get("model")
            if isinstance(model, str) and model not in self.meta["models"]:
                self.meta["models"].append(model)
            builder.use()
        elif kind == "compacted":
            self.compacted(payload)
        elif payload.get("type") == "token_count":
            self.usage(payload.get("info"))
        else:
            builder.skip(f"event {payload.get('type') or 'unknown'}")

    def item(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        builder = self.builder
        if kind == "message":
            role = item.get("role")
            blocks = _content(item.get("content"))
            if role in ("developer", "system"):
                text = "\n".join(b["text"] for b in blocks if b["type"] == "text")
                if text.strip():
                    self.system.append(text)
                    builder.use()
                else:
                    builder.skip("empty developer message")
            elif not blocks:
                builder.skip("message with nothing kept")
            elif role == "assistant":
                self.reply(blocks)
            else:
                builder.add("user", blocks)
        elif kind in ("function_call", "custom_tool_call", "local_shell_call") or (
            kind == "tool_search_call" and item.get("execution") != "server"
        ):
            self.reply([_call(item)])
        elif kind in ("function_call_output", "custom_tool_call_output") or (
            kind == "tool_search_output" and item.get("execution") != "server"
        ):
            builder.add("user", [_output(item)])
        elif kind in _SERVER_ITEMS:
            # Run by the provider (a web search, an image made, a search of the tools): part
            # of the reply, sent back as it is.
            self.reply([{"type": "provider", "data": dict(item)}])
        elif kind == "agent_message":
            self.agent_message(item)
        elif kind == "reasoning":
            self.reasoning(item)
        else:
            builder.skip(str(kind or "unknown item"))  # snapshots, compaction

    def agent_message(self, item: Mapping[str, Any]) -> None:
        # What the agent said (to the user, or to another agent): Codex sends it back as the
        # assistant's words; an encrypted part as it is.
        said = item.get("message")
        blocks = _content(item.get("content"))
        if isinstance(said, str) and said.strip():
            blocks = [{"type": "text", "text": said}, *blocks]
        if blocks:
            self.reply(blocks)
        else:
            self.builder.skip("empty agent message")

    def reasoning(self, item: Mapping[str, Any]) -> None:
        # What Codex sends back: the encrypted reasoning, else (a model that returns it in the
        # clear) its text; the summary is what the user was shown.
        builder = self.builder
        encrypted = item.get("encrypted_content")
        texts = _texts(item.get("content"))
        summary = len(_texts(item.get("summary")))
        if isinstance(encrypted, str) and encrypted.strip():
            self.reply([{"type": "redacted_thinking", "data": encrypted}])
            builder.leave_out("reasoning text beside its encrypted content", len(texts))
        elif texts:
            self.reply([{"type": "thinking", "thinking": "\n\n".join(texts)}])
        else:
            builder.skip("reasoning with nothing sent back (no encrypted content, no text)")
        builder.leave_out(
            "reasoning summary (shown to the user, not sent back)",
            summary,
            raw={"type": "reasoning", "summary": item.get("summary")},
        )

    def reply(self, blocks: list[dict[str, Any]]) -> None:
        # The first item of a request dates its reply: a request starts at the first item
        # after a usage (a usage before its items: the one waiting for them).
        starts = self.pending is not None if self.usage_first else not self.replied
        usage, self.pending = self.pending, None
        if self.builder.add("assistant", blocks, usage):
            self.builder.reply_time(self.stamp, replace=starts)
        self.replied = True

    def compacted(self, payload: Mapping[str, Any]) -> None:
        summary = payload.get("message")
        if not isinstance(summary, str) or not summary.strip():
            self.builder.skip("empty compaction")
            return
        replies = sum(t["role"] == "assistant" for t in self.builder.turns)
        self.meta["compactions"].append(
            {
                "kind": "compact",
                "trigger": "auto",
                "replies_before": replies,
                "summary_head": summary[:200],
            }
        )
        self.builder.text("user", summary)
        history = payload.get("replacement_history")
        if isinstance(history, list):
            # The history the compaction left the model (what it kept, and its compaction
            # item): read as the summary above, its items counted and set aside with it.
            self.builder.leave_out("replacement history item", len(history), raw=history)

    def usage(self, info: Any) -> None:
        builder = self.builder
        last = info.get("last_token_usage") if isinstance(info, Mapping) else None
        if not isinstance(last, Mapping):
            builder.skip("token_count without usage (rate limits only)")
            return
        if info == self.last_info:
            # The previous usage again, sent with the rate limits of the next request.
            builder.skip("token_count repeated")
            return
        self.last_info = info
        builder.use()
        # The session's running total beside the request's own: no request's bill.
        builder.set_aside(info.get("total_token_usage"), "the session's running total")
        # OpenAI's input tokens include the cached ones and, from GPT-5.6, the ones written to
        # the cache (``TokenUsage.cache_write_input_tokens``, serde default 0: absent before);
        # ctxlab keeps the three apart.
        usage = ProviderUsage.with_cache_inside(
            last.get("input_tokens"),
            last.get("output_tokens"),
            last.get("cached_input_tokens"),
            last.get("cache_write_input_tokens"),
        )
        if self.usage_first:
            if self.pending is not None:
                builder.lose_usage("no reply before the next usage")
            self.pending = usage
        elif self.replied:
            builder.usage_of_last_reply(usage)
        else:
            builder.lose_usage("no reply since the previous usage")
        self.replied = False

    def finish(self) -> None:
        if self.pending is not None:
            self.builder.lose_usage("no reply after it")


def _content(items: Any) -> list[dict[str, Any]]:
    if isinstance(items, str):  # not what Codex writes, but no reason to lose the text
        items = [{"type": "text", "text": items}]
    blocks: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, Mapping):
            continue
        kind = item.get("type")
        if kind in ("input_text", "output_text", "text") and isinstance(item.get("text"), str):
            if item["text"].strip():
                blocks.append({"type": "text", "text": item["text"]})
        elif kind == "input_image" and isinstance(item.get("image_url"), str):
            blocks.append(image_block(item["image_url"]))
        else:
            blocks.append({"type": "provider", "data": dict(item)})
    return blocks


def _texts(parts: Any) -> list[str]:
    """The non-blank texts of a reasoning item's ``summary`` or ``content`` parts
    (``summary_text``, ``reasoning_text``)."""
    items = parts if isinstance(parts, list) else []
    return [
        p["text"]
        for p in items
        if isinstance(p, Mapping) and isinstance(p.get("text"), str) and p["text"].strip()
    ]


_SERVER_ITEMS = frozenset({"web_search_call", "image_generation_call", "tool_search_call",
                           "tool_search_output"})  # fmt: skip
"""Items of calls the provider ran (a tool search whose ``execution`` is ``server`` among them:
client-run ones are a call and its output, read as such)."""


def _call(item: Mapping[str, Any]) -> dict[str, Any]:
    call_id = str(item.get("call_id") or item.get("id") or "")
    if item.get("type") == "tool_search_call":
        return {"type": "tool_use", "id": call_id, "name": "tool_search",
                "input": arguments_of(item.get("arguments"))}  # fmt: skip
    if item.get("type") == "local_shell_call":
        action = item.get("action")
        inputs = dict(action) if isinstance(action, Mapping) else {}
        return {"type": "tool_use", "id": call_id, "name": "local_shell", "input": inputs}
    if item.get("type") == "custom_tool_call":
        raw = item.get("input")
        return {
            "type": "tool_use",
            "id": call_id,
            "name": str(item.get("name") or "tool"),
            "input": {"input": raw},
        }
    return {
        "type": "tool_use",
        "id": call_id,
        "name": str(item.get("name") or "function"),
        "input": arguments_of(item.get("arguments")),
    }


def _output(item: Mapping[str, Any]) -> dict[str, Any]:
    output = item.get("output", item.get("tools"))  # (a tool search answers with tools)
    error = False
    if isinstance(output, Mapping):  # the failure shape: {content, success: false}
        error = output.get("success") is False
        output = output.get("content", "")
    if isinstance(output, list):  # content items (text, images) from an MCP tool
        parts = _content(output)
        content: Any = [p for p in parts if p["type"] in ("text", "image")] or json.dumps(
            output, ensure_ascii=False
        )
    else:
        content = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return {
        "type": "tool_result",
        "tool_use_id": str(item.get("call_id") or ""),
        "content": content,
        "is_error": error,
    }
