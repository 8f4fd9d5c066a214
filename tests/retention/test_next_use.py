"""Retention graded by what the recorded agent used next (`ctxlab.retention._next_use`): values
on hand-built sessions, what counts as an item, and the controls (the latest message alone
scores low, the full history scores 1) on generated sessions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.exceptions import UsageError
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    UserMessage,
)
from ctxlab.retention._measure import request_text
from ctxlab.retention._next_use import UsedItem, next_use, next_use_columns, used_items
from tests.helpers import Message, exchange
from tests.hostile import assert_linear
from tests.strategies import SETTINGS


def _run(call_id: str, command: str, output: str) -> list[Message]:
    """A bash call running ``command`` and its result ``output``."""
    return exchange(call_id, "bash", output, command=command)


def _session() -> list[Message]:
    return [
        UserMessage(content="Fix the parser."),
        *_run("c0", "cat src/parse.py", "def parse(): ..."),
        *_run("c1", "cat docs/notes.md", "notes"),
        # The reply after the compaction: it uses both files it read before.
        *_run("c2", "diff src/parse.py docs/notes.md", "no difference"),
    ]


def test_a_compaction_that_drops_one_of_two_paths_scores_half() -> None:
    messages = _session()
    # The request the config built kept the second read only: src/parse.py is gone.
    request = request_text(messages[3:5])
    graded = next_use(messages, 5, request, replies=1)
    assert [i.text for i in graded.items if i.kind == "path"] == [
        "src/parse.py",
        "docs/notes.md",
    ]
    # The command's own item (diff + its argument) appeared nowhere before: fresh.
    assert graded.fresh == (UsedItem("command", "diff src/parse.py"),)
    assert graded.held == (False, True)
    assert graded.share == 0.5
    assert graded.lost == (UsedItem("path", "src/parse.py"),)


def test_items_a_reply_introduces_are_left_out() -> None:
    messages: list[Message] = [
        UserMessage(content="Add a test."),
        *_run("c0", "cat src/app.py", "x = 1"),
        *_run("c1", "cat > tests/test_new_thing.py <<EOF\nEOF\ncat src/app.py", ""),
    ]
    graded = next_use(messages, 3, request_text(messages), replies=1)
    assert UsedItem("path", "tests/test_new_thing.py") in graded.fresh
    # The here-document's body runs nothing; ``cat > file`` is ``cat`` (its redirection is
    # no argument); the new file's name is no identifier of its own.
    assert [i.text for i in graded.items] == ["src/app.py", "cat", "cat src/app.py"]
    assert not any(i.kind == "identifier" for i in (*graded.items, *graded.fresh))
    assert graded.share == 1.0


def test_only_the_next_replies_up_to_the_next_compaction_are_read() -> None:
    messages = [
        UserMessage(content="Look at a.py and b.py and c.py"),
        *_run("c0", "cat a.py", ""),
        *_run("c1", "cat b.py", ""),
        *_run("c2", "cat c.py", ""),
    ]
    request = request_text(messages[:1])  # the task alone: every file named
    one = next_use(messages, 1, request, replies=1)
    assert [i.text for i in one.items if i.kind == "path"] == ["a.py"]
    upto = next_use(messages, 1, request, end=5)  # the next compaction's reply is message 5
    assert [i.text for i in upto.items if i.kind == "path"] == ["a.py", "b.py"]


def test_a_command_is_held_by_its_word_and_argument_across_options() -> None:
    messages: list[Message] = [
        UserMessage(content="go"),
        *_run("c0", "grep -rn --color parse_value src", ""),
        *_run("c1", "grep parse_value src && cd /repo && FOO=1 pytest -x tests/t.py | tail -3", ""),
    ]
    found = [i.text for i in used_items([messages[3]]) if i.kind == "command"]  # type: ignore[list-item]
    assert found == ["grep parse_value", "pytest tests/t.py", "tail"]
    graded = next_use(messages, 3, request_text(messages[:3]), replies=1)
    assert UsedItem("command", "grep parse_value") in graded.items
    assert next_use(messages, 3, "grep src parse_value", replies=1).lost[0] == UsedItem(
        "command", "grep parse_value"
    )


def test_identifiers_and_quoted_errors_count() -> None:
    error = "ValueError: bad literal for parse_value"
    messages: list[Message] = [
        UserMessage(content="go"),
        *_run("c0", "python run.py", f"Traceback\n{error}\n"),
        AssistantMessage(
            content=(TextBlock(text=f"The run says:\n{error}\nso ParserState is wrong."),)
        ),
    ]
    graded = next_use(messages, 3, request_text(messages[:1]), replies=1)
    kinds = {(i.kind, i.text) for i in graded.items}
    assert ("error", error) in kinds
    assert ("identifier", "parse_value") in kinds
    # ParserState appears first in the reply: fresh, not graded.
    assert UsedItem("identifier", "ParserState") in graded.fresh
    assert graded.share == 0.0


def test_columns_average_over_compactions_with_items() -> None:
    messages = _session()
    half = next_use(messages, 5, request_text(messages[3:5]), replies=1)
    whole = next_use(messages, 5, request_text(messages), replies=1)
    empty = next_use(messages, 1, "", replies=1)  # nothing before: no items
    assert empty.share is None
    columns = next_use_columns([half, whole, empty])
    assert columns["next_use_retention"] == 0.75
    assert next_use_columns([]) == {"next_use_retention": None, "next_use_floor": None}


def test_bad_arguments_are_usage_errors() -> None:
    messages = _session()
    with pytest.raises(UsageError, match="index"):
        next_use(messages, 0, "")
    with pytest.raises(UsageError, match="replies"):
        next_use(messages, 5, "", replies=0)


@st.composite
def _sessions(draw: st.DrawFn) -> tuple[list[Message], int]:
    """A session reading distinct files, then replies that re-read some of them."""
    files = draw(
        st.lists(
            st.from_regex(r"src/m[a-z]{3}\.py", fullmatch=True), min_size=3, max_size=8, unique=True
        )
    )
    messages: list[Message] = [UserMessage(content="Fix it.")]
    for n, path in enumerate(files):
        messages += _run(f"c{n}", f"cat {path}", f"contents {n}")
    index = len(messages)
    again = draw(st.lists(st.sampled_from(files), min_size=2, max_size=5))
    for n, path in enumerate(again, start=len(files)):
        messages += _run(f"c{n}", f"wc -l {path}", "1")
    return messages, index


@SETTINGS
@given(_sessions())
def test_controls_on_generated_sessions(case: tuple[list[Message], int]) -> None:
    messages, index = case
    full = next_use(messages, index, request_text(messages[:index]))
    assert full.items and full.share == 1.0
    # The latest message alone (a tool output naming no file) holds none of the paths.
    assert full.floor == 0.0
    nothing = next_use(messages, index, request_text(messages[index - 1 : index]))
    assert nothing.share == 0.0


@pytest.mark.parametrize(
    "piece",
    [
        "'x \"",  # quotes that never close
        "cat <<A\n",  # here-documents that never end
        "grep -a ",  # a word and options, never an argument
        "a_b.c_d/",  # one long path-and-name run
    ],
)
def test_reading_a_hostile_reply_takes_linear_time(piece: str) -> None:
    def make(n: int) -> Callable[[], object]:
        messages: list[Message] = [
            UserMessage(content=piece * n),
            *_run("c0", "true", ""),
            *_run("c1", piece * n, ""),
        ]
        request = request_text(messages[:3])
        return lambda: next_use(messages, 3, request)

    assert_linear(make, 2_000, 5.0)
