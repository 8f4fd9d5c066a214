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
usage the id of the object that holds it and a reply its own id (else their own content). What
is counted is distinct keys. `ctxlab.io._accounting.unplaced` compares these keys with the same
walk over the transcript a reader made: the difference is what the reader did not place. The rules that say
what a value is live in `ctxlab.io._findings`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from ctxlab.io._field_names import (
    CALL_WORD,
    FLAGS,
    LEAVES,
    NODES,
    NOT_MAPS,
    NOT_PLAIN_LIST,
    NOT_PLAIN_MAP,
    NUMBERS,
    PLAIN_TEXT,
    REASONING_WORD,
    REPLY_WORD,
    TOKEN_NAMES,
    WORDS,
    word,
)
from ctxlab.io._findings import (
    _HOLDER,
    CALL_HOLDER,
    CALL_LIST,
    KINDS,
    REASONING,
    Finding,
    attributes,
    call_finding,
    call_id,
    is_attribute_list,
    is_map,
    is_reply,
    is_thought,
    is_usage,
    is_words,
    json_in,
    named,
    own_id,
    reasoning_finding,
    reply_key,
    text_finding,
    texts_of,
    usage_key,
)

__all__ = ["KINDS", "Finding", "Inventory", "inventory_of", "remembered"]

_MAX_DEPTH = 200
"""Deeper than this, a file is not walked further (hostile nesting): what lies below is not
counted, and `Inventory.cut` says so."""


@dataclass
class Inventory:
    """The distinct things a file holds, by kind (see the module)."""

    findings: dict[str, dict[str, Finding]] = field(default_factory=lambda: _no_findings())
    """kind → key → the first finding of that key."""
    cut: bool = False
    """Whether part of the file was nested too deeply to walk."""
    brink: bool = False
    """Whether the walk came within a level of the limit: the same value walked a level deeper
    (an element of a list document, `_walk_document`) may be cut where this was not."""

    def add(self, finding: Finding) -> None:
        self.findings[finding.kind].setdefault(finding.key, finding)

    def merge(self, other: Inventory) -> None:
        """Add what ``other`` found (its first finding of a key kept where this has none)."""
        for kind, findings in other.findings.items():
            if findings:  # (most records set aside hold nothing: merged at no cost)
                mine = self.findings[kind]
                for key, finding in findings.items():
                    mine.setdefault(key, finding)
        self.cut = self.cut or other.cut

    def counts(self) -> dict[str, int]:
        """Distinct findings by kind (kinds with none left out)."""
        return {kind: len(keys) for kind, keys in self.findings.items() if keys}


def _no_findings() -> dict[str, dict[str, Finding]]:
    # `KINDS`, each with none yet: written out, an inventory is made per record set aside
    # (tens of thousands a file) and a comprehension was a fifth of its cost.
    return {"usage": {}, "tool call": {}, "reasoning": {}, "reply": {}}


def inventory_of(values: Iterable[Any], *, last: bool = False, read: bool = False) -> Inventory:
    """The inventory of decoded records (a JSON Lines file's values, or a document as one).

    ``last``: the load's last walk of these records (its whole file's, or the transcript's,
    `account_for`): one not walked before in the load is walked straight into the whole, its
    own inventory not kept — nothing asks for it again. ``read``: the caller only reads the inventory (one record's
    kept inventory is then given itself, not a copy)."""
    seen = _SEEN.get()
    if seen is not None and not last and type(values) is list and len(values) == 1:
        # One record set aside (`Census.set_aside_in`): its kept inventory, copied — not
        # merged into a new one (the same findings, in the same order).
        kept = _record_inventory(values[0])
        return kept if read else _copy(kept)
    found = Inventory()
    for value in values:
        if seen is None or (last and id(value) not in seen):
            # Nothing to remember this record's inventory for: walked straight into the
            # whole (the same first finding of each key, in the same order).
            if seen and type(value) is list:
                _walk_document(value, seen, found)
            else:
                _walk_record(value, found)
        else:
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


def _copy(inventory: Inventory) -> Inventory:
    # A kept inventory given out: the caller's to change, the kept one stays as walked.
    findings = {kind: dict(keys) if keys else {} for kind, keys in inventory.findings.items()}
    return Inventory(findings, inventory.cut)


def _record_inventory(value: Any) -> Inventory:
    seen = _SEEN.get()
    if seen is not None and id(value) in seen:
        return seen[id(value)][1]
    found = Inventory()
    _walk_record(value, found)
    if seen is not None and isinstance(value, dict | list):
        seen[id(value)] = (value, found)  # (the value kept: its id stays its own)
    return found


def _walk_document(
    value: list[Any], seen: dict[int, tuple[Any, Inventory]], found: Inventory
) -> None:
    # A document that is a list, walked as `_walk_field("", value, "$", None, found, -1, False)`
    # walks it — but an element a reader set aside (tau-bench's other episodes) was walked
    # then, at ``$``: its kept inventory is placed under ``$[]`` (a third of a tau-bench load
    # was this second walk). Kept only where the walk here would find the same: an object
    # that is not itself usage (alone, it is counted as one; here, its fields are walked),
    # whose walk came nowhere near the limit (here, it lies a level deeper).
    if _attribute_list(value):
        _walk(value, "$", None, found, 0, False)
        return
    for item in value:
        if type(item) in LEAVES:
            continue  # (as `_walk_list` passes them over)
        kept = seen.get(id(item)) if type(item) is dict else None
        if kept is None or kept[1].cut or kept[1].brink or _is_usage_record(item):
            _walk(item, "$[]", None, found, 1, False)
            continue
        for kind, findings in kept[1].findings.items():
            mine = found.findings[kind]
            for key, f in findings.items():
                if key not in mine:
                    mine[key] = Finding(
                        f.kind, "$[]" + f.path[1:], key, f.alias_of, f.text, f.parts
                    )


def _walk_record(value: Any, found: Inventory) -> None:
    # As a field of no name: a record that is itself a usage object counts as one. An object
    # that is not is walked straight (`_walk_field`'s questions of it, answered the same).
    if type(value) is dict and not _may_be_usage(0, value):
        _walk_map(value, "$", found, 0, False)
    else:
        _walk_field("", value, "$", None, found, -1, False)


def _is_usage_record(item: dict[Any, Any]) -> bool:
    # `_walk_field`'s first question of a record (a field of no name).
    return _may_be_usage(0, item) and is_usage("", item)


def _walk(value: Any, path: str, holder: Any, found: Inventory, depth: int, in_reply: bool) -> None:
    # ``holder``: the object that holds ``value`` (None at the top), whose id — found only
    # when a finding asks for it (`_ids`) — names what it holds; ``in_reply``: inside a reply
    # already found (a message nested in its record is the same reply).
    if depth >= _MAX_DEPTH - 1:  # (one question on the common path)
        if depth > _MAX_DEPTH:
            found.cut = True
            return
        found.brink = True
    if isinstance(value, list):
        if not _attribute_list(value):
            _walk_list(value, path + "[]", holder, found, depth, in_reply)
            return
        value = attributes(value)
        if is_usage("", value):  # a span's counts among its other attributes
            found.add(Finding("usage", path, usage_key(value, _ids(holder))))
    if type(value) is dict or is_map(value):
        _walk_map(value, path, found, depth, in_reply)


def _walk_map(
    value: Mapping[Any, Any], path: str, found: Inventory, depth: int, in_reply: bool
) -> None:
    # `_walk` of an object: asked of it straight where its holder knows it is a dict (most of
    # what is walked), without `_walk`'s questions of a list (the depth's asked again: the same).
    if depth >= _MAX_DEPTH - 1:
        if depth > _MAX_DEPTH:
            found.cut = True
            return
        found.brink = True
    answer = _asked(value, path, found, in_reply)
    if answer is None:
        return  # reasoning: its text fields are the item itself
    in_reply = answer
    for key, item in value.items():
        # Most fields are text or numbers under names that say nothing: passed over here,
        # without a call (a session file has tens of thousands of them).
        shape = type(item)
        if shape is str:
            if PLAIN_TEXT[key]:
                continue
        elif shape in NUMBERS:
            continue
        elif shape in NODES and type(key) is str:
            # An object or a list under a name that says nothing (most of what is walked):
            # `_walk_field`'s questions of it answered here (from the same memos), and walked
            # on without its call.
            flags = FLAGS[key]
            if shape is dict:
                if not (flags & NOT_PLAIN_MAP or TOKEN_NAMES[tuple(item)]):
                    _walk_map(item, f"{path}.{key}", found, depth + 1, in_reply)
                    continue
            elif not flags & NOT_PLAIN_LIST:
                _walk(item, f"{path}.{key}", value, found, depth + 1, in_reply)
                continue
        _walk_field(str(key), item, f"{path}.{key}", value, found, depth, in_reply)


def _asked(value: Mapping[Any, Any], path: str, found: Inventory, in_reply: bool) -> bool | None:
    # What an object is by its ``type`` (or ``role``), added to ``found``: None when it is
    # reasoning (walked no further), else whether what it holds is inside a reply.
    # Known by its own id, not by one further out: a part set aside on its own (a sample's
    # output, a tool's copy of its result) must be known as the file knows it.
    given = value.get("type")
    named_as = WORDS[given] if type(given) is str else word(given)
    if named_as & REASONING_WORD or (value.get("thought") is True and is_thought(value)):
        found.add(reasoning_finding(value, path))
        return None
    if named_as & CALL_WORD and (named(value) or call_id(value) is not None):
        found.add(call_finding(value, path))
    if in_reply:
        return True
    role = value.get("role", given)  # `is_reply`'s first question, asked here
    if role is not given:
        named_as = WORDS[role] if type(role) is str else word(role)
    if named_as & REPLY_WORD and is_reply(value):
        found.add(Finding("reply", path, reply_key(value, _ids(value))))
        return True
    return False


def _walk_list(
    value: list[Any], path: str, holder: Any, found: Inventory, depth: int, in_reply: bool
) -> None:
    leaves_pass = depth < _MAX_DEPTH  # (deeper, a leaf too says the walk was cut)
    for item in value:
        # A text or a number in a list holds nothing to find: passed over, without a call.
        shape = type(item)
        if shape is dict:
            _walk_map(item, path, found, depth + 1, in_reply)
        elif not (leaves_pass and shape in LEAVES):
            _walk(item, path, holder, found, depth + 1, in_reply)


def _ids(holder: Any) -> tuple[str, ...]:
    # The id of the object that holds a finding (none or one), asked only when there is a
    # finding: most objects hold none, and looking on each was a tenth of a walk.
    own = own_id(holder) if holder is not None else None
    return (own,) if own is not None else ()


def _attribute_list(value: list[Any]) -> bool:
    # `is_attribute_list`, answered at once for the usual list (of objects that are not
    # ``{"key": ..., "value": ...}`` pairs).
    first = value[0] if value else None
    if type(first) is dict:
        if len(first) != 2 or "key" not in first:
            return False
    elif type(first) in NOT_MAPS:  # (texts, numbers, lists; and an empty list)
        return False
    return is_attribute_list(value)


def _walk_field(
    key: str,
    item: Any,
    path: str,
    holder: Any,
    found: Inventory,
    depth: int,
    in_reply: bool,
) -> None:
    shape = type(item)  # (the JSON types asked by their type, others as before)
    if shape is not dict and shape is not list and (item is None or isinstance(item, int | float)):
        return  # (bool too): nothing to find
    flags = FLAGS[key]
    if shape is str or isinstance(item, str):
        if flags & REASONING and is_words(item):
            found.add(text_finding(path, item))
        elif "." in key and item[:1] in "[{":
            # A span attribute (``gen_ai.output.messages``) carries its messages as JSON text.
            decoded = json_in(item)
            if decoded is not None:
                _walk(decoded, path, holder, found, depth + 1, in_reply)
        return
    mapping = shape is dict or is_map(item)
    if mapping and _may_be_usage(flags, item) and is_usage(key, item):
        found.add(Finding("usage", path, usage_key(item, _ids(holder))))
        return
    listed = shape is list or isinstance(item, list)
    if listed and flags & CALL_LIST:
        for call in item:
            if isinstance(call, Mapping):
                found.add(call_finding(call, path + "[]"))
        return
    if flags & CALL_HOLDER and mapping and named(item):
        found.add(call_finding(item, path))
        return
    if listed and flags & REASONING:
        for part in item:
            text = texts_of(part) if isinstance(part, Mapping) else part
            if isinstance(text, str) and is_words(text):
                found.add(text_finding(path + "[]", text))
        return
    _walk(item, path, holder, found, depth + 1, in_reply)


def _may_be_usage(flags: int, item: Mapping[Any, Any]) -> bool:
    # `is_usage`'s first question, answered once per shape: a usage key holds it, or a name
    # in it says tokens; else it cannot be usage.
    return bool(flags & _HOLDER) or TOKEN_NAMES[tuple(item)]
