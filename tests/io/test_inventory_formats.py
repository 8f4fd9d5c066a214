"""The inventory catches a reader's loss on every format: a fixture of each format is loaded
with its reader's handling of one thing taken away — one tool call, one reasoning block, one
usage report, one reply dropped silently on its way into the transcript — and the census must
then say that much more is unaccounted, of that kind. (The control is the untouched load, which
`test_contracts` holds to a whole census.)"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io import FORMATS, Census
from ctxlab.io._build import ConversationBuilder
from tests.io.contracts import contract
from tests.strategies import SETTINGS

# Markdown histories hold no JSON to take an inventory of; ctxlab's own file is read without a
# builder (its messages are its records).
_NOT_BUILT = {"aider", "specstory", "ctxlab"}


def _cases() -> list[tuple[str, Any]]:
    found = []
    folder = Path(tempfile.mkdtemp(prefix="ctxlab-inventory-"))  # for cases written on the spot
    for format in FORMATS:
        if format not in _NOT_BUILT:
            found += [(format, case.made(folder)) for case in contract(format) or ()]
    return found


CASE_LIST = _cases()

_BLOCKS = {"tool call": ("tool_use",), "reasoning": ("thinking", "redacted_thinking")}


@contextmanager
def _losing(kind: str, nth: int) -> Iterator[None]:
    """Every builder of the load silently loses the ``nth`` thing of ``kind`` it is given."""
    finish = ConversationBuilder.finish
    seen = {"n": 0}

    def lose(self: ConversationBuilder) -> Any:
        if kind in _BLOCKS:
            for turn in self.turns:
                for block in list(turn["content"]):
                    if block.get("type") in _BLOCKS[kind]:
                        if seen["n"] == nth:
                            turn["content"].remove(block)
                        seen["n"] += 1
        elif kind == "usage" and self.usage:
            index = sorted(self.usage)[nth % len(self.usage)]
            del self.usage[index]
            self.tally.usage_read -= 1  # as if the reader had never read it
        elif kind == "reply":
            replies = [i for i, t in enumerate(self.turns) if t["role"] == "assistant"]
            if replies:
                index = replies[nth % len(replies)]
                self.turns[index]["content"] = [
                    {"type": "text", "text": "(lost)"}
                ]  # its calls, words and reasoning gone: the reply placed is another
                self.turns[index]["role"] = "user"
                self.usage.pop(index, None)
        return finish(self)

    with mock.patch.object(ConversationBuilder, "finish", lose):
        yield


def _unplaced(load: Callable[[], Any], kind: str) -> tuple[int, Census]:
    census = load().census
    assert census is not None
    return census.unplaced().get(kind, 0), census


@SETTINGS
@given(
    st.sampled_from(CASE_LIST),
    st.sampled_from(["tool call", "reasoning", "usage", "reply"]),
    st.integers(0, 40),
)
def test_a_reader_that_loses_one_thing_leaves_it_unaccounted(
    case: tuple[str, Any], kind: str, nth: int
) -> None:
    format, source = case
    before, census = _unplaced(lambda: load(source, format=format), kind)
    aside = sum(n for k, n in census.set_aside.items() if k.startswith(f"{kind}: "))
    # Only what the reader places can be lost: the file must hold more than it sets aside.
    assume(census.held.get(kind, 0) > aside)
    if kind in _BLOCKS:
        placed = sum(census.blocks.get(b, 0) for b in _BLOCKS[kind])
        assume(nth < placed)
    elif kind == "usage":
        # A counted kind: a loss shows when the file's count covers what the reader placed (a
        # format whose calls are items of their own holds more replies than the file says).
        assume(0 < census.usage_read <= census.held.get(kind, 0) - aside)
    else:
        assume(1 < census.replies <= census.held.get(kind, 0) - aside)
    with _losing(kind, nth):
        after, lost = _unplaced(lambda: load(source, format=format), kind)
    assert after > before, (format, str(source)[:80], kind, lost.unaccounted)


@pytest.mark.parametrize("kind", ["tool call", "reasoning", "usage", "reply"])
def test_every_kind_is_held_by_some_format(kind: str) -> None:
    # The property above is not vacuous: for each kind, fixtures hold some the readers place.
    held = 0
    for format, source in CASE_LIST:
        census = load(source, format=format).census
        assert census is not None
        held += census.held.get(kind, 0)
    assert held >= 3, kind
