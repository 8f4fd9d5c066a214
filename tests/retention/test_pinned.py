"""The pinned task and the summary's own text graded apart: ``task`` kept by the pinned copy
is not credited to the summary, so a summary that never states the task shows it."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention import measure_retention
from tests.helpers import Message, session

TASK = "Fix the crash in src/app/models.py.\nKeep the public API unchanged."


def _span() -> tuple[Message, ...]:
    return (
        UserMessage(content=TASK),
        AssistantMessage(
            content=(ToolUseBlock(id="a", name="bash", input={"command": "pytest tests"}),)
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="a", content="1 failed"),)),
    )


def test_the_task_held_by_the_pin_is_not_the_summarys() -> None:
    graded = measure_retention(_span(), "Ran pytest tests.", (), pinned=TASK)
    task = graded["task"]
    assert (task.total, task.kept, task.in_summary, task.in_pinned, task.in_tail) == (2, 2, 0, 2, 0)
    # A summary that restates the task is credited for it, the pin too.
    restated = measure_retention(_span(), TASK, (), pinned=TASK)["task"]
    assert (restated.in_summary, restated.in_pinned) == (2, 2)
    # Without a pin, only what the summary says counts.
    assert measure_retention(_span(), "Ran pytest tests.", ())["task"].kept == 0
    rows = {r["category"]: r for r in graded.rows()}
    assert rows["task"]["in_pinned"] == 2 and rows["task"]["in_summary"] == 0


async def test_a_replay_grades_the_pinned_task_apart_in_every_compaction_and_the_frame() -> None:
    messages = [*session(30, output_chars=1_800, task=TASK), AssistantMessage(content="Done.")]
    what = WhatIf(
        Transcript("t", {}, "", tuple(messages)),
        {"ctxlab": ContextConfig()},
        context_window=6_000,
        counter=ApproximateCounter(),
    )
    await what.run()
    records = [s.compaction.retention for s in what.runs["ctxlab"].steps if s.compaction]
    assert records and all(r is not None for r in records)
    for record in records:
        assert record is not None
        # The offline summary points at the pinned copy: the task is the pin's, not its own.
        assert record["task"].in_pinned == record["task"].total == 2
        assert record["task"].in_summary == 0
    frame = what.retention().set_index("category")
    assert frame.loc["task", "in_pinned"] == 1.0 and frame.loc["task", "in_summary"] == 0.0
    assert frame.loc["task", "kept"] == 1.0
