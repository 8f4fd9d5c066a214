"""What a compaction on demand leaves in the request: the summary alone in place of what it
summarizes, then what arrived — the documented shape (Anthropic's compaction on demand: the
returned, signed ``compaction`` block is sent first "in place of the messages it summarizes";
nothing beside it). No task is pinned beside the summary, as ctxlab's own compactions pin the
user's first message: at a new task that would be the old task, and the application has no
place for it in the documented request. The control: a threshold compaction of the same
conversation keeps its pinned task."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.analysis import replay
from ctxlab.pipeline._pinned_task import TASK_HEADING
from tests.analysis.test_compaction_on_demand import TASKS, config, steps, tasks


async def test_an_ask_pins_no_task_beside_the_summary() -> None:
    run = await steps(tasks(), config(at_task=True))
    asked = [s for s in run if s.compaction is not None]
    assert [s.asked for s in asked] == ["task", "task"]
    for step in asked:
        summary = step.state.summary
        assert summary is not None
        assert summary.task == ""
        assert TASK_HEADING not in summary.text
        # What follows it is what arrived: the new task's prompt.
        assert [m.role for m in step.state.conversation] == ["user"]


async def test_the_control_a_threshold_compaction_keeps_the_task_pinned() -> None:
    transcript = tasks(8)
    # The same conversation at a small window: the trigger line compacts, no rule asks.
    pinned = [
        s.state.summary
        async for s in replay(
            transcript.messages,
            context_window=8_000,
            counter=ApproximateCounter(),
            config=ContextConfig(),
            system=transcript.system,
        )
        if s.compaction is not None and s.state.summary is not None
    ]
    assert pinned
    assert all(s.task == TASKS[0] and TASK_HEADING + TASKS[0] in s.text for s in pinned)
