"""What a value of a session file is, by the words its fields are named with and nothing else:
a usage, a tool call, reasoning, a reply — and the key each is known by (`ctxlab.io._inventory`
walks a file with these rules)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

__all__ = ["KINDS", "Finding", "field_of"]

KINDS = ("usage", "tool call", "reasoning", "reply")
"""The kinds of things the inventory counts, in the order they are listed."""

_TOKEN_KEY = re.compile(r"tokens?(?![a-z])|token_?count|tokencount", re.IGNORECASE)
# Counts that bound a request rather than measure it: never usage.
_LIMIT_KEY = re.compile(
    r"^max|budget|limit|window|remaining|reset|per_?(minute|second|day)|rate", re.IGNORECASE
)
_USAGE_HOLDER = re.compile(
    r"^(usage|usage_?metadata|tokens|token_?usage|last_?token_?usage|total_?token_?usage)$",
    re.IGNORECASE,
)
_CALL_LISTS = re.compile(r"^(tool_?calls|tool_?requests|function_?calls|tool_?uses)$", re.I)
_CALL_HOLDERS = re.compile(r"^(function_?call|tool_?call)$", re.IGNORECASE)
CALL_TYPES = frozenset(
    {
        "tool_use",
        "server_tool_use",
        "mcp_tool_use",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "mcp_call",
        "computer_call",
        "tool_call",
        "tool-call",
        "toolcall",
        "tool_request",
        "toolrequest",
    }
)
_REASONING_KEY = re.compile(
    r"^(reasoning|thinking|thoughts?)(_?(text|content|summary))?$", re.IGNORECASE
)
REASONING_TYPES = frozenset(
    {
        "thinking",
        "redacted_thinking",
        "redacted_reasoning",  # Letta's RedactedReasoningContent
        "reasoning",
        "reasoning_text",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "thought",
    }
)
REPLY_ROLES = frozenset({"assistant", "model", "gemini", "ai", "aimessage", "bot"})
_ID_KEYS = (
    "id",
    "message_id",
    "messageId",
    "requestId",
    "request_id",
    "response_id",
    "responseId",
)
_ID_KEY_SET = frozenset(_ID_KEYS)
# A call's own id first: an item of the Responses API has an item id beside its call id, and
# its output names the call id.
_CALL_ID_KEYS = (
    "call_id",
    "callId",
    "tool_call_id",
    "toolCallId",
    "toolUseId",
    "tool_use_id",
    "id",
)
_TEXT_KEYS = ("thinking", "reasoning", "text", "content", "summary", "description", "subject")


@dataclass(frozen=True, eq=False, repr=False)
class Finding:
    """One thing the file holds: its kind, where (a JSON path, list positions as ``[]``), the
    key it is known by, and another it may be known by (`alias`: a call's name and arguments
    beside its id — a reader may give an id-less call one of its own)."""

    kind: str
    path: str
    key: str
    alias_of: Any = ""
    """The alias, or — for a call known by its id — the call's ``(name, arguments)`` it is made
    of when first asked (`alias`)."""
    text: str = ""
    """Reasoning's words, whitespace folded (a reader may join or split a model's parts)."""
    parts: tuple[str, ...] = ()
    """Reasoning's parts (a summary beside the text), each folded: a reader may keep one."""

    @property
    def alias(self) -> str:
        """The other key this is known by ("" when none). A call's is a digest of its name and
        arguments, asked only when an id-less call went unmatched (`ctxlab.io._accounting`):
        made then, not for each of the tens of thousands of calls a walk finds (a fifth of
        `_placed`). Made of the values as the walk found them — readers do not change the
        decoded records they read."""
        given = self.alias_of
        if type(given) is str:
            return given
        made = _call_alias(*given)
        object.__setattr__(self, "alias_of", made)  # (made once)
        return made

    def _fields(self) -> tuple[Any, ...]:
        return (self.kind, self.path, self.key, self.alias, self.text, self.parts)

    def __eq__(self, other: object) -> bool:
        if type(other) is not Finding:
            return NotImplemented  # (as the dataclass's: the other side is asked)
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        kind, path, key, alias, text, parts = self._fields()
        return (
            f"Finding(kind={kind!r}, path={path!r}, key={key!r}, alias={alias!r}, "
            f"text={text!r}, parts={parts!r})"
        )


def is_attribute_list(value: list[Any]) -> bool:
    # OpenTelemetry's OTLP JSON: attributes as [{"key": ..., "value": {"stringValue": ...}}].
    return bool(value) and all(
        isinstance(v, Mapping) and set(v) == {"key", "value"} and isinstance(v["key"], str)
        for v in value
    )


def attributes(value: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in value:
        inner = pair["value"]
        if isinstance(inner, Mapping) and len(inner) == 1:
            inner = next(iter(inner.values()))
        out[pair["key"]] = inner
    return out


def json_in(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def field_of(holder: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``holder[key]`` with what the inventory knows it by: its name and its holder's id."""
    return {**{k: holder[k] for k in _ID_KEYS if k in holder}, key: holder[key]}


def own_id(value: Mapping[str, Any]) -> str | None:
    if not _ID_KEY_SET.intersection(value):
        return None
    for key in _ID_KEYS:
        found = value.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found):
            return f"{key}={found}"
    return None


def type_of(value: Mapping[str, Any]) -> str:
    kind = value.get("type")
    return kind.lower() if isinstance(kind, str) else ""


def is_usage(key: str, value: Mapping[str, Any]) -> bool:
    # A count (not a limit) under a usage key, or under a key naming tokens.
    holder = key_flags(key) & _HOLDER
    if not holder and not any(key_flags(name) & _TOKEN for name in value if type(name) is str):
        return False  # (most objects: no name says tokens)
    for name, item in value.items():
        flags = key_flags(name if isinstance(name, str) else str(name))
        if not flags & _LIMIT and (holder or flags & _TOKEN) and _is_count(item):
            return True
    return False


_TOKEN, _LIMIT, _HOLDER, CALL_LIST, CALL_HOLDER, REASONING = (1, 2, 4, 8, 16, 32)


@lru_cache(maxsize=8192)
def key_flags(key: str) -> int:
    """What a field's name says (files repeat a few names thousands of times: classified once)."""
    return (
        (_TOKEN if _TOKEN_KEY.search(key) else 0)
        | (_LIMIT if _LIMIT_KEY.search(key) else 0)
        | (_HOLDER if _USAGE_HOLDER.match(key) else 0)
        | (CALL_LIST if _CALL_LISTS.match(key) else 0)
        | (CALL_HOLDER if _CALL_HOLDERS.match(key) else 0)
        | (REASONING if _REASONING_KEY.match(key) else 0)
    )


def is_map(value: Any) -> bool:
    # Decoded JSON is dicts; a caller's data may hold other mappings (the slower check).
    return type(value) is dict or (
        not isinstance(value, str | list | int | float) and isinstance(value, Mapping)
    )


def _is_count(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and value.isdecimal() and len(value) < 16


def usage_key(value: Mapping[str, Any], ids: tuple[str, ...]) -> str:
    # One usage a response: the id of what holds it (a reply split over records, a record
    # rewritten), else its counts (a report repeated; what else the object holds is not it).
    if ids:
        return f"usage@{ids[-1]}"
    return "usage=" + _digest({str(k): v for k, v in value.items() if _is_count(v)})


def named(value: Mapping[str, Any]) -> bool:
    # A name of its own, or its function's (OpenAI's ``{"function": {"name": ...}}``).
    function = value.get("function")
    return any(isinstance(value.get(k), str) for k in ("name", "toolName", "tool_name")) or (
        isinstance(function, Mapping) and isinstance(function.get("name"), str)
    )


def call_id(value: Mapping[str, Any]) -> str | None:
    for key in _CALL_ID_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def call_finding(value: Mapping[str, Any], path: str) -> Finding:
    # Known by its id, and by its name and arguments (`Finding.alias`: made when asked; an
    # id-less call is known by it, made now).
    function = value.get("function")
    named = function if isinstance(function, Mapping) else value
    name = next((named[k] for k in ("name", "toolName", "tool_name") if k in named), None)
    args = next(
        (named[k] for k in ("arguments", "args", "input", "parameters") if k in named), None
    )
    own = call_id(value)
    if own is None:
        alias = _call_alias(name, args)
        return Finding("tool call", path, alias, alias)
    return Finding("tool call", path, "call " + own.split("__dup")[0], (name, args))


def may_be_alias(key: str) -> bool:
    """Whether ``key`` has the shape of a call's alias (``"call "`` and 16 hex digits): a call
    known by its id may be known by such a key too, by no other."""
    return len(key) == 21 and key.startswith("call ") and _HEX.issuperset(key[5:])


_HEX = frozenset("0123456789abcdef")


def _call_alias(name: Any, args: Any) -> str:
    # A call's name and arguments (decoded when they are JSON text), digested.
    if isinstance(args, str):
        decoded = json_in(args)
        args = decoded if decoded is not None else args
    return "call " + _digest({"name": name, "args": args})


def is_thought(value: Mapping[str, Any]) -> bool:
    # Gemini's parts: a text marked as the model's thought.
    return value.get("thought") is True and isinstance(value.get("text"), str)


def reasoning_finding(value: Mapping[str, Any], path: str) -> Finding:
    # Known by its words, and by the longest string it carries (its encrypted or signed form,
    # which is all a reader may keep of it); without words, by that string alone.
    strings = [v for k, v in value.items() if isinstance(v, str) and k != "type"]
    opaque = "opaque " + _digest(max(strings, key=len, default=""))
    text = texts_of(value)
    if not text.strip():
        return Finding("reasoning", path, opaque)
    parts = tuple(
        folded
        for k in _TEXT_KEYS
        if k in value and (folded := " ".join(texts_of(value[k]).split()))
    )
    return replace(text_finding(path, text), alias_of=opaque, parts=parts)


def texts_of(value: Any, depth: int = 0) -> str:
    """The words of a reasoning item: its text fields, nested parts included."""
    if depth > 8:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(texts_of(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return "\n".join(texts_of(value[k], depth + 1) for k in _TEXT_KEYS if k in value)
    return ""


def is_words(text: str) -> bool:
    # Reasoning is words; a setting under a reasoning name ("auto", "detailed") is not.
    stripped = text.strip()
    return len(stripped) > 24 or (bool(stripped) and any(c.isspace() for c in stripped))


def text_finding(path: str, text: str) -> Finding:
    folded = " ".join(text.split())
    return Finding("reasoning", path, "text " + _digest(folded), text=folded)


def is_reply(value: Mapping[str, Any]) -> bool:
    role = value.get("role", value.get("type"))
    if not isinstance(role, str) or role.lower() not in REPLY_ROLES:
        return False
    return any(
        value.get(k) not in (None, "", [], {})
        for k in ("content", "parts", "text", "tool_calls", "toolCalls", "message")
    )


def reply_key(value: Mapping[str, Any], ids: tuple[str, ...]) -> str:
    # A reply by the id around it, else by its words: the same reply is often recorded again in
    # another shape (a request's input repeats the replies before it).
    if ids:
        return f"reply@{ids[-1]}"
    words = " ".join(texts_of(value.get("content", value.get("parts", value.get("text")))).split())
    return f"reply {_digest(words)}" if words else f"reply={_digest(value)}"


_DIGEST_JSON = json.JSONEncoder(sort_keys=True, default=str)
"""``json.dumps(value, sort_keys=True, default=str)``'s encoder, made once: `json.dumps` makes
one at each call, and a file's every tool call is digested (tens of thousands)."""


def _digest(value: Any) -> str:
    if not isinstance(value, str):
        try:
            value = _DIGEST_JSON.encode(value)
        except (ValueError, RecursionError):
            value = repr(value)
    return hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:16]
