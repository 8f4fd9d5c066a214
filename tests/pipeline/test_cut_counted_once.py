"""A summary request's piece cut to its room tokenizes the text it cuts once: the whole text's
count is the one the cache holds (issue 54, preparation near the floor), and the cut is the one
counting it again gave."""

from __future__ import annotations

from ctxlab import ApproximateCounter, AssistantMessage, TextBlock, TokenCache, UserMessage
from ctxlab.messages import ToolUseBlock
from ctxlab.pipeline._summary_calls import _cut_texts
from ctxlab.tokens import head_within


class Counting(ApproximateCounter):
    """An approximate counter that records every text it is asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def count_text(self, text: str) -> int:
        self.texts.append(text)
        return super().count_text(text)


LOG = "\n".join(f"line {n}: value {n * 7} of the pasted log" for n in range(400))
SCRIPT = "\n".join(f"print({n})  # a long script the agent wrote" for n in range(300))


def test_a_long_text_is_cut_without_counting_it_again() -> None:
    counter = Counting()
    cache = TokenCache(counter)
    piece = (UserMessage(content=(TextBlock(text=LOG),)),)
    size = cache.block(piece[0].content[0])
    assert counter.texts.count(LOG) == 1  # the cache's own count
    over = size // 2
    (cut,) = _cut_texts(piece, over, cache)
    assert counter.texts.count(LOG) == 1  # not tokenized again to be cut
    keep = max(size - over - 32, 32)
    wanted = head_within(LOG, keep, ApproximateCounter().count_text)
    assert cut.content[0].text == f"{wanted}\n[... cut here for the summary request]"


def test_a_long_argument_is_cut_without_counting_it_again() -> None:
    counter = Counting()
    cache = TokenCache(counter)
    call = ToolUseBlock(id="c1", name="write_file", input={"path": "a.py", "content": SCRIPT})
    piece = (AssistantMessage(content=(call,)),)
    size = cache.block(call)
    over = size // 2
    (cut,) = _cut_texts(piece, over, cache)
    assert counter.texts.count(SCRIPT) == 1  # once, for the cache: not again to be cut
    keep = max(size - over - 32, 32)
    rest = size - ApproximateCounter().count_text(SCRIPT)
    wanted = head_within(SCRIPT, max(keep - rest, 16), ApproximateCounter().count_text)
    assert cut.content[0].input == {
        "path": "a.py",
        "content": f"{wanted}\n[... cut here for the summary request]",
    }
