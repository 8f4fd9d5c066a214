"""Task state: todo list receipts and projection, requirements, verification; compaction-proof."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import StateConflict, UsageError
from ctxlab.messages import UserMessage
from ctxlab.models import ScriptedModel, tool_call


def todos(*items: tuple[str, str]) -> dict[str, object]:
    return {"todos": [{"content": c, "status": s} for c, s in items]}


def fetch(page: int) -> str:
    """A long page."""
    return f"page {page}\n" + "lorem ipsum " * 100


def task_material(model: ScriptedModel, index: int) -> str | None:
    for message in model.requests[index].messages:
        if isinstance(message, UserMessage):
            for block in message.content:
                text = getattr(block, "text", "")
                if text.startswith("<TASK_STATE"):
                    return text
    return None


def results(model: ScriptedModel, index: int) -> list[str]:
    return [
        r.text
        for m in model.requests[index].messages
        if isinstance(m, UserMessage)
        for r in m.tool_results
    ]


async def test_todo_write_receipts_projection_and_shortening() -> None:
    script = [
        tool_call("todo_write", todos(("reproduce", "in_progress"), ("fix", "pending"))),
        tool_call("todo_write", todos(("reproduce", "completed"), ("fix", "in_progress"))),
        "done",
    ]
    model = ScriptedModel(script)
    agent = Agent(model=model, counter=ApproximateCounter())
    agent.tasks.enable_list()
    await agent("go")
    assert any(t.name == "todo_write" for t in model.requests[0].tools)
    # The receipt is in the conversation, current and whole: no duplicate projection.
    assert results(model, 1) == ["Todo list updated (revision 1):\n[~] reproduce\n[ ] fix"]
    assert task_material(model, 1) is None
    # A newer receipt shortens the older one in the model's view (the history keeps both).
    assert results(model, 2)[0].startswith("[an earlier todo list, superseded")
    assert results(model, 2)[1] == "Todo list updated (revision 2):\n[x] reproduce\n[~] fix"
    kept = [r.text for m in agent.history if isinstance(m, UserMessage) for r in m.tool_results]
    assert kept[0].startswith("Todo list updated (revision 1)")
    assert [t.status for t in agent.tasks.state.todos] == ["completed", "in_progress"]


async def test_the_todo_list_survives_a_forced_compaction() -> None:
    script = [
        tool_call("todo_write", todos(("read the logs", "in_progress"), ("report", "pending"))),
        *(tool_call("fetch", {"page": i}) for i in range(6)),
        "done",
    ]
    model = ScriptedModel(script, context_window=2_000)
    agent = Agent(model=model, tools=[fetch], counter=ApproximateCounter())
    agent.tasks.enable_list()
    events = [e async for e in agent.stream_events("go")]
    compacted_at = next(
        i
        for i, e in enumerate(e for e in events if e.type == "context_build")
        if any(t.kind == "history_compaction" for t in e.manifest.transforms)
    )
    material = task_material(model, compacted_at)
    assert material is not None  # the receipt was summarized away: rebuilt from state
    assert "[~] read the logs" in material and "[ ] report" in material
    ids = [i.id for i in agent.manifests[compacted_at].items]
    assert "task/state" in ids
    # Manual compaction later: still projected.
    from ctxlab import ContextConfig

    await agent.compress_context(
        ContextConfig(trigger_ratio=0.1, reserve_ratio=0.05, context_buffer_ratio=0.05)
    )
    model.replies.append("again")
    await agent("once more")
    assert "[~] read the logs" in (task_material(model, len(model.requests) - 1) or "")


async def test_invalid_todo_lists_are_error_results() -> None:
    model = ScriptedModel(
        [tool_call("todo_write", {"todos": [{"content": "", "status": "done"}]}), "ok"]
    )
    agent = Agent(model=model, counter=ApproximateCounter())
    agent.tasks.enable_list()
    await agent("go")
    assert results(model, 1)[0].startswith("Invalid todo list")
    assert agent.tasks.state.todos == ()


async def test_requirements_with_revision_checks_and_projection() -> None:
    model = ScriptedModel(
        [tool_call("propose_requirement", {"text": "Keep the CSV header"}), "ok", "ok"]
    )
    agent = Agent(model=model, counter=ApproximateCounter())
    agent.tasks.context(allow_requirement_proposals=True)
    agent.tasks.begin("export-42", "Fix the report export")
    await agent("go")
    assert [r.text for r in agent.tasks.state.requirements] == ["Keep the CSV header"]
    material = task_material(model, 1) or ""
    assert "Objective: Fix the report export" in material and "R1 [proposed]" in material
    stale = agent.tasks.state.revision - 1
    with pytest.raises(StateConflict, match="changed since it was read"):
        agent.tasks.decide_requirement("R1", accept=True, expected_revision=stale)
    agent.tasks.decide_requirement("R1", accept=True, expected_revision=agent.tasks.state.revision)
    with pytest.raises(UsageError, match="no requirement 'R9'"):
        agent.tasks.decide_requirement(
            "R9", accept=True, expected_revision=agent.tasks.state.revision
        )
    await agent("next")
    assert "R1 [confirmed] Keep the CSV header" in (task_material(model, 2) or "")


async def test_verification_results_go_stale_with_the_subject() -> None:
    model = ScriptedModel(["a", "b", "c", "d"])
    agent = Agent(model=model, counter=ApproximateCounter())
    agent.tasks.context(include_verification_results=True)
    agent.tasks.set_subject_version("commit-1")
    agent.tasks.record_verification("unit tests", passed=True, summary="92 passed")
    await agent("go")
    assert "- unit tests: passed 92 passed" in (task_material(model, 0) or "")
    agent.tasks.set_subject_version("commit-2")
    await agent("again")
    assert "unit tests: passed (STALE: checked another version)" in (task_material(model, 1) or "")
    # 000's invalidateSubject: the subject changed, its version is unknown.
    agent.tasks.set_subject_version("commit-3")
    agent.tasks.record_verification("unit tests", passed=True, summary="93 passed")
    await agent("fresh")
    assert "STALE" not in (task_material(model, 2) or "")
    agent.tasks.invalidate_subject()
    assert agent.tasks.state.subject_version is None
    await agent("changed")
    assert "unit tests: passed (STALE" in (task_material(model, 3) or "")


def test_nothing_is_projected_by_default() -> None:
    agent = Agent(model=ScriptedModel([]), counter=ApproximateCounter())
    agent.tasks.begin("scope", "objective")
    assert agent.tasks.project(()) == []  # scope alone is shown only with an extended option
