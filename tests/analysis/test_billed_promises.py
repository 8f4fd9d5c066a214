"""`Bill.over` and `bill_of`, each promise on a bill written out here: a replayed request is over
its limit by the bill when the bill of the recorded request it stands for *passed* the limit and
the replay holds at least what that request held — or when its calibrated size (of its own
model, in the first segment) passes the limit; never on an equal figure, never without one of
the two."""

from __future__ import annotations

from ctxlab.analysis._billed import Bill, bill_of
from ctxlab.analysis._calibration import Calibration, CalibrationFit, CalibrationPoint
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage

OPUS = CalibrationFit("opus", 1.0, (1.0, 1.0), {0: 1_000.0, 1: 5_000.0}, {}, 3)
HAIKU = CalibrationFit("haiku", 2.0, (2.0, 2.0), {0: 3_000.0}, {}, 3)
# The first request is Opus's: without a model, a request is Opus's.
CALIBRATION = Calibration((OPUS, HAIKU), (CalibrationPoint(0, 10, 20, 0, "opus"),))


def test_over_by_the_bill_only_past_the_limit_and_only_holding_as_much() -> None:
    bill = Bill({5: 9_000}, {5: 4_000})
    # total − unrecorded is what the file shows: compared with the recorded request's count.
    assert bill.over(6_000, 2_000, 5, 8_999)
    assert not bill.over(6_000, 2_000, 5, 9_000)  # billed exactly the limit: it fitted
    assert not bill.over(5_999, 2_000, 5, 8_999)  # holds less than the recorded request
    assert not bill.over(99_000, 0, 6, 8_999)  # another reply: no bill, no calibration


def test_a_bill_without_the_recorded_requests_count_says_nothing() -> None:
    # Without ctxlab's count of the recorded request, holding "as much" cannot be judged.
    bill = Bill({5: 9_000})
    assert [bill.over(total, 0, 5, 1_000) for total in (1, 9_000, 500_000)] == [False] * 3


def test_over_by_the_calibrated_size_of_the_requests_own_model_in_the_first_segment() -> None:
    bill = Bill({}, {}, CALIBRATION, {3: "haiku"})
    # Haiku's fit for reply 3: 3,000 + 2 × 1,500 = 6,000.
    assert bill.over(2_000, 500, 3, 5_999) and not bill.over(2_000, 500, 3, 6_000)
    # Reply 1 has no model: the first request's (Opus: 1,000 + 1,500, segment 0's part).
    assert bill.over(2_000, 500, 1, 2_499) and not bill.over(2_000, 500, 1, 2_500)


def test_a_bill_is_empty_without_usage_or_without_a_calibration() -> None:
    messages = (
        UserMessage(content="one"),
        AssistantMessage(content="first"),
        UserMessage(content="two"),
        AssistantMessage(content="second"),
    )
    billed = Transcript("t", {}, "", messages, usage={1: ProviderUsage(100, 1)})
    assert bill_of(billed, None) == Bill()
    assert bill_of(Transcript("t", {}, "", messages), CALIBRATION) == Bill()
    assert not Bill()


def test_bill_of_keys_each_point_by_its_reply_and_skips_points_of_no_request() -> None:
    messages = tuple(
        m
        for n in range(3)
        for m in (UserMessage(content=f"step {n}"), AssistantMessage(content=f"done {n}"))
    )
    usage = {1: ProviderUsage(100, 1), 3: ProviderUsage(200, 1), 5: ProviderUsage(300, 1)}
    transcript = Transcript("t", {}, "", messages, usage=usage)
    points = (
        CalibrationPoint(9, 50, 900, 0, "opus"),  # no request 9 here
        CalibrationPoint(1, 20, 200, 0, "haiku"),
        CalibrationPoint(2, 30, 300, 0, None),
    )
    calibration = Calibration((OPUS,), points)
    bill = bill_of(transcript, calibration)
    assert bill == Bill({3: 200, 5: 300}, {3: 20, 5: 30}, calibration, {3: "haiku"})
    assert bill
