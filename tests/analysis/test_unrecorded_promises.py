"""`unrecorded_part` and `UnrecordedPart`, each promise on the value a user reads: the part as
stated or from a profile (what it stands for, how it is known, one size for all), from the bill
(a size per model and segment, the first request's model first, never below zero), the size a
request carries (its model's in its segment or the nearest earlier one, segment 0 unless told),
how each is explained, and the model of each reply."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab.analysis._calibration import Calibration, CalibrationFit, CalibrationPoint
from ctxlab.analysis._unrecorded import (
    UNRECORDED_PROFILES,
    UnrecordedPart,
    reply_models,
    unrecorded_part,
)
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.materials import Unrecorded
from ctxlab.messages import AssistantMessage, UserMessage

MESSAGES = (
    UserMessage(content="one"),
    AssistantMessage(content="first"),
    UserMessage(content="two"),
    AssistantMessage(content="second"),
)


def _transcript(system: str = "", **meta: Any) -> Transcript:
    return Transcript("t", meta, system, MESSAGES)


# --- stated, or a profile -----------------------------------------------------------------------


def test_a_stated_size_is_one_size_for_every_request_of_what_the_file_lacks() -> None:
    part = unrecorded_part(_transcript(), 0)
    assert part == UnrecordedPart(
        "System prompt", "stated", "stated: 0 tokens a request (unrecorded_tokens=)", {(None, 0): 0}
    )
    complete = unrecorded_part(_transcript("You are careful."), 7_500)
    assert complete is not None
    assert (complete.parts, complete.method, complete.sizes) == (
        "what the recording does not hold",
        "stated",
        {(None, 0): 7_500},
    )
    # A stated size is the same in every segment, and its explanation is the statement.
    assert complete.size(3, 4) == 7_500
    assert complete.at(3, 4) == Unrecorded(7_500, complete.parts, complete.detail, "stated")


def test_a_value_it_cannot_take_is_refused_saying_what_it_takes() -> None:
    with pytest.raises(UsageError) as refused:
        unrecorded_part(_transcript(), -1)
    assert str(refused.value) == (
        "unrecorded_tokens must be a whole number of tokens a request (0 to 1,099,511,627,776), "
        "a profile name (claude_code) or None, got -1"
    )
    # More tokens than any request holds, too (a number of 5,000 digits crashed the message).
    with pytest.raises(UsageError, match="got a number of 16,610 bits"):
        unrecorded_part(_transcript(), 10**5_000)
    with pytest.raises(UsageError) as unknown:
        unrecorded_part(_transcript(), "cursor")
    assert str(unknown.value) == (
        "unrecorded_tokens='cursor' is no known harness profile; pass a number of tokens a "
        "request, or one of claude_code"
    )


def test_a_profile_is_its_own_size_and_says_where_the_figure_comes_from() -> None:
    profile = UNRECORDED_PROFILES["claude_code"]
    part = unrecorded_part(_transcript(), "claude_code")
    assert part == UnrecordedPart(
        profile.parts,
        "profile",
        f"profile 'claude_code': {profile.source}",
        {(None, 0): profile.tokens},
    )
    assert part.at() == Unrecorded(profile.tokens, profile.parts, part.detail, "profile")


# --- from the bill -------------------------------------------------------------------------------


OPUS = CalibrationFit(
    "opus", 1.0, (1.0, 1.0), {0: 20_000.4, 2: 26_000.0}, {0: (19_000, 21_000), 2: (0, 0)}, 6
)
HAIKU = CalibrationFit("haiku", 1.3, (1.3, 1.3), {0: 0.0, 1: -40.0}, {0: (-10, 10), 1: (0, 0)}, 4)


def _from_bill() -> UnrecordedPart:
    # The fits in another order than the requests': Haiku answered the first request.
    points = (CalibrationPoint(0, 10, 20, 0, "haiku"), CalibrationPoint(1, 10, 20, 0, "opus"))
    transcript = _transcript(reply_models={"0": "haiku", "1": "opus"})
    part = unrecorded_part(transcript, calibration=Calibration((OPUS, HAIKU), points))
    assert part is not None
    return part


def test_from_the_bill_a_size_per_model_and_segment_the_first_requests_model_first() -> None:
    part = _from_bill()
    assert (part.parts, part.method) == ("System prompt", "billed")
    assert list(part.sizes.items()) == [
        (("haiku", 0), 0),
        (("haiku", 1), 0),  # a negative fixed part is no part: 0, not below
        (("opus", 0), 20_000),
        (("opus", 2), 26_000),
    ]
    assert part.tokens == 0  # the first request's model's first segment
    assert part.models == {1: "haiku", 3: "opus"}
    assert part.detail == (
        "inferred from the bill: billed − ratio × ctxlab's count of what the file shows, median "
        "over each model's first requests and again after each recorded compaction (haiku: "
        "ratio 1.300, IQR -10–10; opus: ratio 1.000, IQR 19,000–21,000)"
    )
    assert (
        part.describe()
        == f"not recorded (System prompt): 0–26,000 tokens a request — {part.detail}"
    )


def test_from_the_bill_of_a_recording_that_names_no_model_its_detail_says_the_model() -> None:
    fit = CalibrationFit(None, 1.1, (1.1, 1.1), {0: 4_000.0}, {0: (3_900, 4_100)}, 5)
    points = (CalibrationPoint(0, 10, 4_011, 0, None),)
    part = unrecorded_part(_transcript(), calibration=Calibration((fit,), points))
    assert part is not None
    assert part.sizes == {(None, 0): 4_000}
    assert part.detail.endswith("compaction (the model: ratio 1.100, IQR 3,900–4,100)")


def test_a_request_carries_its_models_size_in_its_segment_or_the_nearest_earlier_one() -> None:
    part = _from_bill()
    assert [part.size(3, s) for s in range(4)] == [20_000, 20_000, 26_000, 26_000]
    assert part.size(3) == 20_000  # segment 0 unless told
    # A reply of no known model: the first model's.
    assert [part.size(9, s) for s in range(3)] == [0, 0, 0]
    assert part.at(3, 3) == Unrecorded(
        26_000,
        "System prompt",
        "inferred from the bill (opus, after recorded compaction 2)",
        "opus/2",
    )
    assert part.at(3) == Unrecorded(
        20_000, "System prompt", "inferred from the bill (opus, first requests)", "opus/0"
    )


def test_a_part_of_no_model_is_keyed_all_and_explained_without_one() -> None:
    part = UnrecordedPart(
        "System prompt", "billed", "from the bill", {(None, 0): 900, (None, 1): 1_200}
    )
    assert (part.size(), part.size(None, 1)) == (900, 1_200)  # segment 0 unless told
    assert part.at(None, 1) == Unrecorded(
        1_200, "System prompt", "inferred from the bill (after recorded compaction 1)", "all/1"
    )
    assert part.at() == Unrecorded(
        900, "System prompt", "inferred from the bill (first requests)", "all/0"
    )


def test_a_part_with_no_size_is_zero_tokens() -> None:
    part = UnrecordedPart("System prompt", "billed", "nothing billed", {})
    assert (part.tokens, part.size(), part.size(5, 2)) == (0, 0, 0)
    assert part.at(5, 2) == Unrecorded(
        0, "System prompt", "inferred from the bill (first requests)", "all/0"
    )


def test_describe_gives_the_range_of_three_sizes_from_smallest_to_largest() -> None:
    part = UnrecordedPart(
        "System prompt", "billed", "x", {("m", 0): 500, ("m", 1): 9_000, ("m", 2): 2_000}
    )
    assert part.describe() == "not recorded (System prompt): 500–9,000 tokens a request — x"


# --- the model of each reply ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "models"),
    [
        ({"models": ["claude-opus-4-6"]}, {1: "claude-opus-4-6", 3: "claude-opus-4-6"}),
        ({"models": ["claude-opus-4-6", "claude-haiku-4-5"]}, {}),
        (
            {"models": ["claude-opus-4-6"], "reply_models": {"1": "claude-haiku-4-5"}},
            {1: "claude-opus-4-6", 3: "claude-haiku-4-5"},
        ),
        ({"models": "claude-opus-4-6"}, {}),
        ({}, {}),
    ],
)
def test_each_replys_model_is_the_recorded_one_else_the_sessions_only_model(
    meta: dict[str, Any], models: dict[int, str]
) -> None:
    assert reply_models(_transcript(**meta)) == models
