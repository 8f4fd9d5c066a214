"""The inventory's walk, made cheaper for `sessions` on many files (issue 54 item 4), finds what
the walk before it found: every finding (kind, key, path, alias, words) and whether the walk was
cut, on generated values shaped like session records — ids, replies, calls, usage, reasoning,
OpenTelemetry attribute lists, span attributes carrying JSON text, nesting past the limit. The
walk of main before the change is kept below as the reference (`_old_walk`), unchanged but for
its names."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab.io._findings import (
    CALL_HOLDER,
    CALL_LIST,
    CALL_TYPES,
    KINDS,
    REASONING,
    REASONING_TYPES,
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
    key_flags,
    named,
    own_id,
    reasoning_finding,
    reply_key,
    text_finding,
    texts_of,
    type_of,
    usage_key,
)
from ctxlab.io._inventory import _MAX_DEPTH, Inventory, _may_be_usage, inventory_of


def _old_walk(
    value: Any, path: str, ids: tuple[str, ...], found: Inventory, depth: int, in_reply: bool
) -> None:
    # ``ids``: the id of the object that holds ``value`` (none or one); ``in_reply``: inside a
    # reply already found (a message nested in its record is the same reply).
    if depth > _MAX_DEPTH:
        found.cut = True
        return
    if isinstance(value, list):
        if not is_attribute_list(value):
            for item in value:
                _old_walk(item, path + "[]", ids, found, depth + 1, in_reply)
            return
        value = attributes(value)
        if is_usage("", value):  # a span's counts among its other attributes
            found.add(Finding("usage", path, usage_key(value, ids)))
    if not is_map(value):
        return
    # Known by its own id, not by one further out: a part set aside on its own (a sample's
    # output, a tool's copy of its result) must be known as the file knows it.
    own = own_id(value)
    ids = (own,) if own is not None else ()
    kind = type_of(value)
    if kind in REASONING_TYPES or is_thought(value):
        found.add(reasoning_finding(value, path))
        return  # its text fields are the item itself
    if kind in CALL_TYPES and (named(value) or call_id(value) is not None):
        found.add(call_finding(value, path))
    if not in_reply and is_reply(value):
        found.add(Finding("reply", path, reply_key(value, ids)))
        in_reply = True
    for key, item in value.items():
        # Most fields are text or numbers under names that say nothing: passed over here,
        # without a call (a session file has tens of thousands of them).
        shape = type(item)
        if shape is str:
            if not (key_flags(key) & REASONING or "." in key):
                continue
        elif shape is int or shape is float or shape is bool or item is None:
            continue
        _old_walk_field(str(key), item, f"{path}.{key}", ids, found, depth, in_reply)


def _old_walk_field(
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
    flags = key_flags(key)
    if isinstance(item, str):
        if flags & REASONING and is_words(item):
            found.add(text_finding(path, item))
        elif "." in key and item[:1] in "[{":
            # A span attribute (``gen_ai.output.messages``) carries its messages as JSON text.
            decoded = json_in(item)
            if decoded is not None:
                _old_walk(decoded, path, ids, found, depth + 1, in_reply)
        return
    if is_map(item) and _may_be_usage(flags, item) and is_usage(key, item):
        found.add(Finding("usage", path, usage_key(item, ids)))
        return
    if isinstance(item, list) and flags & CALL_LIST:
        for call in item:
            if isinstance(call, Mapping):
                found.add(call_finding(call, path + "[]"))
        return
    if flags & CALL_HOLDER and is_map(item) and named(item):
        found.add(call_finding(item, path))
        return
    if isinstance(item, list) and flags & REASONING:
        for part in item:
            text = texts_of(part) if isinstance(part, Mapping) else part
            if isinstance(text, str) and is_words(text):
                found.add(text_finding(path + "[]", text))
        return
    _old_walk(item, path, ids, found, depth + 1, in_reply)


def _reference(values: list[Any]) -> Inventory:
    found = Inventory()
    for value in values:
        _old_walk_field("", value, "$", (), found, -1, False)
    return found


def _shown(found: Inventory) -> Any:
    return (
        {kind: sorted(map(repr, findings.values())) for kind, findings in found.findings.items()},
        found.cut,
    )


_KEYS = st.sampled_from(
    ["id", "message_id", "call_id", "type", "role", "content", "text", "name", "arguments",
     "input", "usage", "input_tokens", "promptTokenCount", "max_tokens", "tool_calls",
     "function_call", "thinking", "reasoning_content", "thought", "parts", "message",
     "gen_ai.output.messages", "key", "value", "stringValue", "data", "x"]
)  # fmt: skip
_WORDS = st.sampled_from(
    ["assistant", "Assistant", "model", "user", "tool_use", "function_call", "thinking",
     "reasoning", "a thought of several words", "call_1", "", "7", "ls -la"]
)  # fmt: skip
_LEAF = st.none() | st.booleans() | st.integers(-3, 10**6) | st.floats(allow_nan=False) | _WORDS


def _with_json_text(value: Any) -> Any:
    # A span attribute carries its messages as JSON text.
    return {"gen_ai.output.messages": json.dumps(value)}


_RECORD = st.recursive(
    _LEAF,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(_KEYS, inner, max_size=5)
        | st.lists(st.fixed_dictionaries({"key": _KEYS, "value": inner}), min_size=1, max_size=3)
        | inner.map(_with_json_text)
    ),
    max_leaves=16,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_RECORD, max_size=4))
@example([{"id": "r1", "message": {"role": "assistant", "content": "hi", "id": "m1"}}])
@example([{"id": "r1", "usage": {"input_tokens": 3}, "data": [{"output_tokens": 2}]}])
@example([[{"key": "gen_ai.usage.input_tokens", "value": {"intValue": 3}}]])
@example([{"reasoning": ["a thought of several words", {"text": "another thought of words"}]}])
@example([{"tool_calls": [{"id": "c1", "name": "ls"}], "function_call": {"name": "ls"}}])
def test_the_walk_finds_what_the_walk_before_it_found(values: list[Any]) -> None:
    assert _shown(inventory_of(values)) == _shown(_reference(values))


def _nested(depth: int, leaf: Any, kind: str) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if kind == "list" else {"k": value}
    return value


@given(
    st.integers(_MAX_DEPTH - 3, _MAX_DEPTH + 3),
    st.sampled_from(["x", 1, None, {"a": 1}, [], {"role": "assistant", "content": "hi"}]),
    st.sampled_from(["list", "dict"]),
)
def test_a_value_nested_near_the_limit_is_cut_where_it_was(
    depth: int, leaf: Any, kind: str
) -> None:
    # A text at the bottom of lists nested past the limit says the walk was cut, as before
    # (the new walk passes over texts in a list without a call: not past the limit).
    value = _nested(depth, leaf, kind)
    assert _shown(inventory_of([value])) == _shown(_reference([value]))


def test_a_text_in_lists_past_the_limit_says_the_walk_was_cut() -> None:
    assert inventory_of([_nested(_MAX_DEPTH + 1, "x", "list")]).cut
    assert not inventory_of([_nested(_MAX_DEPTH, "x", "list")]).cut


def test_an_inventory_lists_its_kinds_in_the_order_of_kinds() -> None:
    # Written out for speed (`_no_findings`): the kinds, in `KINDS`' order, each with none.
    assert Inventory().findings == {kind: {} for kind in KINDS}
    assert list(Inventory().findings) == list(KINDS)
