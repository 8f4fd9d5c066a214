"""The counting rules and the count store, at what they promise: the store reads every batch of a
large session (SQLite takes 500 keys a statement); its namespace carries the counting rules, so
a count made under other rules is never reused; redacted thinking, base64 PDFs (at least a page)
and images inside tool results count as documented; `head_within` cuts at a line end only near
the cut."""

from __future__ import annotations

import base64
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab.messages import (
    AssistantMessage,
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    UserMessage,
)
from ctxlab.tokens import (
    IMAGE_TOKENS,
    MESSAGE_OVERHEAD,
    PDF_PAGE_TOKENS,
    TOOL_BLOCK_OVERHEAD,
    ApproximateCounter,
    CountStore,
    TokenCache,
)
from ctxlab.tokens._head import head_within
from tests.helpers import CountingCounter


def _session(blocks: int) -> list[UserMessage]:
    """``blocks`` messages of one distinct text block each."""
    return [UserMessage(content=f"note {n}: " + "word " * (n % 7)) for n in range(blocks)]


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 1_600), st.integers(0, 1_600))
def test_the_store_serves_every_count_it_holds_whatever_the_batches(
    stored: int, asked: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        store = CountStore(Path(folder) / "counts.sqlite")
        try:
            store.put_many("ns", {f"b{n}": n for n in range(stored)})
            found = store.get_many("ns", [f"b{n}" for n in range(asked)])
        finally:
            store.close()
    assert found == {f"b{n}": n for n in range(min(stored, asked))}


def test_a_large_session_is_read_from_the_store_whole(tmp_path: Path) -> None:
    session = _session(1_234)  # three batches of the store's reads
    store = CountStore(tmp_path / "counts.sqlite")
    first = TokenCache(ApproximateCounter(), store=store)
    assert first.count_ahead(session) == 1_234
    assert len(store) == 1_234
    spy = CountingCounter()
    again = TokenCache(spy, store=store)
    # Every block's count comes from the store: nothing is tokenized again.
    assert again.count_ahead(session) == 0 and spy.calls == []
    assert again.messages(session) == first.messages(session)
    store.close()


def test_a_count_made_under_other_rules_is_never_reused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxlab.tokens import _cache

    session = _session(40)
    store = CountStore(tmp_path / "counts.sqlite")
    TokenCache(ApproximateCounter(), store=store).count_ahead(session)
    # Another version of ctxlab's counting rules, the same counter: every block counted anew.
    monkeypatch.setattr(_cache, "COUNT_RULES", "blocks-other")
    spy = CountingCounter()
    later = TokenCache(spy, store=store)
    assert later.store_namespace == f"{spy.method}|blocks-other"
    assert later.count_ahead(session) == 40
    assert len(spy.calls) == 40
    # The same rules again: served, none counted.
    monkeypatch.setattr(_cache, "COUNT_RULES", "blocks-other")
    same = CountingCounter()
    assert TokenCache(same, store=store).count_ahead(session) == 0 and same.calls == []
    store.close()


def _both_ways(message: UserMessage | AssistantMessage) -> int:
    """A message's count one block at a time, checked equal to the batched count."""
    one = TokenCache(ApproximateCounter()).message(message)
    batched = TokenCache(ApproximateCounter())
    batched.count_ahead([message])
    assert batched.message(message) == one
    return one


def test_redacted_thinking_counts_a_quarter_of_its_length() -> None:
    hidden = AssistantMessage(content=(RedactedThinkingBlock(data="Q" * 1_000),))
    assert _both_ways(hidden) == MESSAGE_OVERHEAD + 250
    odd = AssistantMessage(content=(RedactedThinkingBlock(data="Q" * 1_003),))
    assert _both_ways(odd) == MESSAGE_OVERHEAD + 250


@pytest.mark.parametrize(
    ("length", "tokens"),
    # Codex's own size of an encrypted reasoning item: (¾ of its length − 650) bytes, 4 bytes a
    # token, rounded up; an envelope with no reasoning in it counts none.
    [(2_000, 213), (2_002, 213), (2_008, 214), (932, 13), (866, 0)],
)
def test_openai_encrypted_reasoning_counts_as_codex_sizes_it(length: int, tokens: int) -> None:
    fernet = "gAAAAABo" + "x" * (length - 8)
    hidden = AssistantMessage(content=(RedactedThinkingBlock(data=fernet),))
    assert _both_ways(hidden) == MESSAGE_OVERHEAD + tokens


def _pdf(pages: int) -> str:
    body = b"%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\n"
    body += b"2 0 obj << /Type /Pages /Count %d >> endobj\n" % pages
    for n in range(pages):
        body += b"%d 0 obj << /Type /Page /Parent 2 0 R >> endobj\n" % (n + 3)
    return base64.b64encode(body).decode()


@pytest.mark.parametrize("pages", [1, 3, 12])
def test_a_base64_pdf_counts_its_pages(pages: int) -> None:
    source = {"type": "base64", "media_type": "application/pdf", "data": _pdf(pages)}
    doc = UserMessage(content=(DocumentBlock(source=source, title="Spec"),))
    title = ApproximateCounter().count_text("Spec")
    assert _both_ways(doc) == MESSAGE_OVERHEAD + pages * PDF_PAGE_TOKENS + title


def test_a_pdf_without_readable_pages_counts_one_page() -> None:
    for data in (base64.b64encode(b"not a pdf at all").decode(), "", "!!not base64!!"):
        source = {"type": "base64", "media_type": "application/pdf", "data": data}
        doc = UserMessage(content=(DocumentBlock(source=source),))
        assert _both_ways(doc) == MESSAGE_OVERHEAD + PDF_PAGE_TOKENS, data
    url = UserMessage(content=(DocumentBlock(source={"type": "url", "url": "https://x/a.pdf"}),))
    assert _both_ways(url) == MESSAGE_OVERHEAD + PDF_PAGE_TOKENS


def test_images_inside_a_tool_result_count_each() -> None:
    image = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="})
    text = "screenshot of the failing page"
    for images in (0, 1, 3):
        result = ToolResultBlock(
            tool_use_id="shot", content=(TextBlock(text=text), *([image] * images))
        )
        message = UserMessage(content=(result,))
        words = ApproximateCounter().count_text(text)
        assert _both_ways(message) == (
            MESSAGE_OVERHEAD + TOOL_BLOCK_OVERHEAD + images * IMAGE_TOKENS + words
        )


def test_head_within_cuts_at_a_line_end_only_near_the_cut() -> None:
    # A line end early in the head is not where the cut goes: the head keeps its 50 characters.
    far = "a\n" + "b" * 100
    assert head_within(far, 50, len) == far[:50]
    # A line end within the last fifth of the head is.
    near = "b" * 45 + "\n" + "c" * 100
    assert head_within(near, 50, len) == "b" * 45 + "\n"
    assert head_within("short\ntext", 50, len) == "short\ntext"


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.text(alphabet="ab ", max_size=40), min_size=1, max_size=12).map("\n".join),
    st.integers(1, 300),
)
@example("a\naa", 3)  # a line end far from the cut
@example("b" * 9 + "\nc", 10)  # one near it
def test_head_within_keeps_at_least_four_fifths_of_what_fits(text: str, budget: int) -> None:
    head = head_within(text, budget, len)
    assert text.startswith(head) and len(head) <= budget
    if len(text) <= budget:
        assert head == text
        return
    fits = text[:budget]  # with one token a character, the longest prefix that fits
    last = fits.rfind("\n")
    # A line end in the last fifth of what fits is where the cut goes; one further back is not.
    assert head == (fits[: last + 1] if last > 0.8 * len(fits) else fits)
    assert len(head) > 0.8 * len(fits)


def test_a_pdf_in_line_wrapped_base64_counts_its_pages() -> None:
    # Base64 as mail and many encoders write it: lines of 76 characters.
    data = _pdf(4)
    wrapped = "\n".join(data[i : i + 76] for i in range(0, len(data), 76))
    source = {"type": "base64", "media_type": "application/pdf", "data": wrapped}
    doc = UserMessage(content=(DocumentBlock(source=source),))
    assert _both_ways(doc) == MESSAGE_OVERHEAD + 4 * PDF_PAGE_TOKENS


def test_a_text_document_and_thinking_count_as_their_text() -> None:
    counter = ApproximateCounter()
    text = "The spec says the port is 8080. " * 10
    doc = DocumentBlock(source={"type": "text", "media_type": "text/plain", "data": text})
    assert _both_ways(UserMessage(content=(doc,))) == MESSAGE_OVERHEAD + counter.count_text(text)
    thought = AssistantMessage(content=(ThinkingBlock(thinking=text, signature="s"),))
    assert _both_ways(thought) == MESSAGE_OVERHEAD + counter.count_text(text)


def test_a_document_inside_a_tool_result_counts_its_pages() -> None:
    source = {"type": "base64", "media_type": "application/pdf", "data": _pdf(2)}
    result = ToolResultBlock(
        tool_use_id="f", content=(TextBlock(text="the file"), DocumentBlock(source=source))
    )
    words = ApproximateCounter().count_text("the file")
    assert _both_ways(UserMessage(content=(result,))) == (
        MESSAGE_OVERHEAD + TOOL_BLOCK_OVERHEAD + 2 * PDF_PAGE_TOKENS + words
    )


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "bb", "ccc ccc", "dddd\n", "é" * 5]), min_size=1, max_size=80),
    st.integers(1, 60),
)
def test_head_within_fits_under_a_counter_that_is_not_linear(words: list[str], budget: int) -> None:
    # Words, not characters: the first guess of the cut overshoots and is corrected.
    def count(text: str) -> int:
        return len(text.split()) + 2 * text.count("é")

    text = " ".join(words)
    head = head_within(text, budget, count)
    assert text.startswith(head) and count(head) <= budget
    if count(text) <= budget:
        assert head == text


@settings(database=None, max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=200).filter(str.strip))
def test_a_hint_counts_as_the_text_the_provider_receives(hint: str) -> None:
    # The harness's tags around it included: what is sent is what is counted.
    counter = ApproximateCounter(1)
    block = HintBlock(hint=hint)
    assert TokenCache(counter).block(block) == counter.count_text(block.rendered)
    assert block.rendered != hint and hint in block.rendered


def test_a_provider_block_counts_its_json_and_a_tool_blocks_framing() -> None:
    counter = ApproximateCounter(1)
    block = ProviderBlock(data={"type": "server_tool_use", "id": "s1", "input": {"q": "é"}})
    expected = TOOL_BLOCK_OVERHEAD + len('{"type":"server_tool_use","id":"s1","input":{"q":"é"}}')
    assert TokenCache(counter).block(block) == expected
