"""What a session file holds, counted without knowing its format: the inventory behind every
census.

A reader's census (`ctxlab.io._census`) says what the reader looked at; this walk says what the
file holds. It visits every value of the decoded file — every record, every nested object, the
JSON that span attributes carry as text — and finds, by the words a field is named with and
nothing else, four kinds of things a session is made of:

- **usage**: an object with a count of tokens (a key naming tokens — ``input_tokens``,
  ``promptTokenCount``, ``outputTokens`` — or any number under a ``usage`` / ``tokens`` key);
  limits and budgets (``max_tokens``, ``budget_tokens``, a context window) are not usage. Only the
  outermost such object counts (``usage.cache_creation`` is part of its ``usage``).
- **tool call**: an element of a ``tool_calls`` / ``toolCalls`` / ``toolRequests`` list, an
  object under ``functionCall`` / ``function_call`` with a name, or an object whose ``type`` names
  a call (``tool_use``, ``function_call``, ``tool-call``, ``custom_tool_call``, ...).
- **reasoning**: a non-empty text under a key naming reasoning, thinking or thoughts
  (``thinking``, ``reasoningText``, ``reasoning_content``), a part marked ``thought: true``, or an
  object whose ``type`` names reasoning (``thinking``, ``reasoning``, ``agent_reasoning``).
- **reply**: an object whose ``role`` or ``type`` is the model's (``assistant``, ``model``,
  ``gemini``, ``ai``) and which holds content.

A file records one thing in several places (a Claude Code reply split over lines, a Codex
reasoning summary also sent as an event, a record rewritten with its id), so each finding has a
*key*: a tool call its id (else its name and arguments), reasoning its text (whitespace folded),
usage the id of the object that holds it and a reply its own id (else their own content). What is counted is distinct keys. `Inventory.missing` compares these keys with the
same walk over the transcript a reader made: the difference is what the reader did not place.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

__all__ = ["KINDS", "Finding", "Inventory", "field_of", "inventory_of", "remembered", "unplaced"]

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
_CALL_TYPES = frozenset(
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
_REASONING_TYPES = frozenset(
    {
        "thinking",
        "redacted_thinking",
        "reasoning",
        "reasoning_text",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "thought",
    }
)
_REPLY_ROLES = frozenset({"assistant", "model", "gemini", "ai", "aimessage", "bot"})
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
_MAX_DEPTH = 200
"""Deeper than this, a file is not walked further (hostile nesting): what lies below is not
counted, and `Inventory.cut` says so."""


@dataclass(frozen=True)
class Finding:
    """One thing the file holds: its kind, where (a JSON path, list positions as ``[]``), the
    key it is known by, and another it may be known by (a call's name and arguments beside its
    id: a reader may give an id-less call one of its own)."""

    kind: str
    path: str
    key: str
    alias: str = ""
    text: str = ""
    """Reasoning's words, whitespace folded (a reader may join or split a model's parts)."""
    parts: tuple[str, ...] = ()
    """Reasoning's parts (a summary beside the text), each folded: a reader may keep one."""


@dataclass
class Inventory:
    """The distinct things a file holds, by kind (see the module)."""

    findings: dict[str, dict[str, Finding]] = field(default_factory=lambda: {k: {} for k in KINDS})
    """kind → key → the first finding of that key."""
    cut: bool = False
    """Whether part of the file was nested too deeply to walk."""

    def add(self, finding: Finding) -> None:
        self.findings[finding.kind].setdefault(finding.key, finding)

    def merge(self, other: Inventory) -> None:
        """Add what ``other`` found (its first finding of a key kept where this has none)."""
        for kind, findings in other.findings.items():
            mine = self.findings[kind]
            for key, finding in findings.items():
                mine.setdefault(key, finding)
        self.cut = self.cut or other.cut

    def counts(self) -> dict[str, int]:
        """Distinct findings by kind (kinds with none left out)."""
        return {kind: len(keys) for kind, keys in self.findings.items() if keys}

    def missing(self, placed: Inventory, kind: str, words: str = "") -> list[Finding]:
        """The findings of ``kind`` (a tool call or reasoning) that ``placed`` does not hold:
        neither its key nor its alias, nor — for reasoning — its words within placed reasoning
        or within ``words`` (the transcript's other text, whitespace folded: a reader may keep
        a model's thought as the text it is)."""
        keys = set(placed.findings[kind])
        keys |= {f.alias for f in placed.findings[kind].values() if f.alias}
        words = "\n".join([words, *(f.text for f in placed.findings[kind].values() if f.text)])
        return [f for f in self.findings[kind].values() if not _matched(f, keys, words)]


def _matched(finding: Finding, keys: set[str], words: str) -> bool:
    if finding.key in keys:
        return True
    if finding.kind == "tool call":
        # An id-less call, which a reader may have given an id of its own.
        return finding.key == finding.alias and finding.alias in keys
    # Reasoning: its encrypted or signed form kept, its words (or one of its parts) kept.
    return bool(
        (finding.alias and finding.alias in keys)
        or (finding.text and finding.text in words)
        or any(part in words for part in finding.parts)
    )


def inventory_of(values: Iterable[Any]) -> Inventory:
    """The inventory of decoded records (a JSON Lines file's values, or a document as one)."""
    found = Inventory()
    for value in values:
        found.merge(_record_inventory(value))
    return found


_SEEN: ContextVar[dict[int, tuple[Any, Inventory]] | None] = ContextVar("seen", default=None)
"""During a load (`remembered`), each record's inventory by the record's identity: a record a
reader skipped is walked when it is set aside, and not again when the whole file is."""


@contextmanager
def remembered() -> Iterator[None]:
    """Within: a record walked once is not walked again (see `_SEEN`)."""
    token = _SEEN.set({})
    try:
        yield
    finally:
        _SEEN.reset(token)


def _record_inventory(value: Any) -> Inventory:
    seen = _SEEN.get()
    if seen is not None and id(value) in seen:
        return seen[id(value)][1]
    found = Inventory()
    # As a field of no name: a record that is itself a usage object counts as one.
    _walk_field("", value, "$", (), found, -1, False)
    if seen is not None and isinstance(value, dict | list):
        seen[id(value)] = (value, found)  # (the value kept: its id stays its own)
    return found


def _walk(
    value: Any, path: str, ids: tuple[str, ...], found: Inventory, depth: int, in_reply: bool
) -> None:
    # ``ids``: the id of the object that holds ``value`` (none or one); ``in_reply``: inside a
    # reply already found (a message nested in its record is the same reply).
    if depth > _MAX_DEPTH:
        found.cut = True
        return
    if isinstance(value, list):
        if not _is_attribute_list(value):
            for item in value:
                _walk(item, path + "[]", ids, found, depth + 1, in_reply)
            return
        value = _attributes(value)
        if _is_usage("", value):  # a span's counts among its other attributes
            found.add(Finding("usage", path, _usage_key(value, ids)))
    if not _is_map(value):
        return
    # Known by its own id, not by one further out: a part set aside on its own (a sample's
    # output, a tool's copy of its result) must be known as the file knows it.
    own = _own_id(value)
    ids = (own,) if own is not None else ()
    kind = _type(value)
    if kind in _REASONING_TYPES or _is_thought(value):
        found.add(_reasoning(value, path))
        return  # its text fields are the item itself
    if kind in _CALL_TYPES and (_named(value) or _call_id(value) is not None):
        found.add(_call(value, path))
    if not in_reply and _is_reply(value):
        found.add(Finding("reply", path, _reply_key(value, ids)))
        in_reply = True
    for key, item in value.items():
        # Most fields are text or numbers under names that say nothing: passed over here,
        # without a call (a session file has tens of thousands of them).
        shape = type(item)
        if shape is str:
            if not (_key_flags(key) & _REASONING or "." in key):
                continue
        elif shape is int or shape is float or shape is bool or item is None:
            continue
        _walk_field(str(key), item, f"{path}.{key}", ids, found, depth, in_reply)


def _walk_field(
    key: str,
    item: Any,
    path: str,
    ids: tuple[str, ...],
    found: Inventory,
    depth: int,
    in_reply: bool,
) -> None:
    if item is None or isinstance(item, int | float):  # (bool too): nothing to find
        return
    flags = _key_flags(key)
    if isinstance(item, str):
        if flags & _REASONING and _is_words(item):
            found.add(_text_finding(path, item))
        elif "." in key and item[:1] in "[{":
            # A span attribute (``gen_ai.output.messages``) carries its messages as JSON text.
            decoded = _decoded(item)
            if decoded is not None:
                _walk(decoded, path, ids, found, depth + 1, in_reply)
        return
    if _is_map(item) and _is_usage(key, item):
        found.add(Finding("usage", path, _usage_key(item, ids)))
        return
    if isinstance(item, list) and flags & _CALL_LIST:
        for call in item:
            if isinstance(call, Mapping):
                found.add(_call(call, path + "[]"))
        return
    if flags & _CALL_HOLDER and _is_map(item) and _named(item):
        found.add(_call(item, path))
        return
    if isinstance(item, list) and flags & _REASONING:
        for part in item:
            text = _texts(part) if isinstance(part, Mapping) else part
            if isinstance(text, str) and _is_words(text):
                found.add(_text_finding(path + "[]", text))
        return
    _walk(item, path, ids, found, depth + 1, in_reply)


def _is_attribute_list(value: list[Any]) -> bool:
    # OpenTelemetry's OTLP JSON: attributes as [{"key": ..., "value": {"stringValue": ...}}].
    return bool(value) and all(
        isinstance(v, Mapping) and set(v) == {"key", "value"} and isinstance(v["key"], str)
        for v in value
    )


def _attributes(value: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in value:
        inner = pair["value"]
        if isinstance(inner, Mapping) and len(inner) == 1:
            inner = next(iter(inner.values()))
        out[pair["key"]] = inner
    return out


def _decoded(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def field_of(holder: Mapping[str, Any], key: str) -> dict[str, Any]:
    """``holder[key]`` with what the inventory knows it by: its name and its holder's id."""
    return {**{k: holder[k] for k in _ID_KEYS if k in holder}, key: holder[key]}


def _own_id(value: Mapping[str, Any]) -> str | None:
    if not _ID_KEY_SET.intersection(value):
        return None
    for key in _ID_KEYS:
        found = value.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool) and str(found):
            return f"{key}={found}"
    return None


def _type(value: Mapping[str, Any]) -> str:
    kind = value.get("type")
    return kind.lower() if isinstance(kind, str) else ""


def _is_usage(key: str, value: Mapping[str, Any]) -> bool:
    # A count (not a limit) under a usage key, or under a key naming tokens.
    holder = _key_flags(key) & _HOLDER
    if not holder and not any(_key_flags(name) & _TOKEN for name in value if type(name) is str):
        return False  # (most objects: no name says tokens)
    for name, item in value.items():
        flags = _key_flags(name if isinstance(name, str) else str(name))
        if not flags & _LIMIT and (holder or flags & _TOKEN) and _is_count(item):
            return True
    return False


_TOKEN, _LIMIT, _HOLDER, _CALL_LIST, _CALL_HOLDER, _REASONING = (1, 2, 4, 8, 16, 32)


@lru_cache(maxsize=8192)
def _key_flags(key: str) -> int:
    """What a field's name says (files repeat a few names thousands of times: classified once)."""
    return (
        (_TOKEN if _TOKEN_KEY.search(key) else 0)
        | (_LIMIT if _LIMIT_KEY.search(key) else 0)
        | (_HOLDER if _USAGE_HOLDER.match(key) else 0)
        | (_CALL_LIST if _CALL_LISTS.match(key) else 0)
        | (_CALL_HOLDER if _CALL_HOLDERS.match(key) else 0)
        | (_REASONING if _REASONING_KEY.match(key) else 0)
    )


def _is_map(value: Any) -> bool:
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


def _usage_key(value: Mapping[str, Any], ids: tuple[str, ...]) -> str:
    # One usage a response: the id of what holds it (a reply split over records, a record
    # rewritten), else its counts (a report repeated; what else the object holds is not it).
    if ids:
        return f"usage@{ids[-1]}"
    return "usage=" + _digest({str(k): v for k, v in value.items() if _is_count(v)})


def _named(value: Mapping[str, Any]) -> bool:
    return any(isinstance(value.get(k), str) for k in ("name", "toolName", "tool_name"))


def _call_id(value: Mapping[str, Any]) -> str | None:
    for key in _CALL_ID_KEYS:
        found = value.get(key)
        if isinstance(found, str) and found:
            return found
    return None


def _call(value: Mapping[str, Any], path: str) -> Finding:
    # Known by its id, and by its name and arguments (decoded when they are JSON text).
    function = value.get("function")
    named = function if isinstance(function, Mapping) else value
    name = next((named[k] for k in ("name", "toolName", "tool_name") if k in named), None)
    args = next(
        (named[k] for k in ("arguments", "args", "input", "parameters") if k in named), None
    )
    if isinstance(args, str):
        decoded = _decoded(args)
        args = decoded if decoded is not None else args
    alias = "call " + _digest({"name": name, "args": args})
    call_id = _call_id(value)
    key = "call " + call_id.split("__dup")[0] if call_id is not None else alias
    return Finding("tool call", path, key, alias)


def _is_thought(value: Mapping[str, Any]) -> bool:
    # Gemini's parts: a text marked as the model's thought.
    return value.get("thought") is True and isinstance(value.get("text"), str)


def _reasoning(value: Mapping[str, Any], path: str) -> Finding:
    # Known by its words, and by the longest string it carries (its encrypted or signed form,
    # which is all a reader may keep of it); without words, by that string alone.
    strings = [v for k, v in value.items() if isinstance(v, str) and k != "type"]
    opaque = "opaque " + _digest(max(strings, key=len, default=""))
    text = _texts(value)
    if not text.strip():
        return Finding("reasoning", path, opaque)
    parts = tuple(
        folded for k in _TEXT_KEYS if k in value and (folded := " ".join(_texts(value[k]).split()))
    )
    return replace(_text_finding(path, text), alias=opaque, parts=parts)


def _texts(value: Any, depth: int = 0) -> str:
    """The words of a reasoning item: its text fields, nested parts included."""
    if depth > 8:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_texts(v, depth + 1) for v in value)
    if isinstance(value, Mapping):
        return "\n".join(_texts(value[k], depth + 1) for k in _TEXT_KEYS if k in value)
    return ""


def _is_words(text: str) -> bool:
    # Reasoning is words; a setting under a reasoning name ("auto", "detailed") is not.
    stripped = text.strip()
    return len(stripped) > 24 or (bool(stripped) and any(c.isspace() for c in stripped))


def _text_finding(path: str, text: str) -> Finding:
    folded = " ".join(text.split())
    return Finding("reasoning", path, "text " + _digest(folded), text=folded)


def _is_reply(value: Mapping[str, Any]) -> bool:
    role = value.get("role", value.get("type"))
    if not isinstance(role, str) or role.lower() not in _REPLY_ROLES:
        return False
    return any(
        value.get(k) not in (None, "", [], {})
        for k in ("content", "parts", "text", "tool_calls", "toolCalls", "message")
    )


def _reply_key(value: Mapping[str, Any], ids: tuple[str, ...]) -> str:
    # A reply by the id around it, else by its words: the same reply is often recorded again in
    # another shape (a request's input repeats the replies before it).
    if ids:
        return f"reply@{ids[-1]}"
    words = " ".join(_texts(value.get("content", value.get("parts", value.get("text")))).split())
    return f"reply {_digest(words)}" if words else f"reply={_digest(value)}"


def _digest(value: Any) -> str:
    if not isinstance(value, str):
        try:
            value = json.dumps(value, sort_keys=True, default=str)
        except (ValueError, RecursionError):
            value = repr(value)
    return hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:16]


def unplaced(
    held: Inventory,
    placed: Inventory,
    aside: Mapping[str, Collection[str]],
    accounted: Mapping[str, int],
    words: str = "",
) -> dict[str, int]:
    """What ``held`` (the file) finds that the reader neither placed nor set aside, as
    ``"<kind> at <path>"`` → count.

    What the reader set aside is known by its keys (``aside``, by kind). A tool call or
    reasoning is matched by key: placed when the transcript (``placed``, and its text
    ``words`` for reasoning) holds it. Usage and replies are counted: of those not set aside,
    ``accounted[kind]`` are placed (usage read, replies kept).
    """
    out: dict[str, int] = {}
    for kind in KINDS:
        apart = aside.get(kind, ())
        pool = [
            f
            for f in held.findings[kind].values()
            if f.key not in apart and not (f.alias and f.alias in apart)
        ]
        if kind in ("tool call", "reasoning"):
            missing = held.missing(placed, kind, words)
            kept = {f.key for f in missing}
            pool = [f for f in pool if f.key in kept]
            _attribute(out, kind, pool, len(pool))
        else:
            _attribute(out, kind, pool, len(pool) - accounted.get(kind, 0))
    return out


def _attribute(out: dict[str, int], kind: str, findings: list[Finding], excess: int) -> None:
    # ``excess`` of ``findings`` are unaccounted: named by the paths they were found at, the
    # rarest first — which of a counted kind were missed the count cannot say, and a field a
    # reader never handles is likelier one it met seldom than the one it reads on every reply.
    by_path: dict[str, int] = {}
    for finding in findings:
        by_path[finding.path] = by_path.get(finding.path, 0) + 1
    for path, count in sorted(by_path.items(), key=lambda kv: (kv[1], kv[0])):
        if excess <= 0:
            return
        taken = min(count, excess)
        out[f"{kind} at {path}"] = taken
        excess -= taken
