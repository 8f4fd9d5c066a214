"""What a calibration promises, on the values a user reads: which fit answers for which model,
the one line per model `describe` prints, the frame's figures (rounded to four places, flagged
only *past* `FLAG_ERROR`), which requests count, the forecasts from another session's fit, and
the note on each request (the first after a recorded compaction, the images in it); where a
ratio came from, the breaks in the bill and the requests billed 0 as `describe` lists them; the
tokenizer `calibrate` counts with, and that it counts each message once.

The bills here are exact (``billed = 1,000 + counted``): the fit is then exact too, so the
figures are asserted to the token, not approximately."""

from __future__ import annotations

import dataclasses
import math

from ctxlab.analysis._calibration import (
    FLAG_ERROR,
    FRAME_COLUMNS,
    Calibration,
    CalibrationFit,
    CalibrationPoint,
    calibrate,
    fit_points,
)
from ctxlab.analysis._calibration_fit import ASSUMED, GROWTH
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    ImageBlock,
    ProviderUsage,
    TextBlock,
    UserMessage,
)
from ctxlab.tokens import ApproximateCounter, TokenCache

# --- which fit answers ---------------------------------------------------------------------------

OPUS = CalibrationFit(
    "opus",
    1.25,
    (1.2, 1.3),
    {0: 26_000.0, 1: 33_000.0},
    {0: (25_900, 26_150), 1: (32_800, 33_300)},
    4,
)
HAIKU = CalibrationFit(None, 1.5, (1.5, 1.5), {0: 9_000.0}, {0: (9_000, 9_000)}, 2)


def _row(model: str | None, error: float, forecast_error: float | None) -> dict[str, object]:
    return {
        "model": model,
        "error": error,
        "forecast_error": forecast_error,
        "forecast_from": "the requests before it",
    }


def test_the_fit_of_the_first_requests_model_answers_when_none_is_named() -> None:
    # The fits in another order than the requests': the first request's model decides.
    points = (CalibrationPoint(0, 100, 9_200, 0, None), CalibrationPoint(1, 100, 26_200, 0, "opus"))
    calibration = Calibration((OPUS, HAIKU), points)
    assert calibration.fit() is HAIKU
    assert calibration.fit("opus") is OPUS and calibration.fit("sonnet") is None
    assert Calibration((OPUS, HAIKU), ()).fit() is OPUS
    assert Calibration((), points).fit() is None
    # calibrated(): the named model's fit, else the first request's; segment 0 by default.
    assert calibration.calibrated(1_000) == 9_000 + 1_500
    assert calibration.calibrated(1_000, 1, "opus") == 33_000 + 1_250
    assert calibration.calibrated(1_000, 0, "opus") == 26_000 + 1_250
    assert calibration.calibrated(1_000, 0, "sonnet") == 9_000 + 1_500
    assert Calibration((), ()).calibrated(1_000) is None
    # A first request whose model has no fit (a calibration made by hand): the first fit.
    other = Calibration((OPUS,), (CalibrationPoint(0, 100, 200, 0, "sonnet"),))
    assert other.calibrated(1_000) == 26_000 + 1_250
    # Segment 0 unless told, for a fit that has another part after a compaction.
    opus_only = Calibration((OPUS,), (CalibrationPoint(0, 100, 26_200, 0, "opus"),))
    assert (opus_only.calibrated(1_000), opus_only.calibrated(1_000, 1)) == (27_250, 34_250)


def test_describe_says_each_models_ratio_fixed_parts_and_error_then_the_out_of_sample_one() -> None:
    rows = [_row("opus", 0.02, None), _row("opus", 0.04, 0.05), _row(None, 0.3, 0.07)]
    calibration = Calibration((OPUS, HAIKU), (), rows)
    assert calibration.describe() == (
        "opus: 1.250 billed tokens per estimated token (IQR 1.200–1.300); unrecorded fixed part "
        "26,000 (IQR 25,900–26,150), 33,000 (IQR 32,800–33,300) after compaction 1 tokens; "
        "median error 3.0% in sample over 4 requests\n"
        "model: 1.500 billed tokens per estimated token (IQR 1.500–1.500); unrecorded fixed part "
        "9,000 (IQR 9,000–9,000) tokens; median error 30.0% in sample over 2 requests\n"
        "out of sample: median error 6.0%, each request forecast from the requests before it"
    )
    # A fit without a row of its own says so (nan), not another model's error.
    alone = Calibration((HAIKU,), (), [_row("opus", 0.02, None)])
    assert alone.describe().endswith("median error nan% in sample over 2 requests")
    assert Calibration((), ()).describe() == "no request with recorded usage: nothing to calibrate"


def test_describe_says_where_a_ratio_not_read_from_the_first_requests_came_from() -> None:
    grown = dataclasses.replace(HAIKU, model="gemini", ratio_from=GROWTH)
    assumed = dataclasses.replace(HAIKU, model="flash", ratio_from=ASSUMED)
    lines = Calibration((grown, assumed), ()).describe().splitlines()
    assert [line.split(";")[0:2] for line in lines] == [
        [
            "gemini: 1.500 billed tokens per estimated token (IQR 1.500–1.500",
            " read from the bill's growth between requests)",
        ],
        [
            "flash: 1.500 billed tokens per estimated token (IQR 1.500–1.500",
            " assumed: no request told it from the fixed part)",
        ],
    ]


def _said(**found: tuple[int, ...]) -> str:
    """The last line `describe` gives for a calibration with ``found`` (breaks, zero bills)."""
    return Calibration((HAIKU,), (), **found).describe().splitlines()[-1]  # type: ignore[arg-type]


BROKE = ": what the requests carried beyond the file changed without the file saying so; the "
BROKE += "fixed part is measured again from each"


def test_describe_names_the_breaks_in_the_bill_the_first_eight_then_an_ellipsis() -> None:
    assert _said(breaks=(5,)) == "the bill broke from the fit at request 5" + BROKE
    assert _said(breaks=(5, 9)) == "the bill broke from the fit at requests 5, 9" + BROKE
    eight = tuple(range(10, 18))
    assert _said(breaks=eight) == (
        "the bill broke from the fit at requests 10, 11, 12, 13, 14, 15, 16, 17" + BROKE
    )
    assert _said(breaks=(*eight, 18)) == (
        "the bill broke from the fit at requests 10, 11, 12, 13, 14, 15, 16, 17, ..." + BROKE
    )


def test_describe_names_the_requests_billed_zero_the_first_five_then_an_ellipsis() -> None:
    assert _said(zero_bills=(3, 4)) == (
        "2 requests billed 0 tokens (no usage recorded: request 3, 4): left out"
    )
    assert _said(zero_bills=(1, 2, 3, 4, 5)) == (
        "5 requests billed 0 tokens (no usage recorded: request 1, 2, 3, 4, 5): left out"
    )
    assert _said(zero_bills=(1, 2, 3, 4, 5, 6)) == (
        "6 requests billed 0 tokens (no usage recorded: request 1, 2, 3, 4, 5, ...): left out"
    )


def test_the_repr_gives_both_errors_or_says_there_is_none() -> None:
    rows = [_row("opus", 0.01, 0.03), _row("opus", 0.01, 0.03)]
    points = (CalibrationPoint(0, 1, 2), CalibrationPoint(1, 1, 2))
    assert repr(Calibration((OPUS,), points, rows)) == (
        "Calibration(2 requests, 1 models, median error 3.0% out of sample, 1.0% in sample)"
    )
    assert repr(Calibration((), ())) == (
        "Calibration(0 requests, 0 models, median error n/a out of sample, n/a in sample)"
    )


# --- fit_points: the frame's figures --------------------------------------------------------------


def _exact(*extra: CalibrationPoint) -> list[CalibrationPoint]:
    """Requests billed exactly 1,000 + their count, then ``extra``."""
    good = [
        CalibrationPoint(n, e, 1_000 + e, 0, "m") for n, e in enumerate(range(2_000, 7_000, 1_000))
    ]
    return [*good, *extra]


def test_a_request_is_flagged_only_past_a_tenth_off_and_its_figures_rounded_to_four_places() -> (
    None
):
    # 11,000 expected: billed 10,000 is exactly a tenth off (not flagged), 9,999 just past it.
    calibration = fit_points(
        _exact(
            CalibrationPoint(5, 10_000, 10_000, 0, "m"),
            CalibrationPoint(6, 10_000, 9_999, 0, "m", "images"),
        )
    )
    fit = calibration.fit()
    assert fit is not None and (fit.ratio, fit.fixed) == (1.0, {0: 1_000.0})
    frame = calibration.frame()
    assert list(frame.columns) == list(FRAME_COLUMNS)
    assert list(frame["model"]) == ["m"] * 7 and list(frame["segment"]) == [0] * 7
    assert list(frame["estimate"]) == [2_000, 3_000, 4_000, 5_000, 6_000, 10_000, 10_000]
    assert list(frame["calibrated"]) == [3_000, 4_000, 5_000, 6_000, 7_000, 11_000, 11_000]
    assert list(frame["error"])[-2:] == [FLAG_ERROR, 0.1001]
    assert list(frame["flag"]) == [""] * 6 + ["images"]
    # Forecast from the requests before each: the first has none; the good ones are exact.
    assert math.isnan(frame["forecast"][0])
    assert list(frame["forecast"])[1:] == [4_000, 5_000, 6_000, 7_000, 11_000, 11_000]
    assert list(frame["forecast_error"])[1:] == [0.0, 0.0, 0.0, 0.0, 0.1, 0.1001]
    assert calibration.forecast_from == "the requests before it"


def test_a_request_billed_nothing_is_left_out_and_one_counted_as_nothing_is_kept() -> None:
    points = _exact(
        CalibrationPoint(5, 7_000, 0, 0, "m"),  # no bill: nothing to reconcile
        CalibrationPoint(6, 0, 1_000, 0, "m"),  # nothing counted, billed the fixed part
        CalibrationPoint(7, 1, 1, 0, "m"),  # the smallest bill there is
        CalibrationPoint(8, -1, 1_000, 0, "m"),  # a count that cannot be
    )
    calibration = fit_points(points)
    assert [p.number for p in calibration.points] == [0, 1, 2, 3, 4, 6, 7]
    assert list(calibration.frame()["step"]) == [0, 1, 2, 3, 4, 6, 7]
    assert calibration.zero_bills == (5,)  # billed 1 token is a bill


def test_with_another_sessions_fit_every_request_is_forecast_from_it() -> None:
    fit = CalibrationFit("m", 2.0, (2.0, 2.0), {0: 5_000.0}, {0: (5_000, 5_000)}, 7)
    yesterday = Calibration((fit,), ())
    calibration = fit_points(_exact(), prior=yesterday)
    frame = calibration.frame()
    # Yesterday's fit (5,000 + 2 × count), not today's (1,000 + count): the first one too.
    assert list(frame["forecast"]) == [9_000, 11_000, 13_000, 15_000, 17_000]
    assert list(frame["calibrated"]) == [3_000, 4_000, 5_000, 6_000, 7_000]
    assert calibration.forecast_from == "another session's fit"
    assert calibration.describe().endswith("each request forecast from another session's fit")


# --- calibrate: what each request's point says ---------------------------------------------------


def _image() -> ImageBlock:
    return ImageBlock(source=Base64ImageSource(media_type="image/png", data="iVBORw0KGgo="))


def test_each_billed_request_is_a_point_with_its_reply_and_why_it_may_not_fit() -> None:
    messages = (
        UserMessage(content=(TextBlock(text="What is in these?"), _image(), _image())),
        AssistantMessage(content="A cat."),  # 1: no usage recorded
        UserMessage(content="And this?"),
        AssistantMessage(content="A dog."),  # 3
        UserMessage(content=(TextBlock(text="Summary: a cat and a dog."),)),  # 4: the summary
        AssistantMessage(content="Noted."),  # 5
        UserMessage(content="Go on."),
        AssistantMessage(content="Done."),  # 7
    )
    usage = {3: ProviderUsage(3_000, 5), 5: ProviderUsage(2_000, 5), 7: ProviderUsage(2_100, 5)}
    compaction = {"summary_index": 4, "trigger": "manual", "replies_before": 2}
    transcript = Transcript("t", {"compactions": [compaction]}, "", messages, usage=usage)
    cache = TokenCache(ApproximateCounter())
    points = calibrate(transcript, cache).points
    # The request without usage is left out, not the ones after it.
    assert [(p.number, p.reply, p.segment, p.billed) for p in points] == [
        (1, 3, 0, 3_000),
        (2, 5, 1, 2_000),
        (3, 7, 1, 2_100),
    ]
    assert [p.note for p in points] == [
        "2 images (their tokens are a guess)",
        "first request after a recorded compaction",
        "",
    ]
    assert [p.estimate for p in points] == [
        sum(cache.message(m) for m in messages[:3]),
        cache.message(messages[4]),
        sum(cache.message(m) for m in messages[4:7]),
    ]


def _billed_session(model: str | None = None) -> Transcript:
    """Twelve requests of a growing conversation, each billed 1,000 + 1.1 × its characters /
    3: text whose tokens o200k_base and cl100k_base count differently."""
    messages: list[UserMessage | AssistantMessage] = []
    usage = {}
    for n in range(12):
        messages.append(UserMessage(content=f"Schritt {n}: überprüfe die Äpfel — naïve café {n}"))
        messages.append(AssistantMessage(content=f"Erledigt {n}: ½ der Größe, 東京 {n * 7}"))
        size = sum(len(str(m.content)) for m in messages)
        usage[len(messages) - 1] = ProviderUsage(1_000 + round(1.1 * size / 3), 5)
    meta = {"models": [model]} if model else {}
    return Transcript("t", meta, "", tuple(messages), usage=usage)


def test_without_a_counter_a_recording_is_counted_with_its_models_own_tokenizer() -> None:
    from ctxlab.tokens import TiktokenCounter

    def estimates(transcript: Transcript, counter: object = None) -> list[int]:
        return [p.estimate for p in calibrate(transcript, counter).points]  # type: ignore[arg-type]

    gpt = _billed_session("gpt-4o")
    own = estimates(gpt, TiktokenCounter("o200k_base"))
    assert estimates(gpt) == own  # GPT-4o's own o200k_base
    other = estimates(gpt, TiktokenCounter("cl100k_base"))
    assert other != own  # the control: the text is one the two count apart
    assert estimates(_billed_session("claude-sonnet-4-6")) == other  # no public one: cl100k


def test_calibrate_forecasts_every_request_from_another_sessions_fit_when_given() -> None:
    fit = CalibrationFit(None, 2.0, (2.0, 2.0), {0: 5_000.0}, {0: (5_000, 5_000)}, 7)
    cache = TokenCache(ApproximateCounter())
    calibration = calibrate(_billed_session(), cache, prior=Calibration((fit,), ()))
    frame = calibration.frame()
    assert list(frame["forecast"]) == [5_000 + 2 * p.estimate for p in calibration.points]
    assert calibration.forecast_from == "another session's fit"


def test_each_message_is_counted_once_however_many_requests_hold_it() -> None:
    # Twelve requests hold 1, 3, ... 23 messages: summed request by request, 144 counts; each
    # request's estimate is a lookup in running sums, so each of the 24 messages is counted
    # once (in one batch) and read back once (a 10,000-request recording would cost their
    # square): a hit for each of its blocks as the batch sums them, one as it is read.
    cache = TokenCache(ApproximateCounter())
    transcript = _billed_session()
    points = calibrate(transcript, cache).points
    assert len(points) == 12
    # (The running sums run over the whole segment: its last reply is counted too.)
    blocks = {b.content_hash for m in transcript.messages for b in m.content}
    assert cache.counted_blocks == len(blocks) == 24
    assert cache.hits == sum(len(m.content) + 1 for m in transcript.messages) == 48
    assert points[-1].estimate == sum(cache.message(m) for m in transcript.messages[:-1])
