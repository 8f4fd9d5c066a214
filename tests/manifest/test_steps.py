"""The step table's row (`step_row`, typed as `StepRow`): one definition of its columns."""

from __future__ import annotations

from ctxlab.manifest import STEP_COLUMNS, StepRow, step_row
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from tests.helpers import prepared


async def test_the_typed_step_row_is_the_step_table() -> None:
    messages = [
        UserMessage(content=(TextBlock(text="fix the failing test in money.py"),)),
        AssistantMessage(content=(TextBlock(text="looking at it now"),)),
        UserMessage(content=(TextBlock(text="thanks"),)),
    ]
    manifest = (await prepared(messages, context_window=8_000)).manifest
    row = step_row(manifest, step=3, call="c", retention=0.5)
    # The TypedDict, the column list and the row name the same columns, the row in order.
    assert list(row) == list(STEP_COLUMNS)
    assert set(StepRow.__required_keys__) == set(STEP_COLUMNS)
    assert (row["step"], row["call"], row["total"]) == (3, "c", manifest.estimated_input_tokens)
    assert row["conversation"] == manifest.totals["conversation"] > 0
    assert (row["retention"], row["usage_input"], row["calibrated"]) == (0.5, None, None)


async def test_the_recorded_compaction_column_names_the_last_of_a_requests_marks() -> None:
    import dataclasses

    from ctxlab.manifest import Transform

    manifest = (await prepared([UserMessage(content="go on")], context_window=8_000)).manifest
    # Two compactions the session recorded before this request: a manual one, then an
    # automatic one; the column shows the later — and one after the session's end says so.
    both = (
        Transform("recorded_compaction", "", "manual", 20_900, None),
        Transform("recorded_compaction", "", "auto", 31_000, 14_000),
    )
    assert (
        step_row(dataclasses.replace(manifest, transforms=both), step=0)["recorded_compaction"]
        == "auto"
    )
    after = (*both[:1], Transform("recorded_compaction", "after", "", 31_000, None))
    assert (
        step_row(dataclasses.replace(manifest, transforms=after), step=0)["recorded_compaction"]
        == "recorded (after)"
    )
    assert step_row(manifest, step=0)["recorded_compaction"] == ""
