"""Gemini CLI sessions and Gemini API contents.

Gemini CLI records a chat in ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (older versions:
one ``session-*.json``). Read from its own code (google-gemini/gemini-cli,
``packages/core/src/services/chatRecordingService.ts`` and ``chatRecordingTypes.ts``,
``packages/core/src/utils/sessionUtils.ts``, 2026):

- a JSONL file holds a metadata line (``sessionId``, ``projectHash``, ``startTime``), then one
  line per message record (``id``, ``timestamp``, ``type``: ``user``, ``gemini``, ``info``,
  ``error``, ``warning``; ``content``: a Gemini ``PartListUnion``); a later line with the same
  ``id`` replaces the record in place; ``{"$rewindTo": id}`` drops that message and all after it;
  ``{"$set": {...}}`` updates the metadata, and with ``messages`` replaces them all;
- a ``gemini`` record carries ``toolCalls`` (``id``, ``name``, ``args``, ``result``: parts with a
  ``functionResponse``), ``thoughts`` (summaries), ``tokens`` (``input`` — the prompt, cached
  tokens included —, ``output``, ``cached``, ``thoughts``, ``tool``, ``total``) and ``model``;
- the conversation the CLI resumes from is rebuilt as Gemini contents: ``info``/``error``/
  ``warning`` records and user lines that are commands (``/``, ``?``) or injected context are
  not part of it.

Each ``gemini`` record is one model response, so one request, with its own ``tokens``
(``recordMessage`` gives each new record the usage queued during its stream). When nothing of
what went between two of them is recorded — the CLI of late 2025 wrote no ``toolCalls`` outside
its interactive UI (``recordCompletedToolCalls`` was called from ``useGeminiStream`` only), yet
each response's calls ran and their results were sent back before the next — the records are not
merged into one reply: a stand-in user turn (`STAND_IN_EXCHANGE`) takes the place of that
exchange, each record stays its own reply with its own usage, and ``meta["unrecorded_exchanges"]``
counts them. A ``tokens`` of all zeros (some versions write one for a response whose usage never
arrived) is no bill: it is counted lost, never placed as a usage of 0.

A list of Gemini API contents (``{"role": "user" | "model", "parts": [...]}``: ``text``,
``thought``, ``functionCall``, ``functionResponse``, ``inlineData``) loads too."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.messages import ProviderUsage

__all__ = [
    "STAND_IN_EXCHANGE",
    "from_gemini_cli",
    "from_gemini_contents",
    "is_gemini_cli",
    "is_gemini_contents",
]

STAND_IN_EXCHANGE = (
    "[the tool calls of the reply before and their results, or the turn that continued it: "
    "sent to the model, not in this Gemini CLI session file]"
)
"""The user turn that stands between two replies the file records with nothing in between."""
ZERO_TOKENS = "all-zero tokens (Gemini CLI wrote no bill)"
"""Why a reply's usage is counted lost when the CLI wrote every count of its ``tokens`` as 0."""

_RECORD_TYPES = {"user", "gemini", "info", "error", "warning"}
_NOT_CONVERSATION = {"info", "error", "warning"}
_IGNORED_USER = ("/", "?", "<session_context>", "<hook_context>")


def is_gemini_cli(value: Any) -> bool:
    """A Gemini CLI session: its metadata (``sessionId`` + ``projectHash``) or a message record."""
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("sessionId"), str) and isinstance(value.get("projectHash"), str):
        return True
    return (
        isinstance(value.get("id"), str)
        and value.get("type") in _RECORD_TYPES
        and "content" in value
        and "timestamp" in value
    )


def is_gemini_contents(value: Any) -> bool:
    """A list of Gemini API contents: ``role`` user/model with ``parts``, one ``model`` at least
    or a part only Gemini writes."""
    if not isinstance(value, list) or not value:
        return False
    head = value[:20]
    if not all(isinstance(v, Mapping) and isinstance(v.get("parts"), list) for v in head):
        return False
    roles = {v.get("role") for v in head}
    gemini_parts = any(
        isinstance(p, Mapping) and ("functionCall" in p or "functionResponse" in p)
        for v in head
        for p in v["parts"]
    )
    return roles <= {"user", "model", "function", None} and ("model" in roles or gemini_parts)


def _records(
    lines: Sequence[Any], where: str, builder: ConversationBuilder
) -> tuple[list[Mapping[str, Any]], dict[str, Any]]:
    """The message records in force after every update, rewind and checkpoint, and the
    metadata — as the CLI's own loader reads the file. The census counts each control line as
    used and each record a later line replaced or rewound as skipped; the records in force are
    counted when they are read into the conversation."""
    records: dict[str, Mapping[str, Any]] = {}
    meta: dict[str, Any] = {}

    def drop(gone: list[Mapping[str, Any]], reason: str) -> None:
        for record in gone:
            builder.record(f"{record.get('type')} record", raw=record)
            builder.skip(reason)

    for number, line in enumerate(lines, 1):
        if not isinstance(line, Mapping):
            msg = f"{where} record {number}: not an object"
            raise MessageFormatError(msg)
        if isinstance(line.get("$rewindTo"), str):
            builder.record("$rewindTo line")
            builder.use()
            ids = list(records)
            cut = ids.index(line["$rewindTo"]) if line["$rewindTo"] in records else 0
            drop([records.pop(gone) for gone in ids[cut:]], "rewound ($rewindTo)")
        elif isinstance(line.get("$set"), Mapping):
            builder.record("$set line")
            builder.use()
            update = line["$set"]
            if isinstance(update.get("messages"), list):
                drop(list(records.values()), "replaced by a $set of the messages")
                records = {}
                _read(update["messages"], records, drop)
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif _is_message(line):
            _read([line], records, drop)
        elif isinstance(line.get("sessionId"), str):
            builder.record("metadata")
            builder.use()
            meta.update({k: v for k, v in line.items() if k != "messages"})
            messages = line.get("messages")
            _read(messages if isinstance(messages, list) else [], records, drop)
        else:
            msg = f"{where} record {number}: neither a message nor session metadata"
            raise MessageFormatError(msg)
    return list(records.values()), meta


def _read(
    messages: list[Any],
    records: dict[str, Mapping[str, Any]],
    drop: Callable[[list[Mapping[str, Any]], str], None],
) -> None:
    # A later record with an id replaces the earlier in place (the CLI rewrites a message as it
    # streams); what is not a message is counted.
    for message in messages:
        if not _is_message(message):
            drop([{"type": "unreadable"}], "not a message record")
            continue
        earlier = records.get(message["id"])
        if earlier is not None:
            drop([earlier], "replaced by a later record of the same id")
        records[message["id"]] = message


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("id"), str) and "type" in value


def _parts(content: Any) -> list[Any]:
    if content is None:
        return []
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return [{"text": p} if isinstance(p, str) else p for p in content]
    return [content]


def _text_of(parts: Sequence[Any]) -> str:
    return "".join(str(p.get("text", "")) for p in parts if isinstance(p, Mapping))


def from_gemini_cli(lines: Sequence[Any], where: str) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of a Gemini CLI session (its records or JSON lines) and its notes."""
    builder = ConversationBuilder(where, unit="record")
    records, meta = _records(lines, where, builder)
    calls = _CallIds()
    models: list[str] = []
    for record in records:
        kind = record.get("type")
        builder.record(f"{kind} record", raw=record)
        parts = _parts(record.get("content"))
        if kind in _NOT_CONVERSATION:
            builder.skip(f"{kind} record")
            continue
        if kind == "user":
            if _responses_only(parts):
                _responses(parts, calls, builder)
                continue
            text = _text_of(parts).strip()
            if not text or text.startswith(_IGNORED_USER):
                builder.skip("command or injected context")
            elif not builder.add("user", _blocks(parts, calls, builder)):
                builder.skip("message with nothing kept")
            continue
        if kind != "gemini":
            builder.skip(f"{kind} record")
            continue
        if isinstance(record.get("model"), str) and record["model"] not in models:
            models.append(record["model"])
        _reply(record, parts, calls, builder)
    notes: dict[str, Any] = {
        k: meta[k] for k in ("sessionId", "projectHash", "startTime", "kind") if k in meta
    }
    if calls.stand_ins:
        notes["unrecorded_exchanges"] = calls.stand_ins
    if models:
        notes["models"] = models
    return builder, notes


def _reply(
    record: Mapping[str, Any], parts: list[Any], calls: _CallIds, builder: ConversationBuilder
) -> None:
    # A ``gemini`` record: the reply (its calls in the content, or in ``toolCalls`` alone in
    # a legacy record), then the calls' results as the next user turn.
    tool_calls = [c for c in record.get("toolCalls") or () if isinstance(c, Mapping)]
    blocks = _blocks(parts, calls, builder)
    if not any(isinstance(p, Mapping) and "functionCall" in p for p in parts):
        for call in tool_calls:
            blocks.append(calls.use(call.get("name"), call.get("args"), call.get("id")))
    thoughts = record.get("thoughts") or ()
    # Summaries the CLI shows of the model's thinking; the API is not sent them back.
    builder.leave_out(
        "thought summary",
        len(thoughts) if isinstance(thoughts, list) else 0,
        raw={"thoughts": thoughts},
    )
    if blocks and builder.turns and builder.turns[-1]["role"] == "assistant":
        # Two responses with nothing recorded between them: what was sent in between is not
        # in the file, and each stays its own request.
        calls.stand_ins += 1
        builder.add("user", [{"type": "text", "text": STAND_IN_EXCHANGE}])
    tokens = record.get("tokens")
    if builder.add("assistant", blocks, _usage(tokens)):
        builder.reply_time(record.get("timestamp"))  # ISO 8601 (``toISOString``)
    else:
        builder.skip("empty reply")
    reason = _no_bill(tokens)
    if reason is not None:
        builder.lose_usage(reason)
    results: list[dict[str, Any]] = []
    for call in tool_calls:
        for part in _parts(call.get("result")):
            if isinstance(part, Mapping) and isinstance(part.get("functionResponse"), Mapping):
                results.append(calls.result(part["functionResponse"], call.get("id")))
            elif isinstance(part, Mapping) and "text" in part:
                response = {"name": call.get("name"), "response": {"output": part["text"]}}
                results.append(calls.result(response, call.get("id")))
            else:
                builder.leave_out("tool result part of another kind")
    builder.add("user", results)


def _responses_only(parts: Sequence[Any]) -> bool:
    """Whether a ``user`` record holds tool responses alone: what the CLI records (from 2026)
    when it sends a reply's tool results, which the reply's ``toolCalls`` hold too."""
    return bool(parts) and all(
        isinstance(p, Mapping) and isinstance(p.get("functionResponse"), Mapping) for p in parts
    )


def _responses(parts: Sequence[Any], calls: _CallIds, builder: ConversationBuilder) -> None:
    # The results already read from the reply's ``toolCalls`` are not read twice; a response
    # that answers a call still open (a reply whose ``toolCalls`` lack it) is its result.
    fresh = [p for p in parts if calls.answers_open(p["functionResponse"])]
    if not fresh:
        builder.skip("tool responses the reply's toolCalls hold too")
        return
    builder.add("user", _blocks(fresh, calls, builder))
    builder.leave_out("tool response the reply's toolCalls hold too", len(parts) - len(fresh))


def from_gemini_contents(contents: Sequence[Any], where: str) -> ConversationBuilder:
    """The conversation of Gemini API contents (``role`` user/model, ``parts``)."""
    builder = ConversationBuilder(where, unit="content")
    calls = _CallIds()
    for index, content in enumerate(contents):
        if not isinstance(content, Mapping) or not isinstance(content.get("parts"), list):
            msg = f"{where} content {index}: expected an object with a 'parts' list"
            raise MessageFormatError(msg)
        role = "assistant" if content.get("role") == "model" else "user"
        builder.record(f"{content.get('role')} content")
        if not builder.add(role, _blocks(content["parts"], calls, builder)):
            builder.skip("empty content")
    return builder


def _blocks(
    parts: Sequence[Any], calls: _CallIds, builder: ConversationBuilder
) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for part in parts:
        if not isinstance(part, Mapping):
            builder.leave_out("unreadable part")
            continue
        if part.get("thought") is True:
            builder.leave_out("thought", raw=part)
            continue
        if isinstance(part.get("functionCall"), Mapping):
            call = part["functionCall"]
            blocks.append(calls.use(call.get("name"), call.get("args"), call.get("id")))
        elif isinstance(part.get("functionResponse"), Mapping):
            blocks.append(calls.result(part["functionResponse"]))
        elif isinstance(part.get("text"), str):
            if part["text"].strip():
                blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part.get("inlineData"), Mapping):
            data = part["inlineData"]
            media = str(data.get("mimeType") or "")
            if media.startswith("image/"):
                source = {"type": "base64", "media_type": media, "data": data.get("data", "")}
                blocks.append({"type": "image", "source": source})
            else:
                blocks.append({"type": "provider", "data": dict(part)})
        else:
            blocks.append({"type": "provider", "data": dict(part)})  # kept, never sent wrong
    return blocks


class _CallIds:
    """Pairs calls and responses: by id when Gemini gave one, else by name in call order."""

    def __init__(self) -> None:
        self.open: list[tuple[str, str]] = []  # (id, name) of calls without their response
        self.count = 0
        self.stand_ins = 0  # the stand-in user turns put between two replies

    def use(self, name: Any, args: Any, id: Any = None) -> dict[str, Any]:
        self.count += 1
        call_id = str(id) if id else f"gemini_call_{self.count}"
        self.open.append((call_id, str(name or "function")))
        inputs = args if isinstance(args, Mapping) else {"args": args} if args is not None else {}
        return {
            "type": "tool_use",
            "id": call_id,
            "name": str(name or "function"),
            "input": dict(inputs),
        }

    def answers_open(self, response: Mapping[str, Any]) -> bool:
        """Whether ``response`` answers a call still open: by id when it has one, else by
        name."""
        wanted, name = str(response.get("id") or ""), str(response.get("name") or "")
        if wanted:
            return any(o[0] == wanted for o in self.open)
        return any(o[1] == name for o in self.open)

    def result(self, response: Mapping[str, Any], id: Any = None) -> dict[str, Any]:
        wanted = str(response.get("id") or id or "")
        name = str(response.get("name") or "")
        match = next((o for o in self.open if wanted and o[0] == wanted), None)
        match = match or next((o for o in self.open if o[1] == name), None)
        match = match or (self.open[0] if self.open and not wanted else None)
        call_id = match[0] if match else wanted or f"gemini_call_{self.count}"
        if match:
            self.open.remove(match)
        body = response.get("response")
        error = isinstance(body, Mapping) and "error" in body and "output" not in body
        if isinstance(body, Mapping) and len(body) == 1 and ("output" in body or "error" in body):
            text = body.get("output", body.get("error"))
            content = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False)
        else:
            content = json.dumps(body, ensure_ascii=False) if body is not None else ""
        return {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": content,
            "is_error": error,
        }


def _usage(tokens: Any) -> ProviderUsage | None:
    # Gemini's prompt count includes the cached tokens; ctxlab keeps them apart.
    if not isinstance(tokens, Mapping) or _no_bill(tokens):
        return None
    return ProviderUsage.with_cache_inside(
        tokens.get("input"), tokens.get("output"), tokens.get("cached")
    )


_COUNTS = ("input", "output", "cached", "thoughts", "tool", "total")


def _no_bill(tokens: Any) -> str | None:
    """Why a record's ``tokens`` is no bill, if it is none: every count 0 (a request is never
    0 tokens), or no count at all; None for a bill, or for no ``tokens`` (nothing to count)."""
    if not isinstance(tokens, Mapping):
        return None
    counts = [tokens.get(k) for k in _COUNTS]
    if all(c is None for c in counts):
        return "tokens without counts"
    if all(c is None or (type(c) in (int, float) and c == 0) for c in counts):
        return ZERO_TOKENS
    return None
