from __future__ import annotations

import gzip
from importlib import resources

import pytest

from ctxlab import ApproximateCounter, TiktokenCounter, TokenCache, UserMessage
from ctxlab.exceptions import TokenizerDataError, UsageError
from ctxlab.messages import ToolResultBlock
from ctxlab.tokens import MESSAGE_OVERHEAD, _tiktoken
from tests.helpers import CountingCounter


def test_tiktoken_counts_known_strings_offline(tiktoken_counter: TiktokenCounter) -> None:
    # Reference values of the real cl100k_base / o200k_base encodings.
    assert tiktoken_counter.count_text("hello world") == 2
    assert tiktoken_counter.count_text("") == 0
    assert tiktoken_counter.method == "tiktoken:cl100k_base"
    assert tiktoken_counter.exact is False
    o200k = TiktokenCounter("o200k_base")
    assert o200k.count_text("hello world") == 2
    text = "The quick brown fox jumps over the lazy dog. " * 20
    assert tiktoken_counter.count_many([text, "hi"]) == [
        tiktoken_counter.count_text(text),
        1,
    ]
    count = o200k.count("tokenization")
    assert (count.method, count.exact) == ("tiktoken:o200k_base", False)


def test_unknown_encoding_names_the_choices() -> None:
    with pytest.raises(UsageError, match="cl100k_base"):
        TiktokenCounter("p50k_base")


def test_corrupt_bpe_data_fails_checksum(monkeypatch: pytest.MonkeyPatch) -> None:
    real = (resources.files("ctxlab.tokens") / "data" / "cl100k_base.tiktoken.gz").read_bytes()
    damaged = gzip.compress(gzip.decompress(real)[:-10] + b"AAAA 1\n")

    class Fake:
        def __truediv__(self, _: str) -> Fake:
            return self

        def read_bytes(self) -> bytes:
            return damaged

    monkeypatch.setattr(_tiktoken.resources, "files", lambda _: Fake())
    with pytest.raises(TokenizerDataError, match="checksum"):
        _tiktoken._read_ranks("cl100k_base", _tiktoken.ENCODINGS["cl100k_base"])


def test_approximate_counter() -> None:
    counter = ApproximateCounter()
    assert counter.count_text("abcdefghi") == 3
    assert counter.method == "approximate:chars/4"
    with pytest.raises(ValueError, match="positive"):
        ApproximateCounter(0)


def test_cache_counts_only_new_blocks() -> None:
    counter = CountingCounter()
    cache = TokenCache(counter)
    first = UserMessage(content="first message")
    second = UserMessage(content=(ToolResultBlock(tool_use_id="t", content="x" * 400),))
    # Counted once, then looked up: the same total as the counter gives, with no new counting.
    total = cache.messages([first, second])
    assert total == TokenCache(ApproximateCounter()).messages([first, second])  # a cold cache
    assert cache.message(first) == MESSAGE_OVERHEAD + ApproximateCounter().count_text(
        "first message"
    )
    counted = len(counter.calls)
    assert cache.messages([first, second]) == total and len(counter.calls) == counted
    assert cache.counted_blocks == 2
    calls = len(counter.calls)
    third = UserMessage(content="third")
    cache.messages([first, second, third])
    assert cache.counted_blocks == 3
    assert counter.calls[calls:] == ["third"]
    # An equal message built anew hits the cache too (keyed by content, not identity).
    cache.message(UserMessage(content="third"))
    assert cache.counted_blocks == 3
