"""The fast counter counts exactly as tiktoken does — on every text of the corpus, for both
encodings — and batch counting and the store of counts change nothing but the time."""

from __future__ import annotations

import pickle
import sqlite3
from pathlib import Path

import pytest

from ctxlab import ContextConfig, WhatIf
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.tokens import (
    ApproximateCounter,
    CountStore,
    TiktokenCounter,
    TokenCache,
    ToktokCounter,
    default_counter,
    toktok_available,
)
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts

requires_toktok = pytest.mark.skipif(
    not toktok_available(), reason="toktok-rs not installed: pip install 'ctxlab[fast]'"
)


@requires_corpus
@requires_toktok
@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_toktok_counts_every_corpus_text_as_tiktoken_does(encoding: str) -> None:
    texts = list(corpus_texts())
    assert len(texts) > 10_000 and sum(map(len, texts)) > 7_000_000
    reference = TiktokenCounter(encoding)
    expected = [reference.count_text(t) for t in texts]
    fast = ToktokCounter(encoding)
    one_by_one = [fast.count_text(t) for t in texts]
    differing = [i for i, (a, b) in enumerate(zip(expected, one_by_one, strict=True)) if a != b]
    assert not differing, f"{len(differing)} texts differ, the first: {texts[differing[0]][:200]!r}"
    assert fast.count_many(texts) == expected  # the batch path (two threads: over 1 M chars)
    assert reference.count_many(texts) == expected


@requires_toktok
def test_special_token_text_and_odd_text_count_as_plain_text() -> None:
    texts = [
        "",
        "<|endoftext|>",
        "a<|fim_prefix|>b<|endofprompt|>",
        "🧠" * 50,
        "\r\n\t  x",
        "é" * 3,
    ]
    for encoding in ("cl100k_base", "o200k_base"):
        reference = TiktokenCounter(encoding)
        expected = [reference.count_text(t) for t in texts]
        fast = ToktokCounter(encoding)
        assert fast.count_many(texts) == expected
        assert [fast.count_text(t) for t in texts] == expected


@requires_toktok
def test_the_default_counter_is_the_fast_one_and_the_manifest_says_so() -> None:
    assert default_counter().method == "toktok:cl100k_base"
    assert default_counter("o200k_base").method == "toktok:o200k_base"
    what = WhatIf(_transcript(), {"a": ContextConfig()}, context_window=50_000)
    assert what.cache.method == "toktok:cl100k_base"


def test_an_unknown_encoding_is_refused_by_name() -> None:
    with pytest.raises(UsageError, match="unknown encoding 'p50k_base'"):
        ToktokCounter("p50k_base")


def _transcript() -> Transcript:
    return Transcript(name="t", meta={}, system="You fix code.", messages=tuple(_session()))


def _session() -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the parser.")]
    for n in range(12):
        use = ToolUseBlock(id=f"c{n}", name="read", input={"path": f"src/m{n}.py"})
        messages.append(AssistantMessage(content=(TextBlock(text=f"Reading {n}."), use)))
        result = ToolResultBlock(
            tool_use_id=f"c{n}", content=f"def f{n}():\n" + "    x += 1\n" * 40
        )
        messages.append(UserMessage(content=(result,)))
    messages.append(AssistantMessage(content="Done."))
    messages.append(UserMessage(content=(ImageBlock(source={"type": "url", "url": "u"}),)))
    return messages


def test_counting_ahead_gives_the_counts_block_by_block_gives() -> None:
    session = _session()
    one_by_one = TokenCache(TiktokenCounter())
    expected = [one_by_one.message(m) for m in session]
    ahead = TokenCache(TiktokenCounter())
    assert ahead.count_ahead(session) == one_by_one.counted_blocks
    tokenized = ahead.counted_blocks
    assert [ahead.message(m) for m in session] == expected
    assert ahead.counted_blocks == tokenized  # every block was counted ahead
    assert ahead.count_ahead(session) == 0  # and nothing twice


def test_the_store_keeps_counts_across_runs(tmp_path: Path) -> None:
    session = _session()
    path = tmp_path / "counts.sqlite"
    first = TokenCache(TiktokenCounter(), store=CountStore(path))
    plain = TokenCache(TiktokenCounter())
    expected = [plain.message(m) for m in session]
    assert first.count_ahead(session) > 0
    # Another run (a fresh cache, the file opened again) tokenizes nothing and counts the same.
    again = TokenCache(TiktokenCounter(), store=CountStore(path))
    assert again.count_ahead(session) == 0 and again.counted_blocks == 0
    assert [again.message(m) for m in session] == expected
    # Another counter's counts are never read: the approximation counts for itself.
    rough = TokenCache(ApproximateCounter(), store=CountStore(path))
    assert rough.count_ahead(session) > 0
    assert [rough.message(m) for m in session] == [
        TokenCache(ApproximateCounter()).message(m) for m in session
    ]


async def test_a_whatif_with_a_store_gives_the_same_table(tmp_path: Path) -> None:
    session = _transcript()
    plain = WhatIf(session, {"a": ContextConfig()}, context_window=3_000)
    store = CountStore(tmp_path / "c.sqlite")
    cache = TokenCache(TiktokenCounter(), store=store)
    stored = WhatIf(session, {"a": ContextConfig()}, context_window=3_000, counter=cache)
    await plain.run()
    await stored.run()
    # (The plain one counts with the default counter, toktok's when installed: same figures.)
    assert plain.table().drop(columns="replay_ms").equals(stored.table().drop(columns="replay_ms"))
    assert len(store) > 0


def test_a_damaged_or_foreign_store_is_named(tmp_path: Path) -> None:
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"not a database at all" * 100)
    with pytest.raises(UsageError, match=r"junk\.sqlite is not a ctxlab count store"):
        CountStore(junk)
    with pytest.raises(UsageError, match="is a folder"):
        CountStore(tmp_path)
    # A count that is not a whole number from 0 is not trusted: counted again.
    path = tmp_path / "c.sqlite"
    session = _session()
    cache = TokenCache(TiktokenCounter(), store=CountStore(path))
    cache.count_ahead(session)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE counts SET tokens = -5")
    again = TokenCache(TiktokenCounter(), store=CountStore(path))
    assert again.count_ahead(session) == cache.counted_blocks


@pytest.mark.parametrize(
    "kind", [TiktokenCounter, pytest.param(ToktokCounter, marks=requires_toktok)]
)
def test_a_counter_pickles_by_its_encoding_and_counts_alike(kind: type[TiktokenCounter]) -> None:
    # A fork's branch travels to a Dask worker with its counter.
    counter = kind("o200k_base")
    again = pickle.loads(pickle.dumps(counter))
    assert type(again) is kind and again.encoding_name == "o200k_base"
    text = "Ledger totals: apply_discount(amount_cents=1999, percent=10) -> 1799 ✓"
    assert again.count_text(text) == counter.count_text(text) > 0
