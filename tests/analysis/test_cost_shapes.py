"""A request's shape — its parts in the provider's order, their keys and tokens, and where the
two cache breakpoints sit — is the same whatever order the manifest lists its items in (the
layout's order is taken as it is, C-level; any other order is sorted), with or without the
run's memo of keys; and the leading keys two requests share are found exactly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.analysis._cost import RequestShape, shape_of
from ctxlab.analysis._prompt_cache import common_length as _common_length
from ctxlab.manifest import PLACEMENTS, ManifestItem
from tests.analysis.test_cost_dollars import _manifest
from tests.strategies import SETTINGS


def _reference(
    items: list[ManifestItem],
) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
    # The definition, written plainly: the unrecorded prefix, tools, then System, then the rest
    # in manifest order; a breakpoint after the fixed parts and after the last part that is not
    # per-request.
    fixed = [i for p in FIXED for i in items if i.placement == p]
    ordered = fixed + [i for i in items if i.placement not in FIXED]
    stable = [n for n, i in enumerate(ordered) if i.placement not in ("transient", "references")]
    points = {len(fixed) - 1, stable[-1] if stable else -1} - {-1}
    keys = tuple(f"{i.id}#{i.content_hash}" for i in ordered)
    return keys, tuple(i.tokens for i in ordered), tuple(sorted(points))


FIXED = ("unrecorded", "tools", "system")
ITEMS = st.lists(st.tuples(st.sampled_from(PLACEMENTS), st.integers(0, 500)), max_size=12)


@SETTINGS
@given(ITEMS, st.booleans())
def test_a_shape_is_its_definition_in_any_item_order(
    drawn: list[tuple[str, int]], laid: bool
) -> None:
    items = [
        ManifestItem(f"{placement}/{n}", "runtime", placement, tokens, f"h{n}")  # type: ignore[arg-type]
        for n, (placement, tokens) in enumerate(drawn)
    ]
    if laid:  # as the layout writes them: the unrecorded part, System and tools first
        items.sort(key=lambda i: i.placement not in FIXED)
    manifest = _manifest(items)
    keys, tokens, points = _reference(items)
    for shape in (shape_of(manifest, 7), shape_of(manifest, 7, {}), shape_of(manifest, 7, {})):
        assert isinstance(shape, RequestShape)
        assert (tuple(shape.keys), tuple(shape.tokens), shape.breakpoints) == (keys, tokens, points)
        assert shape.fixed == sum(i.placement in FIXED for i in items)
        assert shape.output_tokens == 7


def test_the_memo_of_keys_is_read_by_identity() -> None:
    item = ManifestItem("message/a", "message", "conversation", 5, "h1")
    memo: dict[int, str] = {}
    first = shape_of(_manifest([item]), 0, memo)
    assert memo == {id(item): "message/a#h1"}
    assert shape_of(_manifest([item]), 0, memo).keys[0] is first.keys[0]


@SETTINGS
@given(st.lists(st.sampled_from("abc"), max_size=9), st.lists(st.sampled_from("abc"), max_size=9))
def test_the_shared_leading_keys_are_counted_exactly(a: list[str], b: list[str]) -> None:
    shared = next(
        (n for n, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    assert _common_length(tuple(a), tuple(b)) == shared
    assert _common_length(a, tuple(b)) == shared  # a list against a tuple: by value
