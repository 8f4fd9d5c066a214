"""The inventory's parts made once: the digest's JSON encoder (`json.dumps` made one at each
call) answers as `json.dumps` did, and a record set aside gives its kept inventory to a caller
that only reads it — the one a copy would have held, kept as walked for the file's own walk."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.io._findings import _digest
from ctxlab.io._inventory import inventory_of, remembered
from ctxlab.io._tally import Tally
from tests.strategies import SETTINGS


def _old_digest(value: Any) -> str:
    # `_digest` as it was: a new encoder at each call.
    if not isinstance(value, str):
        try:
            value = json.dumps(value, sort_keys=True, default=str)
        except (ValueError, RecursionError):
            value = repr(value)
    return hashlib.sha1(value.encode("utf-8", "replace")).hexdigest()[:16]


leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),  # NaN and infinities too: written as JSON's extensions
    st.text(),
    st.builds(object),  # not JSON: written as its str (default=str)
)
values = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=12,
)


@SETTINGS
@given(values)
def test_digest_answers_as_json_dumps_did(value: Any) -> None:
    assert _digest(value) == _old_digest(value)


def test_a_circular_value_is_digested_by_its_repr() -> None:
    loop: list[Any] = []
    loop.append(loop)
    assert _digest(loop) == _old_digest(loop) == _old_digest(repr(loop))


_CALL = {
    "type": "assistant",
    "message": {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"c": "ls"}}],
        "usage": {"input_tokens": 3, "output_tokens": 4},
    },
}


def _keys(inventory: Any) -> dict[str, list[tuple[str, str]]]:
    return {k: [(f.path, f.key) for f in d.values()] for k, d in inventory.findings.items()}


def test_a_record_read_only_gets_its_kept_inventory_and_a_copy_stays_apart() -> None:
    with remembered():
        read = inventory_of([_CALL], read=True)
        copy = inventory_of([_CALL])
        assert read is inventory_of([_CALL], read=True)  # walked once, given itself
        assert copy is not read
        assert _keys(copy) == _keys(read)
        assert _keys(read) == {
            "usage": [
                ("$.message.usage", "usage=" + _digest({"input_tokens": 3, "output_tokens": 4}))
            ],
            "tool call": [("$.message.content[]", "call t1")],
            "reasoning": [],
            "reply": [("$", "reply=" + _digest(_CALL))],
        }
        copy.findings["tool call"].clear()  # a copy is the caller's to change
        assert _keys(inventory_of([_CALL], last=True))["tool call"] == [
            ("$.message.content[]", "call t1")
        ]


def test_setting_a_record_aside_leaves_its_kept_inventory_as_walked() -> None:
    # `Tally.set_aside_in` is handed the kept inventory itself (no copy): were it to change
    # it, the file's last walk, which merges the kept one, would lose what the record holds —
    # and the census would not show it (the record set aside, its findings gone with it).
    with remembered():
        whole = _keys(inventory_of([_CALL], last=False))  # a copy, before anything reads it
        tally = Tally("record")
        tally.set_aside_in(_CALL, "a reason")
        assert tally.set_aside == {
            "usage: a reason": 1,
            "tool call: a reason": 1,
            "reply: a reason": 1,
        }
        assert tally.aside_keys["tool call"] == {"call t1"}
        assert _keys(inventory_of([_CALL], last=True)) == whole
        assert whole["tool call"] == [("$.message.content[]", "call t1")]
