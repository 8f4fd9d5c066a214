"""How a recording's requests are rebuilt, one promise per test, on transcripts built here with
the exact compaction records an importer writes (``meta["compactions"]``): which records count,
where each request starts, what a summary opens it with, which results a microcompact clears,
and what the manifest of a recorded request says (its size, by the bill or by the count, beside
the window it is shown at)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.analysis._recorded import (
    CLEARED,
    RecordedItems,
    RecordedRequest,
    recorded_compactions,
    recorded_manifest,
    recorded_requests,
    unrecorded_parts,
)
from ctxlab.io._transcript import Transcript
from ctxlab.manifest import ManifestItem
from ctxlab.materials import Unrecorded
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._scan import message_items
from ctxlab.tokens import ApproximateCounter, TokenCache


def _session() -> tuple[UserMessage | AssistantMessage, ...]:
    """Three calls and their results, then a summary (a compaction's) and one more reply.

    Indexes: 0 prompt · 1 call a · 2 result a · 3 call b · 4 result b (+ a note) · 5 call c ·
    6 result c · 7 summary (an old result block, then the summary's text) · 8 reply · 9 prompt ·
    10 reply."""

    def call(i: str) -> AssistantMessage:
        return AssistantMessage(content=(ToolUseBlock(id=f"t{i}", name="Read", input={"f": i}),))

    def result(i: str, *more: TextBlock) -> UserMessage:
        return UserMessage(
            content=(ToolResultBlock(tool_use_id=f"t{i}", content=f"{i}" * 40), *more)
        )

    return (
        UserMessage(content="Read a, b and c."),
        call("a"),
        result("a"),
        call("b"),
        result("b", TextBlock(text="keep this note")),
        call("c"),
        result("c"),
        UserMessage(
            content=(
                ToolResultBlock(tool_use_id="tc", content="late"),
                TextBlock(text="Summary: a, b and c were read."),
            )
        ),
        AssistantMessage(content="Done."),
        UserMessage(content="Go on."),
        AssistantMessage(content="Finished."),
    )


def _transcript(compactions: list[Any], **meta: Any) -> Transcript:
    return Transcript("t", {"compactions": compactions, **meta}, "", _session())


def _micro(replies_before: int, *ids: str) -> dict[str, Any]:
    return {
        "summary_index": 0,
        "kind": "microcompact",
        "trigger": "auto",
        "replies_before": replies_before,
        "tool_ids": list(ids),
    }


SUMMARY = {"summary_index": 7, "summary_block": 1, "trigger": "manual", "replies_before": 3}


# --- which records are compactions ----------------------------------------------------------------


@pytest.mark.parametrize(
    "bad",
    [
        "not a record",
        {"trigger": "manual", "replies_before": 1},  # no summary_index
        {"summary_index": 11, "replies_before": 1},  # one past the last message (11 messages)
        {"summary_index": 40, "replies_before": 1},
        {"summary_index": "seven", "replies_before": 1},
    ],
)
def test_a_record_that_is_no_compaction_is_skipped_and_the_next_one_kept(bad: object) -> None:
    (kept,) = recorded_compactions(_transcript([bad, SUMMARY]))
    assert (kept.index, kept.block, kept.trigger, kept.replies_before) == (7, 1, "manual", 3)


def test_a_compaction_without_its_block_starts_at_the_messages_first_block() -> None:
    record = {k: v for k, v in SUMMARY.items() if k != "summary_block"}
    (kept,) = recorded_compactions(_transcript([record]))
    assert (kept.block, kept.kind, kept.tool_ids, kept.pre_tokens) == (0, "compact", (), None)
    # The request after it opens with the whole summary message, the old result included.
    last = recorded_requests(_transcript([record]))[-1]
    assert last.messages[0] == _session()[7]


# --- where a request starts, what it opens with ---------------------------------------------------


def test_after_a_compaction_the_request_opens_with_the_summarys_blocks_then_what_followed() -> None:
    requests = recorded_requests(_transcript([SUMMARY]))
    assert [(r.reply, r.start, r.segment) for r in requests] == [
        (1, 0, 0),
        (3, 0, 0),
        (5, 0, 0),
        (8, 7, 1),
        (10, 7, 1),
    ]
    # The summary's own blocks (not the result before it), and nothing dropped after it.
    summary = UserMessage(content=(TextBlock(text="Summary: a, b and c were read."),))
    assert tuple(requests[-2].messages) == (summary,)
    assert tuple(requests[-1].messages) == (summary, *_session()[8:10])


def test_a_summary_recorded_at_the_reply_itself_does_not_restart_the_request() -> None:
    # A compaction is marked on the first request after it; its summary must come before the
    # reply to open that request: one that does not leaves the request as it was.
    record = {**SUMMARY, "summary_index": 5, "replies_before": 2}
    third = recorded_requests(_transcript([record]))[2]
    assert (third.reply, third.start, third.segment, len(third.messages)) == (5, 0, 1, 5)
    assert third.messages[0] == _session()[0]


def test_each_compaction_before_a_request_counts_as_a_segment() -> None:
    requests = recorded_requests(_transcript([_micro(1, "ta"), _micro(1, "tb"), SUMMARY]))
    assert [r.segment for r in requests] == [0, 2, 2, 3, 3]
    assert [len(r.compactions) for r in requests] == [0, 2, 0, 1, 0]


# --- what a microcompact clears -------------------------------------------------------------------


def _results(request: RecordedRequest) -> list[str]:
    return [
        str(block.content)
        for message in request.messages
        if isinstance(message, UserMessage)
        for block in message.content
        if isinstance(block, ToolResultBlock)
    ]


def test_microcompacts_clear_what_each_names_and_keep_clearing_it() -> None:
    requests = recorded_requests(_transcript([_micro(1, "ta"), _micro(2, "tb")]))
    assert [_results(r) for r in requests[1:]] == [
        [CLEARED],
        [CLEARED, CLEARED],
        [CLEARED, CLEARED, "c" * 40, "late"],
        [CLEARED, CLEARED, "c" * 40, "late"],
    ]
    # The note beside a cleared result is kept: only the named results are replaced.
    note = requests[2].messages[4]
    assert isinstance(note, UserMessage) and note.content[1] == TextBlock(text="keep this note")


def test_a_microcompact_after_a_compaction_clears_in_the_restarted_conversation() -> None:
    # The summary restarts the conversation (and forgets what was cleared before it); a
    # microcompact after it clears again, in the new conversation.
    record = {**SUMMARY, "summary_block": 0}
    requests = recorded_requests(_transcript([_micro(1, "ta"), record, _micro(3, "tc")]))
    last = requests[-2]
    assert (last.start, last.segment) == (7, 3)
    assert _results(last) == [CLEARED]
    assert last.messages[0].content[1] == TextBlock(text="Summary: a, b and c were read.")


@settings(max_examples=40, deadline=None, database=None)
@given(st.sets(st.sampled_from(["ta", "tb", "tc", "tz"])), st.integers(0, 2))
def test_a_result_is_cleared_exactly_when_a_microcompact_before_the_request_names_it(
    named: set[str], before: int
) -> None:
    transcript = _transcript([_micro(before, *sorted(named))])
    for rank, request in enumerate(recorded_requests(transcript)):
        for message in request.messages:
            for block in message.content if isinstance(message, UserMessage) else ():
                if isinstance(block, ToolResultBlock):
                    cleared = rank >= before and block.tool_use_id in named
                    assert (block.content == CLEARED) == cleared


# --- what the file does not hold ------------------------------------------------------------------


@pytest.mark.parametrize(("stand_ins", "parts"), [([1, 3], ["user prompts"]), ([], [])])
def test_a_stream_without_its_prompts_names_them_unrecorded(
    stand_ins: list[int], parts: list[str]
) -> None:
    transcript = Transcript(
        "t",
        {"unrecorded_prompts": stand_ins},
        "You are careful.",
        (UserMessage(content="(prompt not recorded)"), AssistantMessage(content="ok")),
    )
    assert unrecorded_parts(transcript) == parts


# --- a recorded request's items and manifest ------------------------------------------------------


CACHE = TokenCache(ApproximateCounter())
SYSTEM = ManifestItem("system/0", "system", "system", 120, "h-system")
TOOLS = ManifestItem("tools/Read", "tool_schema", "tools", 80, "h-tools")


def _request(usage: ProviderUsage | None = None, **changes: Any) -> RecordedRequest:
    request = recorded_requests(_transcript([SUMMARY]))[2]
    return dataclasses.replace(request, usage=usage, **changes)


def test_items_come_after_the_lead_and_the_fixed_items_and_are_held_once() -> None:
    itemized = RecordedItems((SYSTEM, TOOLS), CACHE)
    lead = ManifestItem("unrecorded/x", "unrecorded", "unrecorded", 500, "h-lead")
    requests = recorded_requests(_transcript([SUMMARY]))[:3]
    built = [itemized.of(r, (lead,)) for r in requests]
    messages = message_items(tuple(requests[2].messages), CACHE)
    items, tokens = built[2]
    assert list(items) == [lead, SYSTEM, TOOLS, *messages]
    assert tokens == 500 + 120 + 80 + sum(i.tokens for i in messages)
    assert [len(i) for i, _ in built] == [4, 6, 8]
    # The requests of a segment are views of one tuple of items (for each lead).
    assert len({id(i.base) for i, _ in built}) == 1  # type: ignore[attr-defined]
    # A request handed over as a plain tuple is itemized the same.
    plain = itemized.of(_request(messages=tuple(requests[2].messages)), (lead,))
    assert (list(plain[0]), plain[1]) == (list(items), tokens)


def test_a_request_with_nothing_in_it_has_no_items_and_no_tokens() -> None:
    items, tokens = RecordedItems((), CACHE).of(_request(messages=()))
    assert (list(items), tokens) == ([], 0)


def test_a_recorded_manifest_says_what_was_sent_and_to_which_window() -> None:
    transcript = _transcript([SUMMARY], models=["claude-opus-4-6"])
    previous_request, request = recorded_requests(transcript)[1:3]
    previous = recorded_manifest(previous_request, CACHE, context_window=9_000, previous=None)
    manifest = recorded_manifest(
        request,
        CACHE,
        context_window=9_000,
        previous=previous,
        fixed_items=(SYSTEM,),
        notes=("the System prompt is not recorded",),
        unrecorded=Unrecorded(2_000, key="all/0"),
    )
    messages = message_items(tuple(request.messages), CACHE)
    assert manifest.request_id == "recorded-2" and manifest.purpose == "reasoning"
    assert manifest.model == "claude-opus-4-6"
    assert manifest.estimated_input_tokens == 2_000 + 120 + sum(i.tokens for i in messages)
    assert (manifest.input_limit, manifest.context_size) == (9_000, 9_000)
    assert (manifest.counting_method, manifest.exact) == (CACHE.method, False)
    assert manifest.previous_items == previous.items
    assert manifest.notes == ("the System prompt is not recorded",)
    assert (manifest.validation, manifest.error) == ("passed", None)
    assert [i.id for i in manifest.items][:2] == ["unrecorded/all/0", "system/0"]


def test_a_compaction_is_marked_on_the_first_message_after_the_fixed_items() -> None:
    request = recorded_requests(_transcript([SUMMARY]))[3]
    manifest = recorded_manifest(
        request,
        CACHE,
        context_window=200_000,
        previous=None,
        fixed_items=(SYSTEM, TOOLS),
        unrecorded=Unrecorded(2_000),
    )
    (mark,) = manifest.transforms
    opening = message_items(tuple(request.messages), CACHE)[0].id
    assert (mark.kind, mark.target, mark.detail, mark.tokens_after) == (
        "recorded_compaction",
        opening,
        "manual",
        None,
    )
    assert manifest.items[3].id == opening
    billed = dataclasses.replace(request, usage=ProviderUsage(30_000, 10, 1_000, 500))
    (mark,) = recorded_manifest(billed, CACHE, context_window=200_000, previous=None).transforms
    assert (mark.target, mark.tokens_after) == (opening, 31_500)


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(0, 4_000), st.one_of(st.none(), st.integers(0, 4_000)))
def test_a_recorded_request_is_over_its_window_by_the_larger_of_bill_and_count(
    window: int, billed: int | None
) -> None:
    usage = ProviderUsage(billed, 1) if billed is not None else None
    request = _request(usage)
    manifest = recorded_manifest(request, CACHE, context_window=window, previous=None)
    counted = sum(i.tokens for i in message_items(tuple(request.messages), CACHE))
    size = max(counted, billed or 0)
    assert manifest.estimated_input_tokens == counted
    if size > window:
        how = "billed" if billed == size else "estimated"
        assert manifest.validation == "budget_exceeded"
        assert manifest.error == (
            f"as recorded, this request held {size:,} tokens ({how}): more than the "
            f"{window:,}-token window it is shown at — the session, as its agent ran it, does "
            "not fit this window"
        )
    else:
        assert (manifest.validation, manifest.error) == ("passed", None)


def test_a_request_that_fills_its_window_exactly_fits_it() -> None:
    request = _request()
    counted = sum(i.tokens for i in message_items(tuple(request.messages), CACHE))
    exact = recorded_manifest(request, CACHE, context_window=counted, previous=None)
    over = recorded_manifest(request, CACHE, context_window=counted - 1, previous=None)
    assert (exact.validation, over.validation) == ("passed", "budget_exceeded")
    assert over.error is not None and "(estimated)" in over.error
    billed = recorded_manifest(
        _request(ProviderUsage(counted + 50, 1)), CACHE, context_window=counted, previous=None
    )
    assert billed.error is not None and f"held {counted + 50:,} tokens (billed)" in billed.error


def test_a_compaction_mark_targets_the_first_message_whatever_leads_it() -> None:
    request = recorded_requests(_transcript([SUMMARY]))[3]
    manifest = recorded_manifest(
        request, CACHE, context_window=200_000, previous=None, fixed_items=(SYSTEM, TOOLS)
    )
    (mark,) = manifest.transforms
    assert mark.target == message_items(tuple(request.messages), CACHE)[0].id
    assert [i.id for i in manifest.items][:2] == ["system/0", "tools/Read"]


def test_an_empty_request_of_no_model_fits_an_empty_window_and_marks_no_message() -> None:
    request = dataclasses.replace(recorded_requests(_transcript([SUMMARY]))[3], messages=())
    manifest = recorded_manifest(request, CACHE, context_window=0, previous=None)
    assert (manifest.estimated_input_tokens, manifest.validation, manifest.error) == (
        0,
        "passed",
        None,
    )
    assert manifest.model == "" and list(manifest.items) == []
    (mark,) = manifest.transforms
    assert (mark.kind, mark.target, mark.detail) == ("recorded_compaction", "", "manual")


def test_a_summary_placed_on_a_reply_does_not_open_the_request() -> None:
    # A file that opens with a reply after its compaction boundary has its summary placed on
    # that reply (`place_compactions`: the first message). A reply cannot open a request: the
    # compaction is counted, and the requests go on from where they were (was: a UserMessage
    # built of the reply's blocks, a pydantic error on its thinking or tool call).
    record = {**SUMMARY, "summary_index": 3, "summary_block": 0, "replies_before": 2}
    requests = recorded_requests(_transcript([record]))
    assert [(r.reply, r.start, r.segment) for r in requests] == [
        (1, 0, 0),
        (3, 0, 0),
        (5, 0, 1),
        (8, 0, 1),
        (10, 0, 1),
    ]
    assert requests[2].compaction is not None and requests[2].compaction.index == 3
    assert tuple(requests[-1].messages) == _session()[:10]
