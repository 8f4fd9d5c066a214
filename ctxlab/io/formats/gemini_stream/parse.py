"""Gemini CLI ``--output-format stream-json`` output (stdout saved as JSON Lines).

Read from the CLI's own code (google-gemini/gemini-cli at 2026-08:
``packages/core/src/output/types.ts`` — ``JsonStreamEvent``, ``StreamStats`` —,
``packages/core/src/output/stream-json-formatter.ts``, ``packages/cli/src/nonInteractiveCli.ts``).
Each line is an event with ``type`` and ``timestamp``:

- ``init``: ``session_id``, ``model``;
- ``message``: ``role`` ``user`` (the prompt) or ``assistant`` (``content``; streamed as
  ``delta: true`` chunks of one reply — the CLI writes no other —, and a message without
  ``delta`` is a whole reply of its own);
- ``tool_use``: ``tool_name``, ``tool_id``, ``parameters``; ``tool_result``: ``tool_id``,
  ``status`` (``success``/``error``), ``output`` or ``error.message``;
- ``error``: a warning or error (``severity``, ``message``);
- ``result``: ``status`` and the session's ``stats`` (tokens summed over all model calls, per
  model: ``input_tokens``, ``cached``, ``output_tokens``, …; ``tool_calls``, ``duration_ms``).

The CLI sends one request per loop: the prompt, then the results of the calls the previous
reply made. Chunks of one reply are joined; two replies with nothing between them (whole
messages the CLI itself does not write) stay two requests, a stand-in user turn
(`STAND_IN_EXCHANGE`, counted in ``meta["unrecorded_exchanges"]``) in the place of what was
sent between them. The stream records no usage per request — the
session's totals are kept in ``meta["session_stats"]``, never spread over requests. The census
counts a line a record (a reply's chunks as one group); error events and the result line are
counted skipped. ``--output-format json`` (one object with
the final ``response`` and ``stats``) holds no conversation, and is refused saying so.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, tool_result
from ctxlab.io.formats._totals import checked_totals

__all__ = [
    "STAND_IN_EXCHANGE",
    "from_gemini_stream",
    "is_gemini_json_output",
    "is_gemini_stream",
    "is_gemini_stream_line",
]

_EVENTS = {"init", "message", "tool_use", "tool_result", "error", "result"}
STAND_IN_EXCHANGE = (
    "[what was sent to the model between the reply before and the next (their tool calls' "
    "results, or the turn that continued it): not in this stream-json output]"
)
"""The user turn between two replies the stream writes with nothing in between."""
_UNNAMED_COUNTS = ("cached", "input")
"""The token counts of a ``result``'s stats whose names do not say so (``types.ts``)."""


def is_gemini_stream_line(value: Any) -> bool:
    """A stream-json event: a known ``type``, a ``timestamp`` and its own fields."""
    return (
        isinstance(value, Mapping) and isinstance(value.get("timestamp"), str) and _is_event(value)
    )


def is_gemini_stream(values: Sequence[Any]) -> bool:
    """Whether the first records of a file or list are a stream-json output, ``init`` line or
    not: each an event of the stream (its ``timestamp`` may be missing, a ``message``'s
    ``content`` is text), and one at least that no chat format writes — a ``timestamp``, or an
    event other than a message (a bare ``{"type": "message", "role", "content"}`` is an OpenAI
    Responses item too)."""
    head = list(values[:20])
    if not head or not all(isinstance(v, Mapping) and _is_event(v) for v in head):
        return False
    return any(isinstance(v.get("timestamp"), str) or v["type"] != "message" for v in head)


def _is_event(value: Mapping[str, Any]) -> bool:
    # An event's own fields (``types.ts``: ``JsonStreamEvent``).
    kind = value.get("type")
    if kind not in _EVENTS or not isinstance(value.get("timestamp", ""), str):
        return False
    if kind == "init":
        return "session_id" in value and "model" in value
    if kind == "message":
        return (
            value.get("role") in ("user", "assistant")
            and isinstance(value.get("content"), str)
            and not _RESPONSE_FIELDS & value.keys()
        )
    if kind == "tool_use":
        return "tool_id" in value and "tool_name" in value
    if kind == "tool_result":
        return "tool_id" in value and "status" in value
    if kind == "result":
        stats = isinstance(value.get("stats"), Mapping)
        return "status" in value and ("timestamp" in value or stats)
    return "severity" in value and "message" in value  # error


_RESPONSE_FIELDS = frozenset({"id", "model", "stop_reason", "usage"})
"""Fields of a provider's message object (an Anthropic ``Message`` is also ``type: message``
with a ``role`` and ``content``): an event of the stream has none of them."""


def is_gemini_json_output(value: Any) -> bool:
    """The CLI's ``--output-format json`` object: the final response and the session's stats."""
    return (
        isinstance(value, Mapping)
        and "response" in value
        and isinstance(value.get("stats"), Mapping)
        and "models" in value["stats"]
    )


def from_gemini_stream(
    records: Iterable[tuple[int, Any]], where: str
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation and notes of a stream's (line number, event) pairs."""
    builder = ConversationBuilder(where, unit="line")
    meta: dict[str, Any] = {}
    reply = _Reply(builder)
    for number, event in records:
        if is_gemini_json_output(event):
            msg = (
                f"{where}: Gemini CLI --output-format json holds only the final response, not "
                "the conversation; record with --output-format stream-json, or load the session "
                "the CLI keeps in ~/.gemini/tmp/<project>/chats/ (format='gemini_cli')"
            )
            raise MessageFormatError(msg)
        if not isinstance(event, Mapping) or event.get("type") not in _EVENTS:
            msg = f"{where} line {number}: not a Gemini CLI stream-json event"
            raise MessageFormatError(msg)
        kind = event["type"]
        if kind == "message" and event.get("role") == "assistant":
            reply.add(event)
            continue
        reply.other()
        builder.record(f"{kind} {event.get('role')}" if kind == "message" else kind, raw=event)
        _event(builder, meta, event, f"{where} line {number}")
        builder.settle("event with nothing kept")
    reply.end()
    if reply.stand_ins:
        meta["unrecorded_exchanges"] = reply.stand_ins
    return builder, meta


class _Reply:
    """The reply being streamed: its chunks (``delta: true``), joined into one reply when
    another event comes; a message without ``delta`` is a whole reply of its own."""

    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.texts: list[str] = []
        self.events: list[Any] = []
        self.after_reply = False  # a reply ended, and nothing was read since
        self.stand_ins = 0

    def add(self, event: Mapping[str, Any]) -> None:
        whole = not event.get("delta")
        if whole:
            self.end()  # not a chunk of the reply before
        self.texts.append(str(event.get("content") or ""))
        self.events.append(event)
        if whole:
            self.end()  # nor one that the chunks after it continue

    def other(self) -> None:
        """An event that is no reply comes: the reply read so far ends."""
        self.end()
        self.after_reply = False

    def end(self) -> None:
        """The reply read so far ends: one group of the census (a whole message, or its
        chunks joined)."""
        builder, text = self.builder, "".join(self.texts)
        if self.texts:
            builder.record("message assistant", len(self.texts), raw=list(self.events))
            if text.strip() and self.after_reply:
                # Two replies with nothing between: what was sent to the model between them
                # is not in the stream, and each stays its own request.
                self.stand_ins += 1
                builder.add("user", [{"type": "text", "text": STAND_IN_EXCHANGE}])
            if not builder.text("assistant", text):
                builder.skip("empty message")
            else:
                self.after_reply = True
                # Dated by its first chunk (each event's ``timestamp``: ISO 8601).
                builder.reply_time(as_mapping(self.events[0]).get("timestamp"))
                if len(self.events) > 1:
                    # The chunks are one reply, joined: each is not a reply of its own.
                    builder.set_aside(self.events[1:], "a streamed reply's later chunks (joined)")
        self.texts, self.events = [], []


def _event(
    builder: ConversationBuilder, meta: dict[str, Any], event: Mapping[str, Any], at: str
) -> None:
    """Any event but a reply's chunk (``at``: its file and line)."""
    kind = event["type"]
    if kind == "init":
        if isinstance(event.get("session_id"), str):
            meta["session_id"] = event["session_id"]
        if isinstance(event.get("model"), str):
            meta["models"] = [event["model"]]
        builder.use()
    elif kind == "message":
        if not builder.text("user", str(event.get("content") or "")):
            builder.skip("empty message")
    elif kind == "tool_use":
        parameters = event.get("parameters")
        called = builder.add(
            "assistant",
            [
                {
                    "type": "tool_use",
                    "id": str(event.get("tool_id") or ""),
                    "name": str(event.get("tool_name") or "tool"),
                    "input": dict(parameters) if isinstance(parameters, Mapping) else {},
                }
            ],
        )
        if called:  # a reply of calls alone is dated by its first (one with text: by that)
            builder.reply_time(event.get("timestamp"))
    elif kind == "tool_result":
        builder.add("user", [_result(event)])
    elif kind == "result":
        meta["status"] = event.get("status")
        if isinstance(event.get("stats"), Mapping):
            # ``StreamStats``: ``cached`` and ``input`` are token counts too.
            meta["session_stats"] = checked_totals(
                event["stats"], at, "the session's totals", counts=_UNNAMED_COUNTS
            )
            builder.set_aside(event["stats"], "the session's totals")
        builder.skip("result (the session's totals)")
    else:
        builder.skip(f"{event.get('severity') or 'error'} event")


def _result(event: Mapping[str, Any]) -> dict[str, Any]:
    error = event.get("status") == "error"
    output = event.get("output")
    if error:
        text = str(as_mapping(event.get("error")).get("message") or output or "(error)")
    elif isinstance(output, str):
        text = output
    else:
        text = json.dumps(output, ensure_ascii=False) if output is not None else "(no output)"
    return tool_result(str(event.get("tool_id") or ""), text, is_error=error)
