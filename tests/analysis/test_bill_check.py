"""The cache model checked against the bill (`ctxlab.cache_check`): its modelled reads and writes
agree request by request with an independent bill (`tests.analysis.raw_claude_bill`: Anthropic's
rules read afresh, sharing no code with ctxlab) on generated sessions with known gaps and on the
corpus's raw Claude Code files; the re-writes after long gaps are found by both; the agreement
figure has controls (the model without its clock, the recorded reads shuffled) that score
lower; usage that does not add up is flagged and left out, never a crash."""

from __future__ import annotations

import dataclasses
import math
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import calibrate, load, unrecorded_part
from ctxlab.analysis import cache_agreement, cache_check
from ctxlab.analysis._bill_check import agrees
from ctxlab.io._transcript import Transcript, corpus_dir
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from tests.analysis.claude_code_sessions import Turn, shuffled_reads, usages, write_session
from tests.analysis.raw_claude_bill import bill, read_session

RAW = corpus_dir() / "raw" / "claude_code"
CORPUS = sorted([*RAW.glob("*.jsonl"), *RAW.glob("*/subagents/*.jsonl")])
requires_corpus = pytest.mark.skipif(
    not CORPUS, reason="no raw Claude Code files: set CTXLAB_CORPUS to the folder holding raw/"
)
GAPS = RAW / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
"""The corpus session with a 4-hour and a 19-minute gap, 5-minute writes."""


def _compare(path: Path) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(ctxlab's modelled (read, write) per billed request, the independent bill's)."""
    frame = cache_check(load(path))
    ours = list(zip(frame["modelled_read"], frame["modelled_write"], strict=True))
    theirs = [(b.read, b.write) for b in bill(read_session(path))]
    return [(int(r), int(w)) for r, w in ours], theirs


def _billed(read: int, write: int, one_hour: int = 0, uncached: int = 1) -> dict[str, object]:
    """A request's usage as Claude Code records it."""
    return {
        "input_tokens": uncached,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": {
            "ephemeral_5m_input_tokens": write - one_hour,
            "ephemeral_1h_input_tokens": one_hour,
        },
        "output_tokens": 50,
    }


def _recorded(folder: Path, turns: list[Turn], billed: dict[int, dict[str, object]]) -> Path:
    """The file of the Claude Code session of ``turns`` (written in ``folder``), each request's
    usage recorded by the rules but for the requests ``billed`` gives another."""
    recorded = usages(turns)
    for request, usage in billed.items():
        recorded[request] = usage
    return write_session(folder / "session.jsonl", turns, recorded=recorded)


# -- generated sessions with known gaps ------------------------------------------------------


def test_a_long_gap_is_a_rewrite_for_both_and_a_short_one_a_read(tmp_path: Path) -> None:
    turns = [Turn(0, 20_000), Turn(30, 3_000), Turn(400, 2_000), Turn(60, 5_000)]
    path = write_session(tmp_path / "gaps.jsonl", turns, "5m")
    frame = cache_check(load(path))
    assert list(frame["gap"][1:]) == [30.0, 400.0, 60.0]
    # After 400 s (past the 5-minute lifetime) the whole prompt is written again: 25,000.
    assert list(frame["modelled_read"]) == [0, 20_000, 0, 25_000]
    assert list(frame["modelled_write"]) == [20_000, 3_000, 25_000, 5_000]
    assert list(frame["modelled_expired"]) == [0, 0, 23_000, 0]
    assert [(b.read, b.write, b.expired) for b in bill(read_session(path))] == [
        (0, 20_000, False),
        (20_000, 3_000, False),
        (0, 25_000, True),
        (25_000, 5_000, False),
    ]
    assert cache_agreement(frame).share == 1.0
    # With 1-hour writes the same gap is a read, written at the 1-hour TTL.
    hour = cache_check(load(write_session(tmp_path / "hour.jsonl", turns, "1h")))
    assert list(hour["modelled_read"]) == [0, 20_000, 23_000, 25_000]
    assert list(hour["modelled_write_1h"]) == [20_000, 3_000, 2_000, 5_000]
    assert list(hour["recorded_write_1h"]) == [19_999, 3_000, 2_000, 5_000]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    gaps=st.lists(
        st.sampled_from([0, 1, 45, 299, 300, 301, 900, 3_599, 3_600, 3_601, 14_400]),
        min_size=2,
        max_size=12,
    ),
    sizes=st.lists(st.integers(1, 40_000), min_size=12, max_size=12),
    ttl=st.sampled_from(["5m", "1h"]),
)
def test_generated_sessions_agree_with_the_independent_bill_request_by_request(
    tmp_path: Path, gaps: list[int], sizes: list[int], ttl: str
) -> None:
    turns = [Turn(gap, size) for gap, size in zip([0, *gaps[1:]], sizes, strict=False)]
    path = write_session(tmp_path / f"g{random.random()}.jsonl", turns, ttl)
    frame = cache_check(load(path))
    if frame.empty:  # every prompt below the minimum: no cache usage to check
        assert all(b.read == b.write == 0 for b in bill(read_session(path)))
        return
    ours, theirs = _compare(path)
    assert ours == theirs
    # The recorded split follows the same rules: every read agrees, and each request after a
    # gap longer than the lifetime read nothing.
    assert cache_agreement(frame).share == 1.0
    lifetime = 300 if ttl == "5m" else 3_600
    for gap, read in zip(frame["gap"], frame["modelled_read"], strict=True):
        if not math.isnan(gap) and gap > lifetime:
            assert read == 0


# -- the corpus's raw Claude Code files -----------------------------------------------------


@requires_corpus
@pytest.mark.parametrize("path", CORPUS, ids=[p.name for p in CORPUS])
def test_the_corpus_agrees_with_the_independent_bill_request_by_request(path: Path) -> None:
    ours, theirs = _compare(path)
    assert len(ours) == len(theirs) > 0
    assert ours == theirs


@requires_corpus
def test_the_rewrites_after_long_gaps_are_found_by_both() -> None:
    frame = cache_check(load(GAPS))
    independent = bill(read_session(GAPS))
    found = {}
    for written, minutes in ((83_565, 19), (82_720, 251)):
        (row,) = frame[(frame["recorded_write"] == written) & (frame["recorded_read"] == 0)].index
        found[written] = row
        assert round(frame.at[row, "gap"] / 60) == minutes
        assert frame.at[row, "modelled_read"] == 0
        assert frame.at[row, "modelled_write"] == pytest.approx(written, rel=0.001)
        assert frame.at[row, "modelled_expired"] > 0.95 * written
        assert frame.at[row, "agrees"]
        assert independent[row].read == 0 and independent[row].expired
    # Control: without the clock, the model reads the prefix it keeps warm, and disagrees.
    blind = cache_check(dataclasses.replace(load(GAPS), times={}))
    for row in found.values():
        assert blind.at[row, "modelled_read"] > 80_000
        assert not blind.at[row, "agrees"]
        assert "no clock" in blind.at[row, "why"]


@requires_corpus
def test_the_agreement_on_the_corpus_passes_the_bar_and_its_controls_score_lower() -> None:
    agreeing = compared = blind_agreeing = shuffled_agreeing = 0
    for path in CORPUS:
        transcript = load(path)
        agreement = cache_agreement(cache_check(transcript))
        agreeing += agreement.agreeing
        compared += agreement.compared
        if agreement.compared >= 10:  # a session, not one compaction call
            assert agreement.share >= 0.9, (path.name, agreement.line)
        blind = cache_agreement(cache_check(dataclasses.replace(transcript, times={})))
        blind_agreeing += blind.agreeing
        shuffled_agreeing += cache_agreement(cache_check(shuffled_reads(transcript))).agreeing
    assert agreeing / compared >= 0.9
    assert blind_agreeing < agreeing
    assert shuffled_agreeing < 0.8 * agreeing  # 605 of 882 against 859 when measured


@requires_corpus
def test_the_shuffled_control_leaves_each_bills_total_as_it_was() -> None:
    transcript = load(GAPS)
    shuffled = shuffled_reads(transcript)
    assert {r: u.total_input_tokens for r, u in transcript.usage.items()} == {
        r: u.total_input_tokens for r, u in shuffled.usage.items()
    }
    before, after = cache_check(transcript), cache_check(shuffled)
    # The requests are sized from their totals alone: the modelled writes and reads move only
    # where the lifetime inferred from the (shuffled) reads moves.
    columns = ["recorded_uncached", "recorded_read", "recorded_write"]
    assert list(before[columns].sum(axis=1)) == list(after[columns].sum(axis=1))
    assert list(before["recorded_read"]) != list(after["recorded_read"])


# -- what "within 2 %" means ----------------------------------------------------------------


def test_within_two_percent_of_the_recorded_read_and_of_nothing_read() -> None:
    assert agrees(10_200, 10_000, 50_000) and agrees(9_800, 10_000, 50_000)
    assert not agrees(10_201, 10_000, 50_000) and not agrees(9_799, 10_000, 50_000)
    # Nothing read: the model may read at most 2 % of the request's billed input.
    assert agrees(0, 0, 50_000) and agrees(1_000, 0, 50_000)
    assert not agrees(1_001, 0, 50_000)


# -- bad input ------------------------------------------------------------------------------


def _transcript(usages: list[ProviderUsage], times: dict[int, float], **meta: object) -> Transcript:
    messages: list[UserMessage | AssistantMessage] = []
    for number in range(len(usages)):
        messages.append(UserMessage(content=f"question {number} " + "word " * 400))
        messages.append(AssistantMessage(content=f"answer {number}"))
    usage = {2 * n + 1: u for n, u in enumerate(usages)}
    return Transcript(
        "hand-made",
        {"models": ["claude-sonnet-4-5"], **meta},
        "",
        tuple(messages),
        usage=usage,
        times=times,
    )


def test_usage_that_does_not_add_up_is_flagged_and_left_out_of_the_figure() -> None:
    usages = [
        ProviderUsage(1, 10, 0, 5_000),
        ProviderUsage(1, 10, 5_000, 600, 900),  # 1-hour writes beyond the writes
        ProviderUsage(1, 10, 5_600, 700),  # its split was flagged by the importer
        ProviderUsage(0, 10, 0, 0),  # a bill of nothing
        ProviderUsage(1, 10, 6_300, 500),
    ]
    frame = cache_check(_transcript(usages, {}, cache_split_flagged=[5]))
    assert list(frame["trusted"]) == [True, False, False, False, True]
    assert list(frame["agrees"].isna()) == [False, True, True, True, False]
    assert frame.at[1, "why"] == (
        "not trusted: 1-hour cache writes 900 exceed the cache writes 600 they are part of"
    )
    assert frame.at[2, "why"].startswith("not trusted: its cache writes by TTL do not add up")
    assert frame.at[3, "why"] == "not trusted: a bill of 0 input tokens"
    agreement = cache_agreement(frame)
    assert (agreement.compared, agreement.not_trusted) == (2, 3)
    assert agreement.line.endswith("; 3 not trusted (usage that does not add up)")


@pytest.mark.parametrize(
    "split",
    [
        {"ephemeral_1h_input_tokens": 1_000},  # the rest of the writes not said
        {"ephemeral_5m_input_tokens": 3_000, "ephemeral_1h_input_tokens": -5},
        {"ephemeral_5m_input_tokens": 1_000, "ephemeral_1h_input_tokens": 1_000},
        "not a split",
    ],
)
def test_a_file_whose_split_does_not_add_up_is_flagged_not_trusted(
    tmp_path: Path, split: object
) -> None:
    turns = [Turn(0, 20_000), Turn(30, 3_000), Turn(30, 2_000)]
    split_off = {**usages(turns)[1], "cache_creation": split}
    frame = cache_check(load(_recorded(tmp_path, turns, {1: split_off})))
    assert list(frame["trusted"]) == [True, False, True]
    assert frame.at[1, "cause"] == "not trusted"
    assert frame.at[1, "why"].startswith("not trusted: its cache writes by TTL do not add up")
    agreement = cache_agreement(frame)
    assert (agreement.agreeing, agreement.compared, agreement.not_trusted) == (2, 2, 1)


@settings(max_examples=25, deadline=None)
@given(
    counts=st.lists(st.tuples(*(st.integers(0, 60_000) for _ in range(5))), min_size=1, max_size=8),
    times=st.lists(
        st.one_of(st.none(), st.floats(-1e12, 1e12, allow_nan=False), st.just(1e9)),
        min_size=8,
        max_size=8,
    ),
)
def test_hostile_usage_and_clocks_never_crash_nor_make_a_negative_gap(
    counts: list[tuple[int, int, int, int, int]], times: list[float | None]
) -> None:
    usages = [ProviderUsage(*c) for c in counts]
    clock = {2 * n + 1: t for n, t in enumerate(times[: len(usages)]) if t is not None}
    frame = cache_check(_transcript(usages, clock))
    if not any(u.cache_read_input_tokens or u.cache_creation_input_tokens for u in usages):
        assert frame.empty
        return
    gaps = [g for g in frame["gap"] if not math.isnan(g)]
    assert all(g >= 0 for g in gaps)
    agreement = cache_agreement(frame)
    assert agreement.compared + agreement.not_trusted == len(frame)
    assert all(frame["modelled_read"] >= 0) and all(frame["modelled_write"] >= 0)
    for trusted, agreed in zip(frame["trusted"], frame["agrees"], strict=True):
        assert trusted or agreed is None


def test_a_recording_without_cache_usage_has_nothing_to_check() -> None:
    frame = cache_check(_transcript([ProviderUsage(5_000, 10), ProviderUsage(6_000, 10)], {}))
    assert frame.empty
    agreement = cache_agreement(frame)
    assert agreement.compared == 0 and math.isnan(agreement.share)
    assert agreement.line == "cache model: no billed request with cache usage to check"


def test_a_model_of_unknown_cache_rules_is_not_checked_and_said_so() -> None:
    usages = [ProviderUsage(1, 10, 0, 5_000), ProviderUsage(1, 10, 5_000, 600)]
    unknown = dataclasses.replace(_transcript(usages, {}), meta={"models": ["my-llm-7b"]})
    frame = cache_check(unknown)
    assert list(frame["cause"]) == ["no rules", "no rules"]
    assert frame["agrees"].isna().all()
    agreement = cache_agreement(frame)
    assert (agreement.compared, agreement.unmodelled) == (0, 2)
    assert agreement.line == (
        "cache model: not checked — no known cache rules for this recording's model "
        "(2 billed requests)"
    )


def test_each_request_writes_with_its_own_ttl_in_a_session_that_mixes_them(
    tmp_path: Path,
) -> None:
    # 1-hour writes, then 5-minute ones. After a pause longer than 5 minutes the last
    # request finds the 5-minute entry gone but the 1-hour one (refreshed by the read before)
    # alive: it reads that and writes the rest again.
    turns = [
        Turn(0, 20_000, "1h"),
        Turn(600, 3_000, "1h"),
        Turn(30, 2_000, "5m"),
        Turn(700, 1_000, "5m"),
    ]
    path = _recorded(tmp_path, turns, {3: _billed(22_999, 3_000)})
    frame = cache_check(load(path))
    assert list(frame["recorded_write_1h"]) == [19_999, 3_000, 0, 0]
    assert list(frame["modelled_read"]) == [0, 20_000, 23_000, 23_000]
    assert list(frame["modelled_write"]) == [20_000, 3_000, 2_000, 3_000]
    assert list(frame["modelled_write_1h"]) == [20_000, 3_000, 0, 0]
    assert frame.at[3, "modelled_expired"] == 2_000
    assert [(b.read, b.write) for b in bill(read_session(path))] == list(
        zip(frame["modelled_read"], frame["modelled_write"], strict=True)
    )
    assert cache_agreement(frame).share == 1.0


def test_a_turn_of_more_than_twenty_blocks_is_past_the_look_back_for_both(
    tmp_path: Path,
) -> None:
    turns = [Turn(0, 20_000), Turn(10, 3_000, blocks=25), Turn(10, 2_000)]
    path = write_session(tmp_path / "blocks.jsonl", turns)
    transcript = load(path)
    frame = cache_check(transcript)
    independent = bill(read_session(path))
    # The third request's breakpoint is 26 blocks past the second's end: no read of the
    # conversation. ctxlab's model still reads its fixed part (the unrecorded System prompt
    # and tools, at their own breakpoint); the independent bill, which cannot size it, none.
    assert independent[2].read == 0
    part = unrecorded_part(transcript, calibration=calibrate(transcript))
    assert part is not None
    assert frame.at[2, "modelled_read"] == part.size(frame.at[2, "reply"])
    assert frame.at[2, "modelled_read"] < 20_000
    assert frame.at[1, "modelled_read"] == independent[1].read == 20_000


def test_the_frame_gives_times_gaps_the_split_the_costs_and_the_lifetime_used(
    tmp_path: Path,
) -> None:
    # The first request read 5,000 tokens cached before the recording (warm elsewhere); the
    # second came at the same second as the first (a gap of 0).
    turns = [Turn(0, 20_000), Turn(0, 3_000), Turn(45, 2_000)]
    frame = cache_check(load(_recorded(tmp_path, turns, {0: _billed(5_000, 14_999)})))
    assert list(frame["at"]) == [1_770_000_000.0, 1_770_000_000.0, 1_770_000_045.0]
    assert math.isnan(frame.at[0, "gap"]) and list(frame["gap"][1:]) == [0.0, 45.0]
    assert list(frame["recorded_write_5m"]) == [14_999, 3_000, 2_000]
    assert list(frame["recorded_write_1h"]) == [0, 0, 0]
    assert list(frame["modelled_uncached"]) == [0, 0, 0]
    # Sonnet 4.5: $3 input, $15 output, writes $3.75, reads $0.30 a million.
    assert frame.at[0, "billed_cost"] == pytest.approx(
        (1 * 3 + 14_999 * 3.75 + 5_000 * 0.3 + 50 * 15) / 1e6
    )
    assert frame.at[0, "modelled_cost"] == pytest.approx((20_000 * 3.75 + 50 * 15) / 1e6)
    assert frame.at[2, "modelled_cost"] == pytest.approx(
        (23_000 * 0.3 + 2_000 * 3.75 + 50 * 15) / 1e6
    )
    assert frame.attrs["lifetimes"] == {
        "claude-sonnet-4-5-20250929": "cache lifetime 5 min as documented; the recording "
        "agrees: it still read after gaps up to 45 s"
    }
    assert (frame.at[0, "cause"], frame.at[0, "why"]) == (
        "warm elsewhere",
        "the first request of its model here: its prefix was cached before (kept warm by "
        "another session, or by the parent of a subagent)",
    )
    agreement = cache_agreement(frame)
    assert (agreement.agreeing, agreement.compared, agreement.not_trusted) == (2, 3, 0)
    assert agreement.disagreeing == ((0, frame.at[0, "why"]),)
    assert (
        agreement.line == "cache model: reads within 2 % of the bill on 66 % of requests (2 of 3)"
    )


def test_a_read_short_of_the_unchanged_prefix_is_a_changed_prefix_and_without_times_no_clock(
    tmp_path: Path,
) -> None:
    turns = [Turn(0, 20_000), Turn(10, 3_000), Turn(10, 2_000)]
    transcript = load(_recorded(tmp_path, turns, {2: _billed(0, 24_999)}))
    frame = cache_check(transcript)
    assert (frame.at[2, "cause"], frame.at[2, "why"]) == (
        "prefix changed",
        "the provider read 0 tokens of a prefix the model holds 23,000 of: what was sent "
        "changed without the file saying so",
    )
    blind = cache_check(dataclasses.replace(transcript, times={}))
    assert blind.at[2, "cause"] == "no clock"


@requires_corpus
def test_the_disagreements_of_a_real_session_are_told_apart() -> None:
    frame = cache_check(load(GAPS))
    causes = {int(r): c for r, c in zip(frame["request"], frame["cause"], strict=True) if c}
    # Its first request read the harness's prefix, cached by another session; request 61 is
    # the first after its /compact; request 137 followed a task notification, after which the
    # provider read only the System prompt's part (21,478 tokens).
    assert causes == {0: "warm elsewhere", 61: "compaction", 137: "prefix changed"}
    assert frame.at[137, "recorded_read"] == 21_478
