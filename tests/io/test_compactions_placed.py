"""`place_compactions` (``ctxlab/io/_compactions.py``): each compaction an importer noted by the
replies before it and its summary's opening words is placed on the summary's message and block in
the final messages — checked against the test's own placement on generated conversations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.io._compactions import place_compactions
from ctxlab.messages import AssistantMessage, UserMessage

SUMMARY = "Summary: the user wants X. " + "y" * 300


def _user(*texts: str) -> UserMessage:
    return UserMessage(role="user", content=[{"type": "text", "text": t} for t in texts])


def _reply(text: str = "ok") -> AssistantMessage:
    return AssistantMessage(role="assistant", content=[{"type": "text", "text": text}])


def _placed(records: list[Any], messages: list[Any]) -> list[Any]:
    meta: dict[str, Any] = {"compactions": records}
    place_compactions(meta, messages)
    return [
        (r.get("summary_index"), r.get("summary_block")) if isinstance(r, dict) else r
        for r in records
    ]


def test_a_summary_is_the_user_message_before_the_first_reply_after_it() -> None:
    messages = [
        _user("go"),
        _reply("one"),
        UserMessage(
            role="user",
            content=[
                {"type": "text", "text": "Summary: an earlier note"},  # the same first words
                {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}},
                {"type": "text", "text": SUMMARY},
                {"type": "text", "text": "and more"},
            ],
        ),
        _reply("two"),
        _reply("three"),
        _user("again"),
    ]
    records = [
        "junk",  # what cannot be placed is passed over, and the rest still placed
        {"replies_before": -1},
        {"replies_before": "x"},
        {"summary_head": "x"},
        {"replies_before": 1, "summary_head": SUMMARY[:200]},
        {"replies_before": 1, "summary_head": "no such words"},  # not found: its first block
        {"replies_before": 0},
        {"replies_before": 3, "summary_head": "again"},  # after the last reply: the last message
        {"replies_before": 2},  # the messages before reply 2 end with a reply: the user before
    ]
    assert _placed(records, messages) == [
        "junk",
        (None, None),
        (None, None),
        (None, None),
        (2, 2),
        (2, 0),
        (0, 0),
        (5, 0),
        (2, 0),
    ]


def test_the_user_message_is_looked_for_back_to_the_first() -> None:
    messages = [_user("x", "s"), _reply(), _reply()]
    assert _placed([{"replies_before": 1, "summary_head": "s"}], messages) == [(0, 1)]
    # Before the first message there is none: the summary is the first message's first block.
    opening = [_reply(), _user("x", "Summary")]
    assert _placed([{"replies_before": 0, "summary_head": "Summary"}], opening) == [(0, 0)]


def test_a_conversation_that_opens_with_a_reply_places_at_its_start() -> None:
    assert _placed([{"replies_before": 0, "summary_head": "x"}], [_reply(), _user("x")]) == [(0, 0)]
    assert _placed([{"replies_before": 1}], [_reply(), _reply()]) == [(0, 0)]


def test_meta_without_a_list_of_compactions_is_left_alone() -> None:
    for value in ({"compactions": "x"}, {}):
        meta = dict(value)
        place_compactions(meta, [_user("x")])
        assert meta == value


@settings(database=None, max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(1, 3)), min_size=1, max_size=10),
    st.data(),
)
def test_each_summary_is_found_where_it_was_written(
    shape: list[tuple[bool, int]], data: st.DataObject
) -> None:
    # Build a conversation of user and reply messages; write a summary into one user message
    # (as block k of it) and note it as the importer would: the replies before it, its words.
    messages: list[Any] = []
    for is_user, blocks in shape:
        if is_user:
            messages.append(_user(*[f"u{len(messages)}-{b}" for b in range(blocks)]))
        else:
            messages.append(_reply(f"r{len(messages)}"))
    users = [i for i, m in enumerate(messages) if isinstance(m, UserMessage)]
    if not users:
        return
    target = data.draw(st.sampled_from(users))
    # The summary's message is the last user message before the next reply.
    following = [
        i for i in range(target + 1, len(messages)) if isinstance(messages[i], AssistantMessage)
    ]
    if any(
        isinstance(messages[i], UserMessage)
        for i in range(target + 1, following[0] if following else len(messages))
    ):
        return  # another user message follows it before the next reply: that one is the summary
    block = data.draw(st.integers(0, len(messages[target].content) - 1))
    head = messages[target].content[block].text
    replies_before = sum(isinstance(m, AssistantMessage) for m in messages[:target])
    assert _placed([{"replies_before": replies_before, "summary_head": head}], messages) == [
        (target, block)
    ]
