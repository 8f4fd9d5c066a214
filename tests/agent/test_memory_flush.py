"""The memory flush on its own (`flush_facts`): what a span leaves in MEMORY.md — its commands
and errors verbatim, each line at most 300 characters, nothing for a span with no facts, the
transform's count — and which task tools a board offers."""

from __future__ import annotations

from pathlib import Path

from ctxlab.agent._memory_flush import HEADER, flush_facts
from ctxlab.agent._taskboard import TaskBoard
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline import SummaryRequest

LONG = "python -m pytest tests/" + "x" * 500


def _request(*messages: UserMessage | AssistantMessage) -> SummaryRequest:
    return SummaryRequest(messages=messages, previous_summary=None, schema={}, prompt="")


def _failed_command() -> SummaryRequest:
    return _request(
        UserMessage(content="fix it"),
        AssistantMessage(content=(ToolUseBlock(id="t1", name="bash", input={"command": LONG}),)),
        UserMessage(
            content=(ToolResultBlock(tool_use_id="t1", content="Error: boom in src/app.py"),)
        ),
    )


async def test_a_spans_facts_are_written_verbatim_and_clipped(tmp_path: Path) -> None:
    done = await flush_facts(tmp_path, _failed_command())
    assert (done.kind, done.detail) == ("memory_flush", "2 facts written")
    lines = (tmp_path / "MEMORY.md").read_text().splitlines()
    assert lines[0] == HEADER
    facts = lines[1:]
    assert len(facts) == 2 and all(line.startswith("- ") for line in facts)
    assert facts[0].startswith("- $ python -m pytest tests/xxx")
    assert len(facts[0]) == len("- ") + 300  # the command clipped to 300 characters
    assert "Error: boom in src/app.py" in facts[1]
    # Flushed again: nothing new.
    again = await flush_facts(tmp_path, _failed_command())
    assert again.detail == "0 facts written"
    assert (tmp_path / "MEMORY.md").read_text().splitlines() == lines


async def test_a_span_without_facts_writes_nothing(tmp_path: Path) -> None:
    chat = _request(UserMessage(content="hello"), AssistantMessage(content="hi, how can I help?"))
    done = await flush_facts(tmp_path, chat)
    assert done.detail == "0 facts written"
    assert not (tmp_path / "MEMORY.md").exists()  # no "- none" lines, no empty section


def test_a_board_offers_only_the_task_tools_turned_on() -> None:
    board = TaskBoard()
    assert board.schemas() == []
    board.todo_enabled = True
    assert [s.name for s in board.schemas()] == ["todo_write"]
    board.options = board.options.model_copy(update={"allow_requirement_proposals": True})
    board.mode_tool_enabled = True
    assert [s.name for s in board.schemas()] == [
        "todo_write",
        "switch_mode",
        "propose_requirement",
    ]
