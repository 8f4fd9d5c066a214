"""`Tally.by_reason` (the transcript's ``meta["skipped"]``) read from the one count of records
skipped and parts left out: the values and the key order it had when every count added to it
beside `Tally.skipped` or `Tally.left_out`."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.io._build import ConversationBuilder
from ctxlab.io._census import _add
from ctxlab.io._tally import Tally
from tests.strategies import SETTINGS


class _Eager(Tally):
    # The tally as it was: ``by_reason`` a dict of its own, added to by every count.
    def __init__(self, unit: str) -> None:
        super().__init__(unit)
        self.eager: dict[str, int] = {}

    def _count(self, counts: dict[str, int], reason: str, count: int) -> None:
        super()._count(counts, reason, count)
        _add(self.eager, reason, count)


_RAW = {"message": {"usage": {"input_tokens": 3, "output_tokens": 4}}}
"""A part as the file holds it: what the inventory finds in it is set aside with it."""

reasons = st.sampled_from(["thought", "progress", "empty message", "image"])
counts = st.integers(-1, 3)
steps = st.one_of(
    st.tuples(
        st.just("record"), st.sampled_from(["line", "event"]), counts, st.none() | st.just(_RAW)
    ),
    st.tuples(st.just("use")),
    st.tuples(st.just("skip"), reasons, counts),
    st.tuples(st.just("settle"), reasons),
    st.tuples(st.just("leave_out"), reasons, counts, st.none() | st.just(_RAW)),
    st.tuples(st.just("close")),
)


@SETTINGS
@given(st.lists(steps, max_size=30))
def test_by_reason_is_what_every_count_added_in_the_order_it_added_it(
    script: list[tuple[Any, ...]],
) -> None:
    tally = _Eager("line")
    for name, *args in script:
        getattr(tally, name)(*args)
    # Items, not dicts: ``==`` of dicts does not see the order meta["skipped"] is saved in.
    assert list(tally.by_reason.items()) == list(tally.eager.items())
    summed = {r: tally.skipped.get(r, 0) + tally.left_out.get(r, 0) for r in tally.eager}
    assert tally.by_reason == summed


def test_a_reason_left_out_before_another_is_skipped_comes_first_in_meta_skipped() -> None:
    builder = ConversationBuilder("t", unit="line")
    builder.record("assistant")
    builder.add("assistant", [{"type": "text", "text": "hi"}])
    builder.leave_out("thought")
    builder.record("progress", 2)
    builder.skip("progress line")
    builder.record("assistant")
    builder.add("assistant", [{"type": "text", "text": "more"}])
    builder.leave_out("thought", 2)
    _, notes, _, _ = builder.finish()
    assert list(notes["skipped"].items()) == [("thought", 3), ("progress line", 2)]
    assert notes["census"]["skipped"] == {"progress line": 2}
    assert notes["census"]["left_out"] == {"thought": 3}


def test_a_skipped_record_sets_aside_what_its_parts_left_out_hold_for_their_reason() -> None:
    # The record has no raw value of its own: what is set aside is what its parts held, once,
    # for the reason it is skipped for (the first part's), the parts not counted apart.
    builder = ConversationBuilder("t", unit="message")
    builder.record("assistant")
    builder.leave_out("thought", raw=_RAW)
    builder.leave_out("image", 2)
    builder.settle("empty message")
    _, notes, _, _ = builder.finish()
    assert notes["skipped"] == {"thought": 1}
    assert notes["census"]["left_out"] == {}
    assert notes["census"]["set_aside"] == {"usage: thought": 1}
