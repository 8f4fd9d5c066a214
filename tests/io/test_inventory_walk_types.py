"""The inventory's walk asks its questions of JSON's own types by type (``type(x) is dict``),
answers a ``type`` / ``role`` word and a field's name from memos, and walks an object straight
from where its holder knows it is a dict (`ctxlab.io._inventory._walk_map`) — and finds what the
walk before it found, in the same order (the first finding of a key names its path), on the
values a caller may give besides decoded JSON: subclasses of dict, list and str, other
mappings, words in other cases, names that are not texts, and nesting near the depth limit,
where the walk is cut and where it came within a level of the limit (``brink``) as before."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab.io import _field_names as names
from ctxlab.io._field_names import LONGEST, kept_key
from ctxlab.io._inventory import _MAX_DEPTH, Inventory, inventory_of
from tests.io.test_inventory_walk import _KEYS, _LEAF, _RECORD, _WORDS, _reference


class _Dict(dict[Any, Any]):
    pass


class _List(list[Any]):
    pass


class _Text(str):
    pass


class _Map(Mapping[Any, Any]):
    # A mapping that is not a dict (a caller's own data).
    def __init__(self, data: dict[Any, Any]) -> None:
        self._data = data

    def __getitem__(self, key: Any) -> Any:
        return self._data[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)


def _outcome(walk: Any, values: list[Any]) -> Any:
    # Every finding in order, and the cut; or the error a walk raised (both must raise it).
    try:
        found: Inventory = walk(values)
    except Exception as error:  # (the same error is the same outcome)
        return type(error).__name__
    return {kind: list(map(repr, f.values())) for kind, f in found.findings.items()}, found.cut


_CASED = st.sampled_from(["ASSISTANT", "Model", "AI", "Thinking", "REASONING", "Tool_Use", "X"])
_OTHER_KEYS = st.sampled_from([0, 7, "Type", "ROLE", "toolCalls", "usageMetadata", "a.b"])
_RICH_LEAF = _LEAF | _CASED | (_WORDS | _CASED).map(_Text) | st.integers().map(lambda n: [n])

_RICH = st.recursive(
    _RICH_LEAF,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(_List)
        | st.dictionaries(_KEYS, inner, max_size=5)
        | st.dictionaries(_KEYS | _OTHER_KEYS, inner, max_size=4)
        | st.dictionaries(_KEYS, inner, max_size=4).map(_Dict)
        | st.dictionaries(_KEYS, inner, max_size=4).map(_Map)
        | st.lists(st.fixed_dictionaries({"key": _KEYS, "value": inner}), min_size=1, max_size=2)
    ),
    max_leaves=20,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_RICH | _RECORD, max_size=4))
@example([_Dict({"type": "Thinking", "thinking": "a thought of several words"})])
@example([{"role": _Text("assistant"), "content": "hi"}, _Map({"type": "tool_use", "id": "c"})])
@example([{"type": ["assistant"], "role": {"a": 1}, "content": "hi"}])
@example([{"type": "assistant", "role": None, "content": "hi"}, {"role": "AI", "text": "x"}])
@example([{0: {"input_tokens": 3}, "x": _List([{"output_tokens": 1}])}])
@example([["x", {"key": "gen_ai.usage.input_tokens", "value": {"intValue": 3}}], [[], 1]])
@example([{"input_tokens": 3}, _Dict(input_tokens=4), _Map({"promptTokenCount": 5})])
def test_the_walk_by_type_finds_what_it_found_in_the_same_order(values: list[Any]) -> None:
    assert _outcome(inventory_of, values) == _outcome(_reference, values)


def _chain(steps: list[str], leaf: Any) -> Any:
    value = leaf
    for step in reversed(steps):
        if step in ("dict", "usage"):  # (under ``usage``: a field the walk asks about first)
            value = {"k" if step == "dict" else "usage": value}
        else:
            value = _List([value]) if step == "sub" else [value]
    return value


_LEAVES_AT_THE_BOTTOM = ["x", None, {"a": "x"}, [], {"role": "assistant", "content": "hi"}]
"""No count at the bottom: under ``usage``, an object holding one is usage, not walked on."""


@settings(max_examples=200, deadline=None)
@given(
    st.integers(_MAX_DEPTH - 4, _MAX_DEPTH + 3).flatmap(
        lambda n: st.lists(
            st.sampled_from(["dict", "list", "sub", "usage"]), min_size=n, max_size=n
        )
    ),
    st.sampled_from(_LEAVES_AT_THE_BOTTOM),
)
def test_a_mixed_nesting_near_the_limit_is_cut_and_at_the_brink_where_it_was(
    steps: list[str], leaf: Any
) -> None:
    value = _chain(steps, leaf)
    found = inventory_of([value])
    assert _outcome(inventory_of, [value]) == _outcome(_reference, [value])
    # The record is at depth 0: the deepest object or list the walk enters is the leaf's
    # holder, or the leaf when it is one; within a level of the limit is the brink.
    deepest = len(steps) if isinstance(leaf, dict | list) else len(steps) - 1
    assert found.brink == (deepest >= _MAX_DEPTH - 1)


def test_the_memos_keep_no_long_name_or_word_alive() -> None:
    # A file of huge ``type`` / ``role`` words and field names: walked, answered as any other
    # (a huge reply word is still no reply), and nothing of it kept in the walk's memos — the
    # texts die with the load (a memo of them held 60 MB after this walk, found in review).
    long = "x" * (names.LONGEST + 1)
    records = [
        {"type": f"t{i}{long}", "role": f"r{i}{long}", f"n{i}{long}": "text", f"o{i}{long}": {}}
        for i in range(50)
    ]
    found = inventory_of(records)
    assert found.counts() == {}
    memos = (names.WORDS, names.FLAGS, names.PLAIN_TEXT, names.TOKEN_NAMES)
    kept = [k for memo in memos for k in memo if long in str(k)]
    assert kept == []
    # A short word is still kept (the memo is not simply off).
    inventory_of([{"type": "tool_use", "id": "a", "name": "n", "input": {}}])
    assert "tool_use" in names.WORDS


def test_a_memo_keeps_short_keys_only() -> None:
    assert kept_key("a" * LONGEST) and not kept_key("a" * (LONGEST + 1))
    assert kept_key(("a", 1, None)) and not kept_key(("a", "b" * (LONGEST + 1)))
    assert kept_key(tuple("a" * 64)) and not kept_key(tuple("a" * 65))
