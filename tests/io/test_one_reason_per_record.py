"""A record left out is counted once, for one reason: a message of only parts left out is skipped
for its first part's reason — not also as an empty message (i67-skip)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io._build import ConversationBuilder
from tests.io.contracts.letta import agent_v1
from tests.io.shown import added_up

_ORPHAN = {"type": "tool_result", "content": "x"}
_NO_URL = {"type": "image_url", "image_url": {"url": ""}}


def _chat(part: dict[str, Any], *, beside: bool) -> list[dict[str, Any]]:
    content = [{"type": "text", "text": "look"}, part] if beside else [part]
    return [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "a"},
        {"role": "user", "content": content},
        {"role": "assistant", "content": "ok"},
    ]


def _letta(part: Any, *, beside: bool) -> dict[str, Any]:
    content = [{"type": "text", "text": "look"}, part] if beside else [part]
    return agent_v1(
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": content},
        {"role": "assistant", "content": "ok"},
    )


# (format, document of a message holding the part alone or beside a text, the part's reason)
CASES = [
    ("anthropic", lambda beside: _chat(_ORPHAN, beside=beside), "tool result without a call id"),
    ("openai", lambda beside: _chat(_NO_URL, beside=beside), "image without data"),
    (
        "letta",
        lambda beside: _letta({"type": "omitted_reasoning"}, beside=beside),
        "omitted reasoning",
    ),
    ("letta", lambda beside: _letta("junk", beside=beside), "unreadable part"),
]


@pytest.mark.parametrize("beside", [False, True])
@pytest.mark.parametrize(("format", "document", "reason"), CASES)
def test_a_message_of_only_a_part_left_out_is_skipped_once_for_it(
    format: str, document: Any, reason: str, beside: bool
) -> None:
    # Alone, the part is the reason its message is skipped (once: not also "empty message");
    # beside a text kept, it is a part left out of a message used.
    transcript = load(document(beside), format=format)
    assert transcript.meta["skipped"] == {reason: 1}
    census = added_up(transcript)
    as_expected = ({}, {reason: 1}) if beside else ({reason: 1}, {})
    assert (census.skipped, census.left_out) == as_expected


_PARTS = {
    "text": {"type": "text", "text": "t"},
    "orphan": _ORPHAN,
    "bare image": {"type": "image", "source": {"type": "url", "url": ""}},
}
_REASONS = {"orphan": "tool result without a call id", "bare image": "image without data"}


@given(st.lists(st.lists(st.sampled_from(sorted(_PARTS)), max_size=4), min_size=1, max_size=5))
def test_each_record_and_part_is_counted_once(records: list[list[str]]) -> None:
    # Each record a user message of these parts: kept when one is a text, else skipped (the
    # importer's "empty message") — for its first part left out, when it had one.
    builder = ConversationBuilder("test", unit="message")
    expected: dict[str, int] = {}
    for kinds in records:
        builder.record("user message")
        if not builder.add("user", [_PARTS[k] for k in kinds]):
            builder.skip("empty message")
        left_out = [_REASONS[k] for k in kinds if k != "text"]
        counted = left_out if "text" in kinds else (left_out[:1] or ["empty message"])
        for reason in counted:
            expected[reason] = expected.get(reason, 0) + 1
    builder.add("assistant", [{"type": "text", "text": "ok"}])
    assert builder.skipped == expected
    census = builder.census([], {})
    merged = dict(census.skipped)
    for reason, count in census.left_out.items():
        merged[reason] = merged.get(reason, 0) + count
    assert merged == expected
    assert sum(census.skipped.values()) == sum("text" not in kinds for kinds in records)
