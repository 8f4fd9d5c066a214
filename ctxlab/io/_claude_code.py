"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``).

One API response is spread over several lines (one per content block, the same
``message.id``) and parallel tool results are one line each: consecutive turns of one role are
merged. Progress, file-history and system lines are skipped; ``compact_boundary`` lines become
compaction records and the summary message that follows (``isCompactSummary``) is marked.
Subagent turns (``isSidechain``) are left out unless asked for. Claude Code does not record its
system prompt or tool schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, anthropic_block
from ctxlab.manifest import ProviderUsage

__all__ = ["from_claude_code", "is_claude_code_line"]

_LINE_TYPES = {"user", "assistant", "progress", "system", "file-history-snapshot", "summary"}


def is_claude_code_line(record: Any) -> bool:
    """Whether a decoded JSONL line looks like a Claude Code session line."""
    return (
        isinstance(record, Mapping)
        and isinstance(record.get("type"), str)
        and record.get("type") in _LINE_TYPES
        and ("sessionId" in record or "messageId" in record or "leafUuid" in record)
    )


def _usage(message: Mapping[str, Any]) -> ProviderUsage | None:
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    values = [usage.get(key) for key in keys]
    return ProviderUsage(*(int(v) if isinstance(v, int | float) else 0 for v in values))


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [anthropic_block(block) for block in content if isinstance(block, Mapping)]


def from_claude_code(
    records: Iterable[tuple[int, Any]], where: str, *, sidechains: bool = False
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of (line number, decoded line) pairs, and the meta learned on the way."""
    builder = ConversationBuilder(where)
    meta: dict[str, Any] = {"source": "claude_code", "compactions": []}
    models: list[str] = []
    seen_responses: set[str] = set()
    response_turn: dict[str, int] = {}
    for number, record in records:
        if not isinstance(record, Mapping):
            msg = f"{where} line {number}: not a JSON object"
            raise MessageFormatError(msg)
        if record.get("isSidechain") and not sidechains:
            continue
        kind = record.get("type")
        if kind == "system" and record.get("subtype") == "compact_boundary":
            data = record.get("compactMetadata") or {}
            meta["compactions"].append(
                {
                    "trigger": data.get("trigger"),
                    "pre_tokens": data.get("preTokens"),
                    "message_index": len(builder.turns),
                }
            )
            continue
        if kind not in ("user", "assistant"):
            continue
        message = record.get("message")
        if not isinstance(message, Mapping):
            msg = f"{where} line {number}: a {kind} line without a 'message' object"
            raise MessageFormatError(msg)
        meta.setdefault("session_id", record.get("sessionId"))
        if kind == "assistant":
            response = str(message.get("id") or number)
            usage = None if response in seen_responses else _usage(message)
            seen_responses.add(response)
            if message.get("model") and message["model"] not in models:
                models.append(message["model"])
            blocks = [
                b
                for b in _blocks(message.get("content"))
                if b.get("type") != "text" or str(b.get("text", "")).strip()
            ]
            earlier = response_turn.get(response)
            if earlier is not None and earlier == len(builder.turns) - 2:
                # The same response, its first calls' results recorded in between: its blocks
                # join its own turn, and the results that follow join the results turn.
                builder.add_to(earlier, blocks)
            else:
                builder.add("assistant", blocks, usage)
                if builder.turns and builder.turns[-1]["role"] == "assistant":
                    response_turn[response] = len(builder.turns) - 1
        else:
            builder.add("user", _blocks(message.get("content")))
            if record.get("isCompactSummary") and meta["compactions"]:
                # After adding: a summary that arrives after tool results joins their turn.
                meta["compactions"][-1]["summary_index"] = len(builder.turns) - 1
    meta["models"] = models
    return builder, meta
