"""What a request's signature keeps and takes out (`ctxlab.fork._signature`, the module's and
docs/concepts/forks.md's promise): tool-call ids, each run's folder, an offloaded file's hash and
the usage notice's count of tokens are taken out — for any ids (Hypothesis) — and everything
else counts: the System text, the tool names, each message's role and text, a call's tool and
input, a result's text and whether it is an error, the window the notice names."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.fork._signature import signature
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.pipeline._offload import offload_name
from ctxlab.pipeline._stages import usage_notice

FOLDER = "/tmp/forks/b/run-0/workspace"


def _request(
    first: str = "toolu_01",
    second: str = "toolu_02",
    *,
    folder: str = FOLDER,
    tokens: int = 4_321,
    window: int = 200_000,
) -> ModelRequest:
    """Two calls, the second's result offloaded to a file named by its id; a usage notice."""
    offloaded = f"{folder}/.ctxlab/{offload_name(second, b'output')}.txt"
    return ModelRequest(
        "You fix bugs.",
        (
            UserMessage(content="Fix the bug."),
            AssistantMessage(
                content=(
                    TextBlock(text="Reading."),
                    ToolUseBlock(id=first, name="read_file", input={"path": "a.py"}),
                    ToolUseBlock(id=second, name="run_tests", input={}),
                )
            ),
            UserMessage(
                content=(
                    ToolResultBlock(tool_use_id=first, content=f"def f(): ...  # after {second}"),
                    ToolResultBlock(
                        tool_use_id=second, content=f"FAILED; full output in {offloaded}"
                    ),
                    TextBlock(text=usage_notice(tokens, window, 150_000, tool_enabled=False)),
                )
            ),
        ),
        tools=(ToolSchema("read_file"), ToolSchema("run_tests")),
    )


# Ids as providers and importers make them: a prefix and at least eight characters (an id as
# short as "1" is replaced in every number of the text too: ids are replaced wherever they occur).
_IDS = st.builds(
    str.__add__,
    st.sampled_from(["toolu_", "call_", "fc_", "tool-", ""]),
    st.text(
        alphabet=st.characters(codec="ascii", categories=("L", "N"), include_characters="_-:/."),
        min_size=8,
        max_size=40,
    ),
)


@settings(max_examples=60, database=None, deadline=None)
@given(_IDS, _IDS, st.integers(1, 199_999))
def test_ids_folders_hashes_and_the_token_count_are_taken_out(
    first: str, second: str, tokens: int
) -> None:
    if first == second:
        second += "_b"  # two calls with ids of their own (one may hold the other)
    ours = signature(_request(), [FOLDER])
    other = "/home/me/forks/cut-2/run-7/workspace"
    theirs = signature(_request(first, second, folder=other, tokens=tokens), [other])
    assert theirs == ours
    # Read as the promise says: ids numbered in order, in the text that names them too.
    _, _, (_, (_, calls), (_, results)) = ours
    assert [c[:3] for c in calls[1:]] == [
        ("use", "<call 1>", "read_file"),
        ("use", "<call 2>", "run_tests"),
    ]
    assert results[0][2] == "def f(): ...  # after <call 2>"
    assert results[1][2] == "FAILED; full output in <workspace>/.ctxlab/<call 2>-<hash>.txt"


def _edit(request: ModelRequest, place: tuple[int, int], block: object) -> ModelRequest:
    message = request.messages[place[0]]
    content = list(message.content)
    content[place[1]] = block  # type: ignore[call-overload]
    changed = message.model_copy(update={"content": tuple(content)})
    messages = list(request.messages)
    messages[place[0]] = changed
    return dataclasses.replace(request, messages=tuple(messages))


_EDITS: dict[str, Callable[[ModelRequest], ModelRequest]] = {
    "system": lambda r: dataclasses.replace(r, system="You fix bugs fast."),
    "a tool's name": lambda r: dataclasses.replace(
        r, tools=(ToolSchema("read_file"), ToolSchema("run_all_tests"))
    ),
    "a tool dropped": lambda r: dataclasses.replace(r, tools=(ToolSchema("read_file"),)),
    "a message's text": lambda r: _edit(r, (1, 0), TextBlock(text="Reading it.")),
    "a call's tool": lambda r: _edit(
        r, (1, 1), ToolUseBlock(id="toolu_01", name="view_file", input={"path": "a.py"})
    ),
    "a call's input": lambda r: _edit(
        r, (1, 1), ToolUseBlock(id="toolu_01", name="read_file", input={"path": "b.py"})
    ),
    "a result's text": lambda r: _edit(
        r, (2, 0), ToolResultBlock(tool_use_id="toolu_01", content="def g(): ...")
    ),
    "a result an error": lambda r: _edit(
        r,
        (2, 0),
        ToolResultBlock(
            tool_use_id="toolu_01", content="def f(): ...  # after toolu_02", is_error=True
        ),
    ),
    "the window the notice names": lambda r: _request(window=100_000),
    "a role": lambda r: dataclasses.replace(
        r, messages=(r.messages[0], r.messages[1], UserMessage(content="Fix the bug."))
    ),
}


@pytest.mark.parametrize("what", list(_EDITS))
def test_everything_else_counts(what: str) -> None:
    base = _request()
    assert signature(_EDITS[what](base), [FOLDER]) != signature(base, [FOLDER])


def test_a_folder_not_the_runs_own_counts() -> None:
    # Another run's folder in this run's request is what it was shown: it counts.
    elsewhere = signature(_request(folder="/home/me/other"), [FOLDER])
    assert elsewhere != signature(_request(), [FOLDER])
