"""`TokenCache`'s bookkeeping at the values it reports: each text, block and message tokenized
once and its count served after (``hits`` one per answer from the cache, ``counted_blocks`` the
blocks tokenized, summed across batches), a batch through the counter's ``count_many`` when it
has one, a store that fails named in ``store_problem`` and then left alone, and memory bounded
(past the bound a table starts again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from ctxlab.exceptions import CountStoreError
from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.tokens import (
    MESSAGE_OVERHEAD,
    PDF_PAGE_TOKENS,
    TOOL_BLOCK_OVERHEAD,
    TokenCache,
    _cache,
)
from ctxlab.tokens._parts import block_parts
from tests.helpers import CountingCounter
from tests.tokens.test_counting_promises import _pdf


def test_a_text_is_tokenized_once_and_each_answer_after_is_a_hit() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    assert (cache.hits, cache.counted_blocks, cache.store_problem) == (0, 0, None)
    assert cache.text("abcdefgh") == 2
    assert cache.text("abcd") == 1  # another text, its own count
    assert cache.text("abcdefgh") == 2
    assert cache.text("abcdefgh") == 2
    assert counter.calls == ["abcdefgh", "abcd"]
    assert cache.hits == 2


def test_a_block_and_a_message_are_counted_once() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    block = TextBlock(text="x" * 40)
    assert cache.block(block) == 10
    assert cache.block(TextBlock(text="x" * 40)) == 10  # the same content: a hit
    assert (cache.hits, cache.counted_blocks) == (1, 1)
    message = UserMessage(content="y" * 80)
    assert cache.message(message) == MESSAGE_OVERHEAD + 20
    assert cache.message(message) == MESSAGE_OVERHEAD + 20
    assert cache.messages([message, message]) == 2 * (MESSAGE_OVERHEAD + 20)
    assert cache.hits == 4 and cache.counted_blocks == 2
    assert counter.calls == ["x" * 40, "y" * 80]


def test_counting_ahead_skips_what_is_counted_and_sums_across_batches() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    first = UserMessage(content="one " * 10)
    cache.block(first.content[0])
    assert cache.count_ahead([first]) == 0  # its one block already counted
    reply = AssistantMessage(content=(TextBlock(text="two " * 10), TextBlock(text="two " * 10)))
    assert cache.count_ahead([reply]) == 1  # one content twice: once
    assert cache.counted_blocks == 2
    assert cache.count_ahead([UserMessage(content="three")]) == 1
    assert cache.counted_blocks == 3
    assert cache.message(reply) == MESSAGE_OVERHEAD + 20


class Batching(CountingCounter):
    """Counts a batch in one call (as the fast counter does)."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def count_many(self, texts: Sequence[str]) -> list[int]:
        self.batches.append(list(texts))
        return [len(t) for t in texts]  # not chars/4: the batch's counts are the ones kept


def test_a_batch_goes_through_count_many() -> None:
    counter = Batching()
    cache = TokenCache(counter)
    message = UserMessage(content="abcdefgh")
    assert cache.count_ahead([message]) == 1
    assert counter.batches == [["abcdefgh"]] and counter.calls == []
    assert cache.message(message) == MESSAGE_OVERHEAD + 8


class FailingStore:
    """A store whose reads or writes fail as a damaged or full one does."""

    def __init__(self, *, reads: bool, writes: bool) -> None:
        self.reads, self.writes, self.puts = reads, writes, 0

    def get_many(self, namespace: str, blocks: Sequence[str]) -> dict[str, int]:
        if not self.reads:
            raise CountStoreError("the count store is damaged: read it again")
        return {}

    def put_many(self, namespace: str, counts: Mapping[str, int]) -> None:
        self.puts += 1
        if not self.writes:
            raise CountStoreError("the count store cannot be written: the disk is full")


def test_a_store_that_cannot_be_read_is_named_and_left_aside() -> None:
    store = FailingStore(reads=False, writes=True)
    cache = TokenCache(CountingCounter(), store=store)  # type: ignore[arg-type]
    assert cache.count_ahead([UserMessage(content="abcd")]) == 1
    assert cache.store_problem == "the count store is damaged: read it again"
    assert cache.store is None and store.puts == 0


def test_a_store_that_cannot_be_written_is_named_and_not_written_again() -> None:
    store = FailingStore(reads=True, writes=False)
    cache = TokenCache(CountingCounter(), store=store)  # type: ignore[arg-type]
    assert cache.count_ahead([UserMessage(content="abcd")]) == 1
    assert cache.store_problem == "the count store cannot be written: the disk is full"
    assert cache.count_ahead([UserMessage(content="efgh")]) == 1
    assert store.puts == 1  # the second batch is kept in memory, not tried again
    assert cache.store is store  # still read


def test_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_cache, "_MAX_ENTRIES", 3)
    cache = TokenCache(CountingCounter())
    for text in ("a", "b", "c"):
        cache.text(text)
    assert len(cache._texts) == 3
    cache.text("d")  # past the bound: the table starts again
    assert list(cache._texts) == ["d"]


def test_only_a_base64_pdf_is_read_for_pages() -> None:
    # A URL source carrying data of its own is still one page: only base64 data is decoded.
    source = {"type": "url", "url": "https://x/a.pdf", "data": _pdf(3)}
    assert block_parts(DocumentBlock(source=source)) == (PDF_PAGE_TOKENS, ())
    based = {"type": "base64", "media_type": "application/pdf", "data": _pdf(3)}
    assert block_parts(DocumentBlock(source=based)) == (3 * PDF_PAGE_TOKENS, ())


def test_a_block_of_no_known_kind_is_named() -> None:
    with pytest.raises(TypeError) as caught:
        block_parts(object())
    assert str(caught.value) == "cannot count tokens of object"


def test_a_block_of_several_texts_counted_ahead_is_not_counted_again() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    use = ToolUseBlock(id="c1", name="bash", input={"command": "ls -la"})
    message = AssistantMessage(content=(use,))
    assert cache.count_ahead([message]) == 1
    assert cache.counted_blocks == 1 and counter.calls == ["bash", use.input_json]
    expected = TOOL_BLOCK_OVERHEAD + sum(counter.count_text(t) for t in ("bash", use.input_json))
    assert cache.block(use) == expected
    assert cache.message(message) == MESSAGE_OVERHEAD + expected
