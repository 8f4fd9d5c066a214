"""`unplaced` asks for the transcript's inventory only when the file holds a call or reasoning
not set aside, and for its text only when reasoning is not matched by key — and finds what it
found when both were made for every load: the reference below is the code before the change
(`Inventory.missing`, `_matched`, `unplaced`), unchanged but for its names."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io._accounting import _attribute, unplaced
from ctxlab.io._inventory import KINDS, Finding, Inventory, inventory_of
from tests.io.test_inventory_walk import _RECORD


def _old_matched(finding: Finding, keys: set[str], words: str) -> bool:
    if finding.key in keys:
        return True
    if finding.kind == "tool call":
        return finding.key == finding.alias and finding.alias in keys
    return bool(
        (finding.alias and finding.alias in keys)
        or (finding.text and finding.text in words)
        or any(part in words for part in finding.parts)
    )


def _old_missing(held: Inventory, placed: Inventory, kind: str, words: str) -> list[Finding]:
    keys = set(placed.findings[kind])
    keys |= {f.alias for f in placed.findings[kind].values() if f.alias}
    words = "\n".join([words, *(f.text for f in placed.findings[kind].values() if f.text)])
    return [f for f in held.findings[kind].values() if not _old_matched(f, keys, words)]


def _old_unplaced(
    held: Inventory,
    placed: Inventory,
    aside: Mapping[str, Collection[str]],
    accounted: Mapping[str, int],
    words: str,
) -> dict[str, int]:
    out: dict[str, int] = {}
    for kind in KINDS:
        apart = set(aside.get(kind, ()))
        pool = [
            f
            for f in held.findings[kind].values()
            if f.key not in apart and not (f.alias and f.alias in apart)
        ]
        if kind in ("tool call", "reasoning"):
            kept = {f.key for f in _old_missing(held, placed, kind, words)}
            pool = [f for f in pool if f.key in kept]
            _attribute(out, kind, pool, len(pool))
        else:
            _attribute(out, kind, pool, len(pool) - accounted.get(kind, 0))
    return out


_TEXTS = ["a first thought here", "a second thought", "a first thought here a second thought"]
_WORDS = st.sampled_from(["", "x", *_TEXTS])
_CALL = st.fixed_dictionaries(
    {"type": st.just("tool_use"), "name": st.sampled_from(["ls", "cat"]),
     "input": st.fixed_dictionaries({"c": st.sampled_from(["a", "b"])})},
    optional={"id": st.sampled_from(["c1", "c2"])},
)  # fmt: skip
_THOUGHT = st.fixed_dictionaries(
    {"type": st.sampled_from(["reasoning", "thinking"])},
    optional={"text": st.sampled_from(_TEXTS), "encrypted_content": st.sampled_from(["E1" * 40, "E2" * 40]),
              "summary": st.lists(st.fixed_dictionaries({"text": st.sampled_from(_TEXTS)}),
                                  min_size=1, max_size=2)},
)  # fmt: skip
_ITEM = _CALL | _THOUGHT | _RECORD


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_ITEM, max_size=5),
    st.lists(_ITEM, max_size=5),
    st.data(),
    st.lists(_WORDS, max_size=3),
    st.integers(0, 3),
    st.integers(0, 3),
)
def test_unplaced_asking_lazily_finds_what_it_found(
    file: list[Any], transcript: list[Any], data: Any, texts: list[str], usage: int, replies: int
) -> None:
    held, placed = inventory_of(file), inventory_of(transcript)
    words = "\n".join(texts)
    aside: dict[str, list[str]] = {}
    for kind in KINDS:
        names = sorted({k for f in held.findings[kind].values() for k in (f.key, f.alias) if k})
        aside[kind] = data.draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    accounted = {"usage": usage, "reply": replies}
    asked: list[str] = []

    def placed_made() -> Inventory:
        asked.append("placed")
        return placed

    def words_made() -> str:
        asked.append("words")
        return words

    new = unplaced(held, placed_made, aside, accounted, words_made)
    assert new == _old_unplaced(held, placed, aside, accounted, words)
    assert unplaced(held, placed, aside, accounted, words) == new  # (given made, too)
    # Asked only for what was not set aside (calls, then reasoning), the text at most once.
    pools = [
        kind
        for kind in ("tool call", "reasoning")
        if any(
            f.key not in aside[kind] and f.alias not in aside[kind]
            for f in held.findings[kind].values()
        )
    ]
    assert asked.count("placed") == len(pools) and asked.count("words") <= 1


def test_a_file_whose_calls_are_all_set_aside_never_asks_the_transcript() -> None:
    held = inventory_of([{"tool_calls": [{"id": "c1", "name": "ls"}]}])

    def refused() -> Inventory:
        raise AssertionError("asked")

    aside = {"tool call": ["call c1"]}
    assert unplaced(held, refused, aside, {}, refused) == {}  # type: ignore[arg-type]


def test_reasoning_kept_by_its_opaque_form_alone_is_placed_as_before() -> None:
    # Its words are nowhere in the transcript: only its encrypted content (its alias) is.
    held = inventory_of([{"type": "reasoning", "text": _TEXTS[0], "encrypted_content": "E" * 80}])
    placed = inventory_of([{"type": "reasoning", "encrypted_content": "E" * 80}])
    assert unplaced(held, placed, {}, {}, "") == _old_unplaced(held, placed, {}, {}, "") == {}
    assert unplaced(held, Inventory(), {}, {}, "") == {"reasoning at $": 1}
