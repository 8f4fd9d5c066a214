"""Cline, Roo Code and Kilo Code task folders.

The three VS Code agents (Roo Code and Kilo Code are forks of Cline) keep each task in a folder
``…/globalStorage/<extension>/tasks/<task id>/`` (extensions ``saoudrizwan.claude-dev``,
``rooveterinaryinc.roo-cline``, ``kilocode.kilo-code``). Read from their own code: cline/cline
(``src/core/storage/disk.ts``, ``src/shared/messages/content.ts`` — ``ClineStorageMessage`` —,
``src/shared/ExtensionMessage.ts`` — ``ClineMessage``, ``ClineApiReqInfo`` —,
``src/core/task/index.ts``; read at 2026-08, before and after its SDK migration) and
RooCodeInc/Roo-Code (``src/core/task-persistence/apiMessages.ts`` — ``ApiMessage`` —,
``packages/types/src/message.ts``, ``src/core/condense/index.ts``, ``src/core/task/Task.ts``,
read at 2026-04). Two files make a task:

- ``api_conversation_history.json``: the conversation as sent to the model — Anthropic
  Messages (``role``, ``content``: a string or blocks), each possibly with ``ts`` (ms: when
  it was saved, which dates a reply; a history without it is dated by the UI log's requests'
  ``ts``, when each started); Cline adds
  ``modelInfo`` and ``metrics`` (``tokens``: ``prompt``, ``completion``, ``cached``) to its
  replies (2025 on) and ``call_id`` to blocks; Roo adds reasoning items without a role
  (``type: "reasoning"``), ``isSummary``/``condenseId`` (its condensed summary, appended after
  the messages it replaces, which keep ``condenseParent``) and truncation markers. The whole
  history stays on disk: what the tool hid from later requests is kept, and each summary is a
  recorded compaction.
- ``ui_messages.json``: the chat as shown (``ClineMessage``: ``ts``, ``type`` ask/say, ``say``,
  ``text``, ``conversationHistoryIndex``). Each request is a ``say: "api_req_started"`` whose
  ``text`` is JSON with ``tokensIn``, ``tokensOut``, ``cacheWrites``, ``cacheReads``, ``cost``.
  Cline's ``tokensIn`` leaves the cache out (its own context meter adds the four); Roo's does
  since 3.29.5 (November 2025, #8954) include it, and before that only for ``apiProtocol:
  "openai"``.

Usage goes to the reply it billed: by a reply's own ``metrics`` (its cache split from the
request of the same counts), else by the request's ``conversationHistoryIndex`` (the last
history message before the request's prompt), else in order when there are as many requests
as replies — otherwise it is counted lost, never guessed. The census counts both files, a
message a record, its kinds named by file (``api_conversation_history.json: user message``,
``ui_messages.json: say:api_req_started``): every UI message that is not a billed request, and
every history item that is not a message, is counted skipped.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder
from ctxlab.io.formats._chat import from_anthropic
from ctxlab.messages import ProviderUsage

__all__ = ["HISTORY_FILE", "UI_FILE", "app_of_path", "from_cline", "is_cline_history"]

HISTORY_FILE = "api_conversation_history.json"
UI_FILE = "ui_messages.json"
_ROO_TOTAL_INPUT_SINCE = 1_761_955_200_000
"""2025-11-01 (ms): Roo Code 3.29.5 on, ``tokensIn`` includes the cache for every protocol."""
_CLINE_FIELDS = {"ts", "modelInfo", "metrics"}
_ROO_FIELDS = {
    "isSummary",
    "condenseId",
    "condenseParent",
    "truncationParent",
    "isTruncationMarker",
}
_EXTENSIONS = {
    "saoudrizwan.claude-dev": "cline",
    "rooveterinaryinc.roo-cline": "roo",
    "kilocode.kilo-code": "kilo",
}


def is_cline_history(value: Any) -> bool:
    """A Cline/Roo/Kilo API history: Anthropic messages carrying the fields only these tools
    write (``ts``, ``modelInfo``, ``metrics``, Roo's condense marks, role-less reasoning
    items)."""
    if not isinstance(value, list) or not value:
        return False
    head = [v for v in value[:50] if isinstance(v, Mapping)]
    if not head or len(head) < min(len(value), 50):
        return False
    messages = [v for v in head if v.get("role") in ("user", "assistant")]
    reasoning = [v for v in head if "role" not in v and v.get("type") == "reasoning"]
    if len(messages) + len(reasoning) != len(head) or not messages:
        return False
    return bool(reasoning) or any(
        (_CLINE_FIELDS | _ROO_FIELDS) & set(m) and "content" in m for m in messages
    )


def app_of_path(parts: Sequence[str]) -> str | None:
    """Which of the three tools wrote a task, from its extension's folder in the path."""
    return next((_EXTENSIONS[p.lower()] for p in parts if p.lower() in _EXTENSIONS), None)


@dataclass(frozen=True)
class _Request:
    """One ``api_req_started`` of the UI log."""

    ts: int
    after: int | None  # conversationHistoryIndex: the last history message before its prompt
    info: Mapping[str, Any]
    stamp: Any = None  # its ``ts`` as written (ms: when the request started)

    @property
    def billed(self) -> bool:
        return any(
            isinstance(self.info.get(k), int | float) and self.info[k] > 0
            for k in ("tokensIn", "tokensOut", "cacheReads", "cacheWrites")
        )

    def usage(self, roo: bool) -> ProviderUsage:
        info = self.info
        inside = roo and (self.ts >= _ROO_TOTAL_INPUT_SINCE or info.get("apiProtocol") == "openai")
        if inside:
            return ProviderUsage.with_cache_inside(
                info.get("tokensIn"),
                info.get("tokensOut"),
                info.get("cacheReads"),
                info.get("cacheWrites"),
            )
        return ProviderUsage(
            info.get("tokensIn") or 0,
            info.get("tokensOut") or 0,
            info.get("cacheReads") or 0,
            info.get("cacheWrites") or 0,
        )


def from_cline(
    history: Any, ui: Any, where: str, app: str | None = None
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of a task's API history, with usage from its UI log (None when the
    task has none), and notes for the transcript's meta."""
    if not isinstance(history, list):
        msg = f"{where}: {HISTORY_FILE} holds a list of messages, got {type(history).__name__}"
        raise MessageFormatError(msg)
    messages: list[Mapping[str, Any]] = []
    others: list[str] = []  # the history's items that are not messages, by kind
    for item in history:
        if isinstance(item, Mapping) and item.get("role") in ("user", "assistant"):
            messages.append(item)
        else:
            kind = item.get("type") if isinstance(item, Mapping) else None
            others.append("reasoning item" if kind == "reasoning" else "item without a role")
    entries = _ui_entries(ui, where)
    requests = [e.request for e in entries if e.request is not None]
    roo = app in ("roo", "kilo") or any("apiProtocol" in r.info for r in requests)
    roo = roo or any(_ROO_FIELDS & set(m) for m in messages)
    usage, sources, placed, notes = _usage_by_reply(messages, requests, roo)
    # The census counts both files, a message a record: the history's (used as messages,
    # its reasoning items skipped), then the UI log's (each billed request's usage placed or
    # lost; the chat as shown, skipped).
    builder = from_anthropic(
        messages, where, usage, label=f"{HISTORY_FILE}: ", times=_times(messages, sources)
    )
    for kind in others:
        builder.record(f"{HISTORY_FILE}: {kind}")
        builder.skip(
            "reasoning item" if kind == "reasoning item" else "history item without a role"
        )
    for entry in entries:
        builder.record(f"{UI_FILE}: {entry.kind}")
        if entry.request is None:
            builder.skip(entry.reason)
        elif not entry.request.billed:
            builder.skip("api request without usage")
        elif any(entry.request is p for p in placed):
            builder.use()  # its usage is on the reply it billed
        else:
            builder.lose_usage("api request usage not matched to a reply")
    notes["app"] = app or ("roo" if roo else "cline")
    notes.update(_compactions(messages))
    models = []
    for message in messages:
        model = message.get("modelInfo")
        model_id = model.get("modelId") if isinstance(model, Mapping) else None
        if isinstance(model_id, str) and model_id not in models:
            models.append(model_id)
    if models:
        notes["models"] = models
    return builder, notes


def _times(messages: list[Mapping[str, Any]], sources: Mapping[int, _Request]) -> dict[int, Any]:
    """Each reply's time as written (ms): its own ``ts`` (when the reply was saved), or —
    in a history that records none (older Cline, Kilo Code) — the ``ts`` of the request its
    usage came from (when it started). Never both in one file: one clock a session."""
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if any("ts" in messages[i] for i in replies):
        return {i: messages[i].get("ts") for i in replies}
    return {i: request.stamp for i, request in sources.items()}


def _has_content(message: Mapping[str, Any]) -> bool:
    content = message.get("content")
    return bool(content.strip()) if isinstance(content, str) else bool(content)


@dataclass(frozen=True)
class _Entry:
    """One message of the UI log: its kind, its request (an ``api_req_started`` whose JSON
    reads), else why it is skipped."""

    kind: str
    request: _Request | None
    reason: str


def _ui_entries(ui: Any, where: str) -> list[_Entry]:
    """The UI log's messages, each with its request or the reason it is skipped."""
    if ui is None:
        return []
    if not isinstance(ui, list):
        msg = f"{where}: {UI_FILE} holds a list of messages, got {type(ui).__name__}"
        raise MessageFormatError(msg)
    entries: list[_Entry] = []
    for message in ui:
        kind = _ui_kind(message)
        if kind != "say:api_req_started":
            entries.append(_Entry(kind, None, f"ui message {kind}"))
            continue
        text = message.get("text")
        try:
            info = json.loads(text) if isinstance(text, str) else None
        except (json.JSONDecodeError, RecursionError):
            info = None
        if not isinstance(info, Mapping):
            entries.append(_Entry(kind, None, "unreadable api_req_started"))
            continue
        after = message.get("conversationHistoryIndex")
        ts = message.get("ts")
        request = _Request(
            ts if isinstance(ts, int) and not isinstance(ts, bool) else 0,
            after if isinstance(after, int) and not isinstance(after, bool) else None,
            info,
            ts,
        )
        entries.append(_Entry(kind, request, ""))
    return entries


def _ui_kind(message: Any) -> str:
    if not isinstance(message, Mapping):
        return "unreadable"
    kind = message.get("type")
    detail = message.get(kind) if kind in ("ask", "say") else None
    return f"{kind}:{detail}" if isinstance(detail, str) else str(kind)


def _usage_by_reply(
    messages: list[Mapping[str, Any]], requests: list[_Request], roo: bool
) -> tuple[dict[int, ProviderUsage], dict[int, _Request], list[_Request], dict[str, Any]]:
    """Usage by reply index, the request it came from by reply index (a reply's own metrics
    may have none), the requests whose usage was placed, and notes."""
    replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    billed = [r for r in requests if r.billed]
    usage: dict[int, ProviderUsage] = {}
    sources: dict[int, _Request] = {}
    how: dict[str, int] = {}
    left = list(billed)
    # A reply's own metrics (Cline, 2025 on): exact; the request of the same counts splits the
    # cache into reads and writes, which the metrics add up.
    for index in replies:
        tokens = _metrics(messages[index])
        if tokens is None:
            continue
        prompt, completion, cached = tokens
        match = next(
            (
                r
                for r in left
                if r.info.get("tokensIn") == prompt and r.info.get("tokensOut") == completion
            ),
            None,
        )
        if match is not None:
            left.remove(match)
            usage[index] = match.usage(roo)
            sources[index] = match
        else:
            usage[index] = ProviderUsage(prompt, completion, cached, 0)
        how["reply metrics"] = how.get("reply metrics", 0) + 1
    open_replies = [i for i in replies if i not in usage]
    # The request's place in the history, where the UI log recorded it.
    for request in [r for r in left if r.after is not None]:
        after = request.after if request.after is not None else -1
        target = next((i for i in open_replies if i > after), None)
        if target is not None:
            usage[target] = request.usage(roo)
            sources[target] = request
            open_replies.remove(target)
            left.remove(request)
            how["conversationHistoryIndex"] = how.get("conversationHistoryIndex", 0) + 1
    if left and len(left) == len(open_replies):
        for index, request in zip(open_replies, left, strict=True):
            usage[index] = request.usage(roo)
            sources[index] = request
        how["order"] = len(left)
        left = []
    notes: dict[str, Any] = {"usage_aligned_by": how} if how else {}
    return usage, sources, [r for r in billed if not any(r is x for x in left)], notes


def _metrics(message: Mapping[str, Any]) -> tuple[int, int, int] | None:
    metrics = message.get("metrics")
    tokens = metrics.get("tokens") if isinstance(metrics, Mapping) else None
    if not isinstance(tokens, Mapping):
        return None
    values = [tokens.get(k) for k in ("prompt", "completion", "cached")]
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in values[:2]):
        return None
    cached = values[2] if isinstance(values[2], int) and values[2] >= 0 else 0
    return int(values[0]), int(values[1]), int(cached)  # type: ignore[arg-type]


def _compactions(messages: list[Mapping[str, Any]]) -> dict[str, Any]:
    """Roo's condense summaries as recorded compactions; the messages they hid, counted."""
    compactions: list[dict[str, Any]] = []
    replies = 0
    for message in messages:
        if message.get("isSummary") is True:
            content = message.get("content")
            head = content if isinstance(content, str) else ""
            if isinstance(content, list):
                head = next(
                    (
                        str(b.get("text"))
                        for b in content
                        if isinstance(b, Mapping) and isinstance(b.get("text"), str)
                    ),
                    "",
                )
            compactions.append(
                {
                    "kind": "compact",
                    "trigger": "unknown",  # the file does not say who asked for it
                    "replies_before": replies,
                    "summary_head": head[:200],
                }
            )
        if message["role"] == "assistant" and _has_content(message):
            replies += 1
    notes: dict[str, Any] = {}
    if compactions:
        notes["compactions"] = compactions
    hidden = sum(1 for m in messages if m.get("condenseParent") or m.get("truncationParent"))
    if hidden:
        notes["hidden_from_later_requests"] = hidden
    return notes
