"""The offline summary's lines within the budget (`_handover._fit`): by rank, the most recent
first within a rank, a line too large for what is left skipped — checked against the rule as
written (a key of rank and recency per line) on generated lines, with a control."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._handover import _fit, _Unit


def _by_the_rule(units: list[_Unit], budget: int) -> list[_Unit]:
    chosen, used = [], 0
    for unit in sorted(units, key=lambda u: (u.rank, -u.order)):
        tokens = len(unit.text) + 1
        if used + tokens <= budget:
            chosen.append(unit)
            used += tokens
    return sorted(chosen, key=lambda u: u.order)


def _units(lines: list[tuple[str, int]]) -> list[_Unit]:
    # As `_units` hands them: numbered by position.
    return [_Unit("f", text, rank, order) for order, (text, rank) in enumerate(lines)]


@given(
    st.lists(st.tuples(st.text(max_size=30), st.sampled_from([-1, 1, 2, 4, 5, 8])), max_size=60),
    st.integers(0, 400),
)
def test_the_lines_kept_are_those_of_the_rule(lines: list[tuple[str, int]], budget: int) -> None:
    units = _units(lines)
    assert _fit(units, budget, len) == _by_the_rule(units, budget)


def test_within_a_rank_the_most_recent_goes_first_and_a_large_line_is_skipped() -> None:
    units = _units([("old", 4), ("a much longer line", 4), ("new", 4), ("task", -1)])
    # Budget 14: the task (5), then "new" (4), the long line (19) skipped, then "old" (4).
    kept = [u.text for u in _fit(units, 14, len)]
    assert kept == ["old", "new", "task"]
    # Control: the oldest first would have taken "old" before "new" and left no room for it.
    assert [u.text for u in _fit(units, 9, len)] == ["new", "task"]
