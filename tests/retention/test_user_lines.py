"""`UserLines`: the user's lines of a growing session read once per message, and the same lines
as reading the whole prefix afresh — for the same sequence growing, another sequence, a shorter
prefix; and a replay's retention is the same with it as measured from scratch."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from ctxlab import ApproximateCounter, ContextConfig, replay
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention import UserLines, _users, compaction_retention, inventory
from tests.helpers import Message


def session(n: int, tag: str = "") -> list[Message]:
    out: list[Message] = [UserMessage(content=f"Fix the parser {tag}bug.\nKeep the API stable.")]
    for i in range(n):
        use = ToolUseBlock(id=f"{tag}c{i}", name="bash", input={"command": f"grep -n err f{i}.py"})
        out.append(AssistantMessage(content=(use,)))
        result = ToolResultBlock(tool_use_id=f"{tag}c{i}", content=f"f{i}.py:3: err\n" * 40)
        out.append(UserMessage(content=(result,)))
        if i % 3 == 1:
            out.append(UserMessage(content=f"{tag}Instruction number {i}: mind the tests."))
    return out


def fresh(messages: Sequence[Message], end: int) -> tuple[tuple[str, ...], tuple[str, ...]]:
    found = inventory([], users=messages[:end])
    return found.of("task"), found.of("instructions")


def test_a_growing_prefix_reads_each_message_once_and_finds_the_same_lines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    messages = session(12)
    ends = (3, 3, 10, 25, len(messages))
    expected = [fresh(messages, end) for end in ends]
    reader = UserLines()
    read: list[Message] = []
    lines = _users._lines
    monkeypatch.setattr(_users, "_lines", lambda m: read.append(m) or lines(m))
    for end, (task, instructions) in zip(ends, expected, strict=True):
        found = reader.upto(list(messages[:end]), end)  # a new list each time, as a replay's
        assert (tuple(found[0]), tuple(dict.fromkeys(found[1]))) == (task, instructions)
    assert len(read) == len(messages)  # each message read once over five calls
    assert reader.task == ["Fix the parser bug.", "Keep the API stable."]
    assert reader.instructions[0] == "Instruction number 1: mind the tests."


def test_another_sequence_or_a_shorter_prefix_starts_over() -> None:
    a, b = session(6, "a-"), session(6, "b-")
    reader = UserLines()
    reader.upto(a, len(a))
    task, _ = reader.upto(b, len(b))  # another session: its own task
    assert task == ["Fix the parser b-bug.", "Keep the API stable."]
    _, instructions = reader.upto(b, 4)  # shorter: read again, not the longer prefix's
    assert instructions == [] and fresh(b, 4)[1] == ()
    # The same first message but another message where the reader stopped: started over.
    edited = [*b[:5], UserMessage(content="b-A different instruction here."), *b[6:]]
    reader.upto(b, 8)
    _, instructions = reader.upto(edited, 8)
    assert "b-A different instruction here." in instructions


async def test_a_replay_grades_each_compaction_as_from_scratch() -> None:
    messages = session(60)
    before = None
    graded = 0
    async for step in replay(
        messages,
        context_window=3_000,
        counter=ApproximateCounter(),
        config=ContextConfig(tool_result_limit=200),
    ):
        if step.compaction is not None:
            assert before is not None and step.compaction.retention is not None
            # The same compaction graded with no reader: every message read afresh.
            again = compaction_retention(messages[: step.index], before, step.state)
            assert again is not None and again.rows() == step.compaction.retention.rows()
            assert again["instructions"].total > 1
            graded += 1
        before = step.state
    assert graded >= 3
