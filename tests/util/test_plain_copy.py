"""`plain_copy` copies a census field as `dataclasses.asdict` did before it (the census's
`as_meta`, issue 54 item 4): equal values, of the same types, sharing no dict or list."""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io._census import Census
from ctxlab.util._json import plain_copy

_ATOMS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5))
_PLAIN = st.recursive(
    _ATOMS | st.tuples(st.integers(), st.text(max_size=2)) | st.frozensets(st.integers(), max_size=2),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20,
)  # fmt: skip
_COUNTS = st.dictionaries(st.text(max_size=6), st.integers(0, 10**6), max_size=5)


def _shape(value: Any) -> Any:
    # Equal is not enough: ``1 == 1.0 == True`` — the types must match all the way down.
    if isinstance(value, dict):
        return ("dict", [(_shape(k), _shape(v)) for k, v in value.items()])
    if isinstance(value, frozenset):  # (its order is no part of it: a copy may change it)
        return ("frozenset", sorted(map(_shape, value)))
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_shape(v) for v in value])
    return (type(value).__name__, repr(value))


def _shared(a: Any, b: Any) -> bool:
    # Whether a copy shares a dict or a list with what it copied.
    if isinstance(a, dict | list) and a is b:
        return True
    if isinstance(a, dict):
        return any(_shared(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return any(_shared(x, y) for x, y in zip(a, b, strict=True))
    return False


@settings(max_examples=300, deadline=None)
@given(_PLAIN)
def test_plain_data_is_copied_as_asdict_copied_it(value: Any) -> None:
    @dataclasses.dataclass
    class Holder:
        value: Any

    expected = dataclasses.asdict(Holder(value))["value"]
    copied = plain_copy(value)
    assert _shape(copied) == _shape(expected)
    assert not _shared(copied, value)


@settings(max_examples=100, deadline=None)
@given(
    st.sampled_from(["line", "event"]),
    _COUNTS,
    _COUNTS,
    st.integers(0, 99),
    st.dictionaries(st.sampled_from(["usage", "tool call"]), st.lists(st.text(max_size=8))),
)
def test_a_census_as_meta_is_what_asdict_made(
    unit: str, read: dict[str, int], held: dict[str, int], n: int, keys: dict[str, list[str]]
) -> None:
    census = Census(unit, read, dict(read), {}, held=held, usage_read=n, aside_keys=keys)
    meta = census.as_meta()
    assert _shape(meta) == _shape(dataclasses.asdict(census))
    assert meta == dataclasses.asdict(census) and not _shared(meta["aside_keys"], keys)
    assert Census.from_meta(meta) == census


def test_the_edges_copied_as_asdict_copied_them() -> None:
    # i68-rev: the shapes the review asked after, each as `asdict` copies it — a tuple (its
    # lists copied), a set, a dict's subclass kept as its class, NaN given back, a list held
    # twice copied twice (``asdict`` keeps no memo: the copies share nothing).
    @dataclasses.dataclass
    class Holder:
        value: Any

    inner = [1]
    nan = float("nan")
    for value in (([1], "a"), {1, 2}, OrderedDict(a=[1]), nan, [inner, inner], {"k": (inner,)}):
        expected = dataclasses.asdict(Holder(value))["value"]
        copied = plain_copy(value)
        assert _shape(copied) == _shape(expected) and type(copied) is type(expected)
    assert plain_copy(nan) is nan
    twice = plain_copy([inner, inner])
    assert twice == [[1], [1]] and twice[0] is not twice[1]
    assert all(copy is not inner for copy in twice)
    pair = ([1], "a")
    assert plain_copy(pair) == pair and plain_copy(pair)[0] is not pair[0]
