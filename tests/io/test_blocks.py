"""Thinking, redacted thinking, documents and server-tool blocks: kept losslessly on the way in,
written back unchanged, counted in the budget."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from ctxlab import ApproximateCounter, load
from ctxlab.messages import DocumentBlock, ProviderBlock, ThinkingBlock, find_tool_pair_problems
from ctxlab.models import messages_from_anthropic
from ctxlab.tokens import PDF_PAGE_TOKENS, TokenCache
from tests.io.contracts.anthropic import BLOCKS

# The request: the fixture (tests/io/contracts/anthropic.py: its census the contract checks) —
# a PDF of three pages and a text document with citations, thinking and redacted thinking, a
# server tool's call and result, a tool result holding a search result.
MESSAGES: list[dict[str, Any]] = json.loads(BLOCKS.read_text())["messages"]


def test_the_fixtures_pdf_is_three_pages() -> None:
    # What the page count below stands on: the document's bytes, counted apart from ctxlab.
    pdf = base64.b64decode(MESSAGES[0]["content"][0]["source"]["data"])
    assert pdf.startswith(b"%PDF-1.4\n") and pdf.count(b"<< /Type /Page /Parent 2 0 R >>") == 3


def test_every_block_is_kept_and_written_back_unchanged(tmp_path: Path) -> None:
    transcript = load({"messages": MESSAGES})
    assert "dropped_blocks" not in transcript.meta
    assert find_tool_pair_problems(transcript.messages) == []
    kinds = [b.type for m in transcript.messages for b in m.content]
    assert kinds == [
        "document",
        "document",
        "text",
        "thinking",
        "redacted_thinking",
        "provider",
        "provider",
        "tool_use",
        "tool_result",
        "text",
    ]
    saved = transcript.save(tmp_path / "out.json", format="anthropic")
    assert json.loads(saved.read_text())["messages"] == MESSAGES
    again = load(saved)
    assert again.messages == transcript.messages
    ctxlab_file = transcript.save(tmp_path / "out.jsonl")
    assert load(ctxlab_file).messages == transcript.messages


def test_the_new_blocks_are_counted() -> None:
    cache = TokenCache(ApproximateCounter())
    transcript = load({"messages": MESSAGES})
    pdf, text_doc = transcript.messages[0].content[:2]
    assert isinstance(pdf, DocumentBlock) and isinstance(text_doc, DocumentBlock)
    assert cache.block(pdf) == 3 * PDF_PAGE_TOKENS + cache.text("spec.pdf")
    assert cache.block(text_doc) == cache.text("Rule 7: no overflow.")
    thinking = transcript.messages[1].content[0]
    assert isinstance(thinking, ThinkingBlock)
    assert cache.block(thinking) == cache.text("Check rule 7, then search.")
    search = transcript.messages[1].content[3]
    assert isinstance(search, ProviderBlock) and search.kind == "web_search_tool_result"
    assert cache.block(search) > cache.text("https://example.org/7")
    result = transcript.messages[2].content[0]
    # The search result inside the tool result counts too.
    assert cache.block(result) > cache.text("spec.md:7: no overflow") + 8


def _claude_code(path: Path, *lines: tuple[str, Any]) -> Path:
    """A Claude Code session of (role, content) lines, replies all of one response."""
    records = [
        {
            "type": role,
            "sessionId": "s",
            "message": {"role": role, "content": content}
            | ({"id": "m1"} if role == "assistant" else {}),
        }
        for role, content in lines
    ]
    path.write_text("\n".join(json.dumps(record) for record in records))
    return path


def test_a_claude_code_session_keeps_its_thinking(tmp_path: Path) -> None:
    path = _claude_code(
        tmp_path / "session.jsonl",
        ("user", "hi"),
        ("assistant", [{"type": "thinking", "thinking": "Greet back.", "signature": "s1"}]),
        ("assistant", [{"type": "text", "text": "Hello.", "citations": None}]),
    )
    transcript = load(path)
    assert [b.type for b in transcript.messages[1].content] == ["thinking", "text"]


def test_thinking_a_user_line_recorded_is_written_back_and_read_back_the_same(
    tmp_path: Path,
) -> None:
    # A Claude Code user line may carry thinking (a user turn cannot hold it): the reader keeps
    # it as a provider block. ctxlab's own file writes it back as it came — and read that
    # file as a thinking block of a user turn, a MessageFormatError: a session load accepted,
    # saved by ctxlab, could not be loaded again.
    thinking = {"type": "thinking", "thinking": "Restored.", "signature": "s2"}
    path = _claude_code(
        tmp_path / "session.jsonl",
        ("user", "hi"),
        ("assistant", [{"type": "text", "text": "Yes?"}]),
        ("user", [thinking, {"type": "text", "text": "Go on."}]),
    )
    transcript = load(path)
    kept = transcript.messages[2].content[0]
    assert isinstance(kept, ProviderBlock) and kept.data == thinking
    for format in ("ctxlab", "anthropic"):
        saved = transcript.save(tmp_path / f"out-{format}.json", format=format)  # type: ignore[arg-type]
        assert load(saved).messages == transcript.messages, format
    # In a reply, a document is the one a reply cannot hold: carried the same way.
    document = {
        "type": "document",
        "source": {"type": "text", "media_type": "text/plain", "data": "x"},
    }
    (reply,) = messages_from_anthropic([{"role": "assistant", "content": [document]}])
    assert reply.content == (ProviderBlock(data=document),)
