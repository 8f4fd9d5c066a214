"""The pinned digests' one rule for fields added after the pins (`pinned_fields`): left out
while None, as the pins saw them; said once they hold something, so a value there still
changes a digest."""

from __future__ import annotations

from ctxlab.pipeline import CompactionRecord
from tests.analysis.pinned_fields import pinned_fields, pinned_repr

PLAIN = CompactionRecord("summary", 900, 300, 12, 1)


def test_an_added_field_is_left_out_while_none() -> None:
    assert pinned_repr(PLAIN) == (
        "CompactionRecord(method='summary', tokens_before=900, tokens_after=300, "
        "messages_compacted=12, attempts=1, errors=(), retention=None)"
    )
    names = [name for name, _ in pinned_fields(PLAIN, without=frozenset({"retention"}))]
    expected = ["method", "tokens_before", "tokens_after", "messages_compacted", "attempts"]
    assert names == [*expected, "errors"]


def test_the_control_an_added_field_that_holds_something_is_said() -> None:
    asked = CompactionRecord("summary", 900, 300, 12, 1, asked="idle")
    assert pinned_repr(asked) == repr(asked)
    assert ("asked", "idle") in pinned_fields(asked)
