"""A list document's elements that a reader set aside (tau-bench's other episodes) are walked
once: the file's last walk places their kept inventories under ``$[]`` instead of walking them
again (`ctxlab.io._inventory._walk_document`) — and finds what walking the whole document
found: every finding (kind, path, key, alias, words) in the same order, and whether the walk was
cut, on generated documents of session-shaped records, records that are themselves usage, and
records nested near the depth limit (a level deeper in the document than alone)."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab.io._inventory import _MAX_DEPTH, Inventory, inventory_of, remembered
from tests.io.test_inventory_walk import _RECORD, _nested


def _in_order(found: Inventory) -> Any:
    # Order kept: the first finding of each key is the one the census names a path by.
    return {kind: list(f.values()) for kind, f in found.findings.items()}, found.cut


def _walked_whole(document: list[Any]) -> Any:
    return _in_order(inventory_of([document]))  # (outside a load: nothing remembered)


def _walked_with_some_set_aside(document: list[Any], aside: list[bool]) -> Any:
    with remembered():
        chosen = [item for item, out in zip(document, aside, strict=False) if out]
        inventory_of(chosen, read=True)  # set aside as a reader does (`Tally.set_aside_in`)
        return _in_order(inventory_of([document], last=True))


_NEAR_LIMIT = st.builds(
    _nested,
    st.integers(_MAX_DEPTH - 3, _MAX_DEPTH + 1),
    st.sampled_from(["x", {"role": "assistant", "content": "hi"}, {"input_tokens": 3}]),
    st.sampled_from(["list", "dict"]),
).map(lambda value: {"deep": value})
_USAGE = st.fixed_dictionaries({"input_tokens": st.integers(0, 9)}, optional={"x": _RECORD})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_RECORD | _NEAR_LIMIT | _USAGE, max_size=5),
    st.lists(st.booleans(), min_size=5, max_size=5),
)
@example(
    [{"traj": [{"role": "assistant", "content": "a", "tool_calls": [{"id": "c1"}]}]},
     {"traj": [{"role": "assistant", "content": "b", "usage": {"input_tokens": 2}}]}],
    [False, True, False, False, False],
)  # fmt: skip
@example([{"input_tokens": 3, "x": {"role": "assistant", "content": "hi"}}], [True] * 5)
@example([_nested(_MAX_DEPTH - 1, "x", "list")], [True] * 5)
@example([_nested(_MAX_DEPTH, {"input_tokens": 1}, "dict")], [True] * 5)
def test_a_document_walked_with_its_set_aside_elements_kept_finds_what_a_whole_walk_found(
    document: list[Any], aside: list[bool]
) -> None:
    assert _walked_with_some_set_aside(document, aside) == _walked_whole(document)


def test_an_element_set_aside_is_not_walked_again_but_placed_under_the_document() -> None:
    episode = {"traj": [{"role": "assistant", "content": "hi", "tool_calls": [{"id": "c1"}]}]}
    with remembered():
        alone = inventory_of([episode], read=True)
        assert [f.path for f in alone.findings["tool call"].values()] == ["$.traj[].tool_calls[]"]
        episode["traj"][0]["tool_calls"].append({"id": "c2"})  # unseen unless walked again
        whole = inventory_of([[episode, {"other": 1}]], last=True)
    assert [(f.path, f.key) for f in whole.findings["tool call"].values()] == [
        ("$[].traj[].tool_calls[]", "call c1")
    ]
