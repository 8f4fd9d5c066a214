"""The request as the server billed it, from what it reported clearing (`reported_items`): the
System, tools and summary lead before the conversation as they were, the conversation cleared
(the oldest clearable results, the oldest thinking turns), the per-request material after it;
nothing reported, or a report of nothing, leaves the request as ctxlab built it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.manifest import ManifestItem
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.pipeline import message_items
from ctxlab.pipeline._reported_edits import as_reported, reported_items
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.config.histories import thinking_of
from tests.helpers import Message, exchange

PLACEHOLDER = ClearToolUses().placeholder
CACHE = TokenCache(ApproximateCounter())


def _conversation(names: Sequence[str] = ("read", "bash", "read", "read")) -> list[Message]:
    """A task, then a call a turn (``c0``, ``c1``, …: to ``names``), each with its thinking and
    a result of 200 words."""
    out: list[Message] = [UserMessage(content="Find the bug.")]
    for n, name in enumerate(names):
        thought, output = f"Reading part {n}.", f"c{n} " + "line " * 200
        out += exchange(f"c{n}", name, output, thinking=thought, path=f"/src/{n}.py")
        out.append(UserMessage(content=f"Go on with part {n + 1}."))  # a new turn
    return out


def _item(name: str, placement: str, tokens: int) -> ManifestItem:
    return ManifestItem(name, "runtime", placement, tokens, f"{name}#1")  # type: ignore[arg-type]


SUMMARY = UserMessage(content=(TextBlock(text="Summary: the bug is in /src/3.py."),))
MATERIAL = UserMessage(content="[notice] 40 % of the window used; [docs] the parser's notes.")
FIXED = [_item("system/prompt", "system", 300), _item("tool/read", "tools", 80)]
LEAD = [_item("summary/1", "summary", CACHE.message(SUMMARY))]
AFTER = [_item("runtime/notice", "transient", 20), _item("source/docs", "references", 30)]


def _request(conversation: list[Message]) -> tuple[ModelRequest, list[ManifestItem]]:
    """A request with everything around the conversation: System, tools, a summary leading
    it, material after it."""
    request = ModelRequest(
        system="You fix bugs.",
        messages=(SUMMARY, *conversation, MATERIAL),
        tools=(ToolSchema("read"),),
        material_messages=1,
    )
    return request, [*FIXED, *LEAD, *message_items(conversation, CACHE), *AFTER]


def _report(uses: int = 0, turns: int = 0) -> list[dict[str, Any]]:
    return [
        {"type": "clear_tool_uses_20250919", "cleared_tool_uses": uses},
        {"type": "clear_thinking_20251015", "cleared_thinking_turns": turns},
    ]


def _results(items: Sequence[ManifestItem], conversation: list[Message]) -> dict[str, str]:
    by_hash = {m.content_hash: m for m in conversation}
    return {
        r.tool_use_id: r.text
        for i in items
        if i.content_hash in by_hash and isinstance(by_hash[i.content_hash], UserMessage)
        for r in by_hash[i.content_hash].tool_results  # type: ignore[union-attr]
    }


def _reported(
    edits: ProviderEdits, report: list[dict[str, Any]]
) -> tuple[list[Message], list[ManifestItem], tuple[ManifestItem, ...], list[Message]]:
    """The conversation, its items, the items billed after ``report`` and the conversation as
    edited; the billed items checked to be the edited conversation's, surrounded as before."""
    conversation = _conversation()
    request, items = _request(conversation)
    billed = reported_items(items, request, edits, report, CACHE)
    edited = list(as_reported(conversation, edits, report))
    assert billed is not None
    assert billed == (*FIXED, *LEAD, *message_items(edited, CACHE), *AFTER)
    return conversation, items, billed, edited


def test_the_billed_items_keep_what_surrounds_the_conversation() -> None:
    edits = ProviderEdits(clear_tool_uses=ClearToolUses())
    conversation, items, billed, edited = _reported(edits, _report(uses=2))
    results = _results(billed, edited)
    assert [c for c, text in results.items() if text == PLACEHOLDER] == ["c0", "c1"]
    # What the server billed is what it left: the two results' tokens less.
    freed = sum(i.tokens for i in items) - sum(i.tokens for i in billed)
    assert freed == sum(map(CACHE.message, conversation)) - sum(map(CACHE.message, edited))
    assert freed > 2 * 150


def test_a_report_of_thinking_alone_removes_the_oldest_turns_thinking() -> None:
    _, _, _, kept = _reported(ProviderEdits(clear_thinking=ClearThinking()), _report(turns=3))
    assert thinking_of(kept) == ["Reading part 3."]  # the three oldest turns' thinking went


def test_nothing_reported_or_a_report_of_nothing_is_no_edit() -> None:
    conversation = _conversation()
    request, items = _request(conversation)
    edits = ProviderEdits(clear_tool_uses=ClearToolUses(), clear_thinking=ClearThinking())
    assert reported_items(items, request, edits, [], CACHE) is None
    assert reported_items(items, request, edits, _report(), CACHE) is None
    # An edit of another kind that happens to carry the key counts for nothing.
    other = [{"type": "compact_20260112", "cleared_tool_uses": 2}]
    assert reported_items(items, request, edits, other, CACHE) is None


def test_cleared_uses_without_a_tool_use_clear_configured_clear_nothing() -> None:
    """The server reports clearing tool uses, but the model knows of no such edit (no
    placeholder to write): the results stay."""
    conversation = _conversation()
    edits = ProviderEdits(clear_thinking=ClearThinking())
    assert as_reported(conversation, edits, _report(uses=2)) == tuple(conversation)


def test_inputs_are_cleared_as_configured() -> None:
    conversation = _conversation(("read", "bash", "read", "read"))

    def inputs(named: bool | tuple[str, ...]) -> dict[str, dict[str, Any]]:
        edits = ProviderEdits(clear_tool_uses=ClearToolUses(clear_tool_inputs=named))
        edited = as_reported(conversation, edits, _report(uses=3))
        return {
            u.id: u.input for m in edited if isinstance(m, AssistantMessage) for u in m.tool_uses
        }

    path = {f"c{n}": {"path": f"/src/{n}.py"} for n in range(4)}
    assert inputs(False) == path
    assert inputs(True) == {**path, "c0": {}, "c1": {}, "c2": {}}
    # Only the named tool's: c1 is bash.
    assert inputs(("read",)) == {**path, "c0": {}, "c2": {}}
