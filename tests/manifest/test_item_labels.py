"""A request's items in words (`message_label`, `item_rows`): what a failed tool's result says,
previews of 80 characters, at most three parts a message with the rest counted, and each kind
of change named once on the item it was done to."""

from __future__ import annotations

import dataclasses

from ctxlab.manifest import Transform, item_rows
from ctxlab.manifest._explain import message_label
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from tests.helpers import prepared

NAMES = {"t1": "bash", "t2": "read_file"}


def test_a_failed_tools_result_says_so() -> None:
    failed = UserMessage(
        content=(ToolResultBlock(tool_use_id="t1", content="exit 1", is_error=True),)
    )
    assert message_label(failed, NAMES) == "tool result of bash (error): exit 1"
    fine = UserMessage(content=(ToolResultBlock(tool_use_id="t2", content="x = 1"),))
    assert message_label(fine, NAMES) == "tool result of read_file: x = 1"
    unknown = UserMessage(content=(ToolResultBlock(tool_use_id="t9", content="?"),))
    assert message_label(unknown, NAMES) == "tool result of a tool: ?"


def test_a_preview_is_80_characters_on_one_line() -> None:
    text = "word " * 40  # 200 characters, newlines and runs of spaces flattened
    label = message_label(UserMessage(content=text.replace(" ", "\n  ", 3)), {})
    preview = label.removeprefix("user: ")
    assert len(preview) == 80 and preview.endswith("…") and "\n" not in preview
    assert message_label(UserMessage(content="short   and\nsweet"), {}) == "user: short and sweet"


def test_at_most_three_parts_of_a_message_are_named_and_the_rest_counted() -> None:
    calls = tuple(ToolUseBlock(id=f"c{n}", name="bash", input={"n": n}) for n in range(5))
    label = message_label(AssistantMessage(content=(TextBlock(text="Running."), *calls)), {})
    parts = label.split(" · ")
    assert parts[0] == "assistant: Running."
    assert parts[1:3] == ['tool call bash: {"n":0}', 'tool call bash: {"n":1}']
    assert parts[3] == "+3 more"
    two = message_label(AssistantMessage(content=calls[:2]), {})
    assert "more" not in two and two.count(" · ") == 1


async def test_each_kind_of_change_is_named_once_on_its_item() -> None:
    messages = [
        UserMessage(content="read the file"),
        AssistantMessage(content="ok"),
        UserMessage(content="go"),
    ]
    prep = await prepared(messages, context_window=8_000)
    first = prep.manifest.items[0].id
    twice = (
        Transform("observation_mask", first, "older turn"),
        Transform("observation_mask", first, "older turn again"),
        Transform("tool_result_truncation", first, "", 900, 200),
    )
    manifest = dataclasses.replace(prep.manifest, transforms=twice)
    (row,) = [r for r in item_rows(manifest, prep.request) if r.id == first]
    assert row.badges == ("masked", "truncated")
    assert row.why.count("; ") == 2  # each change's reason given, in order
