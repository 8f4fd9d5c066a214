"""What the grader reads of the kept messages is collapsed part by part (each part's kept for
the next compaction): the same text as collapsing everything at once — on every corpus
session's messages and on made-up parts full of odd white space, and again on a second call."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.io._transcript import load_transcript
from ctxlab.messages import TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention._extract import collapse
from ctxlab.retention._measure import _strings, request_text
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import Message
from tests.strategies import SETTINGS


def _at_once(messages: list[Message], *extra: str) -> str:
    parts = list(extra)
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock | ToolResultBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts.extend(_strings(block.input))
    return collapse(" ".join(parts))


@requires_corpus
def test_the_same_text_on_every_corpus_session() -> None:
    for path in corpus_files():
        messages = list(load_transcript(path).messages)
        for tail in (messages, messages[-12:]):
            expected = _at_once(tail, "extra  words\n")
            assert request_text(tail, "extra  words\n") == expected
            assert request_text(tail, "extra  words\n") == expected  # from what was kept


SPACES = st.sampled_from(["", " ", "  ", "\n", "\t\n ", "a", "b c", "x\u00a0y", "é", "\u2003"])


@SETTINGS
@given(st.lists(st.lists(SPACES, max_size=6).map("".join), max_size=6))
def test_the_same_text_on_odd_white_space(texts: list[str]) -> None:
    messages: list[Message] = [UserMessage(content=(TextBlock(text=t),)) for t in texts if t] or [
        UserMessage(content=(TextBlock(text="-"),))
    ]
    assert request_text(messages, *texts) == _at_once(messages, *texts)
    assert request_text(messages, *texts) == _at_once(messages, *texts)
