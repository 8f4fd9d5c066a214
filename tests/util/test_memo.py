"""`Memo`: a value computed once per key and kept, whichever way it is asked (`get` with a
callable of nothing, `keyed` and `many` with one of the key), cleared whole past its limit."""

from __future__ import annotations

from collections.abc import Callable

from ctxlab.util._memo import Memo


def _counting() -> tuple[list[str], Callable[[str], str | None]]:
    asked: list[str] = []

    def compute(key: str) -> str | None:
        asked.append(key)
        return None if key == "none" else key.upper()

    return asked, compute


def test_each_key_is_computed_once_whichever_way_it_is_asked() -> None:
    memo: Memo[str, str | None] = Memo(10)
    asked, compute = _counting()
    assert memo.many(["a", "b", "a"], compute) == ["A", "B", "A"]
    assert memo.keyed("b", compute) == "B"
    assert memo.get("a", lambda: "never") == "A"
    assert memo.keyed("c", compute) == "C"
    assert asked == ["a", "b", "c"]


def test_a_kept_none_is_a_value_not_a_miss() -> None:
    memo: Memo[str, str | None] = Memo(10)
    asked, compute = _counting()
    assert memo.keyed("none", compute) is None
    assert memo.many(["none", "none"], compute) == [None, None]
    assert asked == ["none"]


def test_past_its_limit_the_memo_starts_over() -> None:
    memo: Memo[str, str | None] = Memo(2)
    asked, compute = _counting()
    memo.many(["a", "b", "c"], compute)
    memo.keyed("d", compute)  # 3 kept > 2: cleared, then d
    assert memo._values == {"d": "D"}
    memo.keyed("a", compute)
    assert asked == ["a", "b", "c", "d", "a"]
