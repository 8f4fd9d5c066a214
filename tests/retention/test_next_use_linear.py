"""Next-use grading made linear (issue 54): the text before each compaction is no longer rebuilt
and searched per compaction (`ctxlab.retention._before`), and every grade equals the one the
rebuilt text gives — checked against that grader, kept here as the oracle, on generated
sessions of hostile commands (options, quotes, arguments that start like options, here-documents,
paths and names cut by the prefix's end), with a control that must differ; and the time to
grade every compaction of a session grows linearly with its length."""

from __future__ import annotations

import re
from collections.abc import Sequence

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention import _before
from ctxlab.retention._measure import holds, request_text
from ctxlab.retention._next_use import NextUse, UsedItem, command_pattern, next_use, used_items
from tests.helpers import Message
from tests.hostile import assert_linear
from tests.strategies import SETTINGS

# Pieces that meet at the edges the prefix test must get right: a word cut at a message's
# end, an option that could be an argument, quotes, separators, paths by their last parts.
WORDS = [
    "grep", "-n", "-rn", "--x", "-", "'-n'", "parse_value", "parse_values", "'parse_value'",
    '"parse value"', "src/a.py", "/repo/src/a.py", "a.py", "cat", "&&", "|", ";", "FOO=1",
    "pytest", "tests/t.py", "<<EOF", "EOF", "\n", "\t", "'", '"', "(", ")", "é", "x.y.z",
    "ParserState", "ValueError: bad", "cd", "2>&1", ">", "out.txt", "./a.py", "-x=(grep",
]  # fmt: skip
texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
words = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map("".join)


def _held(text: str, item: UsedItem) -> bool:
    # The grader before issue 54, on a text built for the question (the oracle).
    if item.kind != "command":
        return holds(text, item.text, path=item.kind == "path")
    first, _, argument = item.text.partition(" ")
    if not argument:
        return holds(text, first)
    pattern = command_pattern(first, argument)
    return text.find(first) != -1 and re.search(pattern, text) is not None


def rebuilt(
    messages: Sequence[Message],
    index: int,
    request: str,
    end: int | None,
    system: str,
    replies: int,
) -> NextUse:
    """`next_use` as it was: the text before the compaction built and searched for it."""
    following = [m for m in messages[index:end] if isinstance(m, AssistantMessage)][:replies]
    before = request_text(messages[:index], system)
    graded = [i for i in used_items(following) if _held(before, i)]
    fresh = [i for i in used_items(following) if not _held(before, i)]
    latest = request_text(messages[index - 1 : index], system)
    floor = sum(_held(latest, i) for i in graded) / len(graded) if graded else None
    held = tuple(_held(request, i) for i in graded)
    return NextUse(0, tuple(graded), held, tuple(fresh), floor)


@st.composite
def sessions(draw: st.DrawFn) -> tuple[Message, ...]:
    messages: list[Message] = [UserMessage(content=draw(texts) or "go")]
    for n in range(draw(st.integers(1, 7))):
        blocks: list[TextBlock | ToolUseBlock] = []
        if draw(st.booleans()):
            blocks.append(TextBlock(text=draw(texts) or "."))
        command = draw(st.lists(words, min_size=1, max_size=6).map(" ".join))
        blocks.append(ToolUseBlock(id=f"c{n}", name="bash", input={"command": command}))
        messages.append(AssistantMessage(content=tuple(blocks)))
        result = ToolResultBlock(tool_use_id=f"c{n}", content=draw(texts))
        messages.append(UserMessage(content=(result,)))
    return tuple(messages)


@SETTINGS
@given(sessions(), texts, texts, st.integers(1, 5), st.data())
def test_every_grade_equals_the_text_rebuilt_before_each_compaction(
    messages: tuple[Message, ...], request: str, system: str, replies: int, data: st.DataObject
) -> None:
    replies_at = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    for index in replies_at:
        end = data.draw(st.none() | st.integers(index, len(messages)))
        want = rebuilt(messages, index, request, end, system, replies)
        for given_messages in (messages, list(messages)):  # kept (a tuple) or built per call
            got = next_use(given_messages, index, request, end=end, system=system, replies=replies)
            assert (got.items, got.held, got.fresh, got.floor) == (
                want.items,
                want.held,
                want.fresh,
                want.floor,
            )


def test_the_control_an_item_seen_only_after_the_compaction_is_fresh() -> None:
    # The whole recording's text holds what the reply itself says: graded against it, every
    # item would count as seen before. The prefix must end where the request does.
    messages = (
        UserMessage(content="go"),
        AssistantMessage(content=(ToolUseBlock(id="c0", name="bash", input={"command": "ls"}),)),
        UserMessage(content=(ToolResultBlock(tool_use_id="c0", content="a.py"),)),
        AssistantMessage(
            content=(ToolUseBlock(id="c1", name="bash", input={"command": "grep -n parse b.py"}),)
        ),
    )
    graded = next_use(messages, 3, "", replies=1)
    assert graded.items == ()
    assert graded.fresh == (UsedItem("path", "b.py"), UsedItem("command", "grep parse"))
    whole = rebuilt(messages, 3, "", None, "", 1)
    assert whole.fresh == graded.fresh
    control = request_text(messages)  # the oracle on the whole text: the items counted seen
    assert all(_held(control, i) for i in graded.fresh)


def _long(turns: int) -> tuple[Message, ...]:
    messages: list[Message] = [UserMessage(content="Fix the parser in src/parse.py.")]
    for n in range(turns):
        command = f"grep -n value_{n} src/mod{n % 7}.py && cat src/new_{n}.py"
        call = ToolUseBlock(id=f"c{n}", name="bash", input={"command": command})
        messages.append(AssistantMessage(content=(TextBlock(text=f"Step {n}."), call)))
        output = "\n".join(f"src/mod{n % 7}.py:{i}: value_{n}_{i} = {i}" for i in range(60))
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=output),))
        )
    return tuple(messages)


def test_grading_every_compaction_is_linear_in_the_session() -> None:
    def make(turns: int) -> object:
        messages = _long(turns)

        def grade() -> None:
            _before._kept.clear()  # cold: the recording's text built in the timing
            for index in range(1, len(messages), 2):
                next_use(messages, index, "", end=index + 2)

        return grade

    assert_linear(make, 150, 6.0)
