"""The census API: how an importer reports what it read, used and skipped, and what the census
says when something does not add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io import Census
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._census import _plural, holdings
from ctxlab.messages import ProviderUsage

USAGE = ProviderUsage(10, 2)


def _census(builder: ConversationBuilder) -> Census:
    _, notes, _, _ = builder.finish()
    census = Census.from_meta(notes["census"])
    assert census is not None
    return census


def test_each_record_is_used_or_skipped_and_the_census_adds_up() -> None:
    builder = ConversationBuilder("t", unit="line")
    builder.record("user")
    builder.text("user", "hello")
    builder.record("meta")
    builder.use()
    builder.record("progress", 3)
    builder.skip("progress line")
    builder.record("assistant")
    builder.add("assistant", [{"type": "text", "text": "hi"}, {"type": "server_thing"}], USAGE)
    census = _census(builder)
    assert census.read == {"user": 1, "meta": 1, "progress": 3, "assistant": 1}
    assert census.used == {"user": 1, "meta": 1, "assistant": 1}
    assert census.skipped == {"progress line": 3}
    assert census.left_out == {"server_thing block (not modelled)": 1}
    assert (census.messages, census.replies, census.usage_read, census.usage_placed) == (2, 1, 1, 1)
    assert census.blocks == {"text": 2}
    assert census.adds_up and census.problems() == []


def test_a_record_neither_used_nor_skipped_is_unaccounted_and_does_not_add_up() -> None:
    builder = ConversationBuilder("t", unit="event")
    builder.record("user")
    builder.text("user", "hello")
    builder.record("user")
    builder.text("user", "   ")  # nothing kept, and the importer did not say why
    census = _census(builder)
    assert census.unaccounted == {"user": 1}
    assert not census.adds_up
    assert census.problems() == ["2 events read but 1 used and 0 skipped (1 user unaccounted)"]
    assert "UNACCOUNTED: 1 user" in census.summary()


def test_usage_that_lands_on_no_reply_is_counted_lost_with_its_reason() -> None:
    builder = ConversationBuilder("t")
    builder.record("usage")
    builder.usage_of_last_reply(USAGE)  # before any reply
    builder.skip("usage before any reply")
    builder.record("user")
    builder.text("user", "go")
    builder.record("reply")
    builder.text("assistant", "ok")
    builder.record("usage")
    builder.usage_of_last_reply(USAGE)
    builder.record("usage")
    builder.usage_of_last_reply(ProviderUsage(11, 3))  # the same reply again
    builder.record("reply")
    builder.add("assistant", [{"type": "thinking_only"}], USAGE)  # nothing kept
    builder.skip("reasoning only")
    messages, _, usage, _ = builder.finish()
    census = Census.from_meta(builder.census(messages, usage).as_meta())
    assert census is not None
    assert census.usage_read == 4
    assert census.usage_placed == 1
    assert census.usage_lost == {
        "before any reply": 1,
        "replaced by a later usage of the same reply": 1,
        "on a reply with nothing kept": 1,
    }
    assert usage == {1: ProviderUsage(11, 3)}
    assert census.adds_up


def test_a_skip_in_a_used_record_is_a_part_left_out_and_outside_a_record_a_record() -> None:
    builder = ConversationBuilder("t")
    builder.skip("legacy line", 2)  # an importer that names no record
    builder.record("reply")
    builder.text("assistant", "ok")
    builder.skip("thought summary", 3)
    census = _census(builder)
    assert census.read == {"legacy line": 2, "reply": 1}
    assert census.skipped == {"legacy line": 2}
    assert census.left_out == {"thought summary": 3}
    assert builder.skipped == {"legacy line": 2, "thought summary": 3}
    assert census.adds_up


def test_the_summary_is_one_line_that_names_the_largest_reasons() -> None:
    census = Census(
        unit="line",
        read={"a": 10, "b": 5},
        used={"a": 9},
        skipped={"x": 3, "y": 2, "z": 1},
        messages=4,
        replies=2,
        tool_calls=1,
        usage_read=2,
        usage_placed=2,
    )
    assert census.summary() == (
        "read 15 lines: 9 used, 6 skipped (3 x, 2 y, 1 z) → 4 messages, 1 tool call, "
        "usage on 2 of 2 replies"
    )
    assert "\n" not in census.summary() and str(census) == census.summary()


@pytest.mark.parametrize(
    ("unit", "one", "many"),
    [
        ("entry", "1 entry", "3 entries"),  # SWE-agent's history entries: not "entrys"
        ("history item", "1 history item", "3 history items"),
        ("line", "1 line", "3 lines"),
        ("key", "1 key", "3 keys"),  # a vowel before the y: no "keies"
        ("batch", "1 batch", "3 batches"),
    ],
)
def test_the_summary_and_the_problems_name_the_unit_in_good_english(
    unit: str, one: str, many: str
) -> None:
    single = Census(unit=unit, read={"a": 1}, used={"a": 1}, skipped={}, messages=1, replies=1)
    assert single.summary().startswith(f"read {one}: 1 used → 1 message, 0 tool calls, ")
    assert single.summary().endswith("usage on 0 of 1 reply")
    several = Census(unit=unit, read={"a": 3}, used={"a": 1}, skipped={}, usage_read=1)
    assert several.summary().startswith(f"read {many}: 1 used")
    assert several.problems() == [
        f"{many} read but 1 used and 0 skipped",
        "1 usage report read but 0 placed and 0 lost",
    ]


def test_a_swe_agent_census_counts_entries(tmp_path: Path) -> None:
    history = [
        {"role": "system", "content": "You are an agent."},
        {"role": "user", "content": "Fix the bug."},
        {"role": "assistant", "content": "Done."},
    ]
    path = tmp_path / "run.traj"
    path.write_text(json.dumps({"history": history, "trajectory": []}), encoding="utf-8")
    census = load(path, format="swe_agent").census
    assert census is not None
    assert str(census) == (
        "read 3 entries: 3 used → 2 messages, 0 tool calls, usage on 0 of 1 reply"
    )


def test_the_kinds_past_the_largest_three_are_counted_in_good_english() -> None:
    four = Census(unit="line", read={"a": 4}, used={}, skipped={"w": 1, "x": 1, "y": 1, "z": 1})
    assert "(1 w, 1 x, 1 y, 1 more kind)" in four.summary()
    five = Census(unit="line", read={"a": 5}, used={}, skipped={k: 1 for k in "vwxyz"})
    assert "(1 v, 1 w, 1 x, 2 more kinds)" in five.summary()


def test_from_meta_reads_back_what_as_meta_wrote_and_refuses_what_is_not_a_census() -> None:
    census = Census(unit="span", read={"llm": 2}, used={"llm": 2}, skipped={}, messages=3)
    assert Census.from_meta(census.as_meta()) == census
    assert Census.from_meta(None) is None
    assert Census.from_meta({"read": {"a": "many"}}) is None
    assert Census.from_meta({"unit": "line"}) is None


def test_a_saved_transcript_has_a_census_of_its_own_file_and_keeps_the_sources(
    tmp_path: Path,
) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "done"},
    ]
    original = load(messages, format="anthropic")
    assert original.census is not None
    path = original.save(tmp_path / "t.jsonl")
    again = load(path)
    assert again.census is not None
    assert again.census.read == {"meta": 1, "message": 2}
    assert again.census.adds_up
    assert (again.census.messages, again.census.replies) == (2, 1)
    assert again.meta["source_census"] == original.meta["census"]


def test_a_transcript_says_its_census_in_its_html() -> None:
    transcript = load([{"role": "user", "content": "go"}], format="anthropic")
    assert transcript.census is not None
    assert str(transcript.census) in transcript._repr_html_().replace("&gt;", ">")


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(alphabet="bcdfghjklmnpqrtvwxz", min_size=1, max_size=6), st.sampled_from("aeiou"))
def test_a_nouns_plural_follows_the_english_rule(stem: str, vowel: str) -> None:
    # Written out here, not taken from the census: consonant + y → ies, vowel + y → ys,
    # a hissing end → es, else s.
    assert _plural(stem + "y") == stem + "ies"
    assert _plural(stem + vowel + "y") == stem + vowel + "ys"
    for end in ("s", "x", "z", "ch", "sh"):
        assert _plural(stem + end) == stem + end + "es"
    assert _plural(stem + "t") == stem + "ts"
    assert _plural("y") == "ys"


def test_a_group_of_no_record_counts_nothing() -> None:
    builder = ConversationBuilder("t", unit="line")
    builder.record("progress", 0)
    builder.skip("progress line")
    builder.record("user")
    builder.text("user", "hello")
    census = _census(builder)
    assert census.read == {"user": 1} and census.skipped == {}


def test_the_summary_says_every_part_left_out_usage_lost_and_unaccounted() -> None:
    census = Census(
        unit="event",
        read={"a": 4},
        used={"a": 2},
        skipped={"b": 1, "a": 1},
        left_out={"thought": 2},
        unaccounted={"c": 1},
        messages=2,
        replies=1,
        tool_calls=0,
        usage_read=2,
        usage_placed=1,
        usage_lost={"replaced": 1},
    )
    assert census.summary() == (
        "read 4 events: 2 used, 2 skipped (1 a, 1 b) → 2 messages, 0 tool calls, usage on 1 of "
        "1 reply; parts left out: 2 thought; usage lost: 1 replaced; UNACCOUNTED: 1 c"
    )


def test_the_largest_reasons_come_first_then_by_name() -> None:
    census = Census(unit="line", read={"a": 9}, used={}, skipped={"b": 2, "z": 5, "a": 2})
    assert "(5 z, 2 a, 2 b)" in census.summary()


def test_a_census_read_back_without_a_unit_counts_records_and_holdings_of_nothing() -> None:
    census = Census.from_meta({"read": {"x": 2}, "used": {"x": 2}})
    assert census is not None and census.summary().startswith("read 2 records: 2 used")
    assert holdings([]) == {"messages": 0, "replies": 0, "tool_calls": 0, "blocks": {}}
