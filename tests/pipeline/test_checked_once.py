"""`prepare` checks what it is given at every step, cheaply: a tools tuple its memo has checked
is not walked again (a tuple cannot change), while any other tools — a list, a new tuple — are
checked as before, and every other argument still fails with its message."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, UsageError, WorkingState, prepare
from ctxlab.messages import ToolSchema, UserMessage
from ctxlab.pipeline import PreparationMemo

STATE = WorkingState.of([UserMessage(content="hi")])
TOOLS = (ToolSchema(name="read", input_schema={"type": "object"}),)


async def _prepare(memo: PreparationMemo, tools: object, **more: object) -> object:
    return await prepare(
        STATE,
        context_window=10_000,
        counter=ApproximateCounter(),
        memo=memo,
        tools=tools,  # type: ignore[arg-type]
        **more,  # type: ignore[arg-type]
    )


async def test_a_checked_tuple_is_not_walked_again_and_the_same_request_is_made() -> None:
    memo = PreparationMemo()
    first = await _prepare(memo, TOOLS)
    assert memo.tools is TOOLS
    second = await _prepare(memo, TOOLS)
    assert second.request.tools == first.request.tools == TOOLS  # type: ignore[attr-defined]
    assert second.manifest.items == first.manifest.items  # type: ignore[attr-defined]


async def test_other_tools_are_still_checked_with_the_same_memo() -> None:
    memo = PreparationMemo()
    await _prepare(memo, TOOLS)
    # A new tuple holding what is not a tool, then a list: both checked, both refused.
    with pytest.raises(UsageError, match=r"tools must be a list of ToolSchema.*item 1"):
        await _prepare(memo, (*TOOLS, "read"))
    with pytest.raises(UsageError, match=r"tools must be a list of ToolSchema.*item 0"):
        await _prepare(memo, ["read"])
    assert memo.tools is TOOLS  # what failed was never taken as checked


@pytest.mark.parametrize(
    ("argument", "value", "message"),
    [
        ("materials", "AGENTS.md", r"materials must be a Materials or None"),
        ("caller", PreparationMemo(), r"caller must be a CallerInputs or None"),
        ("compaction", True, r"compaction must be a CompactionOrder or None"),
        ("previous", {}, r"previous must be a ContextManifest or None"),
    ],
)
async def test_every_argument_is_still_refused_by_name(
    argument: str, value: object, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        await _prepare(PreparationMemo(), TOOLS, **{argument: value})


async def test_a_class_for_its_instance_is_refused() -> None:
    with pytest.raises(UsageError, match="state must be a WorkingState"):
        await prepare(WorkingState, context_window=10_000, counter=ApproximateCounter())  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="memo must be a PreparationMemo"):
        await _prepare(PreparationMemo, TOOLS)  # type: ignore[arg-type]
