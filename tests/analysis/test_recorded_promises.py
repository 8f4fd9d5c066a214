"""What a recording *as recorded* promises, each on the value a user reads: `unrecorded_parts`
names redacted thinking, a recorded compaction's ``tokens_after`` is the bill of the request
after it, calibration's estimate holds the System prompt and tools the file has, a request's
model comes from the file's list only when the session used one model, and a segment without
usage takes the nearest earlier segment's fixed part.

The bills compared with are read from the raw file here, by a few lines of JSON parsing that
share nothing with ctxlab's importer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ToolSchema, load
from ctxlab.analysis._calibration import calibrate
from ctxlab.analysis._calibration_fit import CalibrationFit
from ctxlab.analysis._recorded import recorded_requests, unrecorded_parts
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    UserMessage,
)
from ctxlab.sources import ReplaySession
from ctxlab.tokens import ApproximateCounter, TokenCache

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def _raw_bills(path: Path) -> list[int]:
    """Input + cache read + cache write of each main-chain response, in order, by message id."""
    seen: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        message = record.get("message") or {}
        usage = message.get("usage") or {}
        if record.get("type") != "assistant" or not usage or message.get("id") in seen:
            continue
        seen[message["id"]] = sum(
            int(usage.get(k) or 0)
            for k in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        )
    return list(seen.values())


def _raw_pre_tokens(path: Path) -> list[int]:
    return [
        json.loads(line)["compactMetadata"]["preTokens"]
        for line in path.read_text(encoding="utf-8").splitlines()
        if '"compact_boundary"' in line
    ]


# --- unrecorded_parts ----------------------------------------------------------------------------


def _with_reply(*blocks: object) -> Transcript:
    messages = (
        UserMessage(content="go"),
        AssistantMessage(content=(*blocks, TextBlock(text="done"))),  # type: ignore[arg-type]
    )
    return Transcript("t", {}, "You are careful.", messages)


@pytest.mark.parametrize(
    ("blocks", "parts"),
    [
        ((RedactedThinkingBlock(data="EncryptedBlob=="),), ["redacted thinking"]),
        ((ThinkingBlock(thinking="", signature="sig"),), ["redacted thinking"]),
        ((ThinkingBlock(thinking="I should read the file.", signature="sig"),), []),
        ((), []),
    ],
)
def test_unrecorded_parts_names_redacted_thinking(
    blocks: tuple[object, ...], parts: list[str]
) -> None:
    assert unrecorded_parts(_with_reply(*blocks)) == parts


# --- a recorded compaction's tokens_after --------------------------------------------------------


async def test_a_recorded_compactions_tokens_after_is_the_bill_of_the_request_after_it() -> None:
    transcript = load(FIXTURE)
    bills, (pre,) = _raw_bills(FIXTURE), _raw_pre_tokens(FIXTURE)
    manifests = await ReplaySession(
        transcript, context_window=200_000, counter=ApproximateCounter(), view="recorded"
    ).run()
    marks = [
        (step, t)
        for step, m in enumerate(manifests)
        for t in m.transforms
        if t.kind == "recorded_compaction"
    ]
    ((step, mark),) = marks
    # Before: the recording's own preTokens; after: what the first request after it billed.
    assert (step, mark.detail, mark.tokens_before, mark.tokens_after) == (
        3,
        "manual",
        pre,
        bills[3],
    )
    assert bills[3] == 14_358 and pre == 20_900


# --- calibration's estimate holds the System prompt and tools ------------------------------------


def test_calibrations_estimate_includes_the_system_prompt_and_tools_the_file_has() -> None:
    transcript = load(FIXTURE)
    system = "You are a careful engineer. " * 40
    tools = (
        ToolSchema("Bash", "Run a shell command and return its output.", {"type": "object"}),
        ToolSchema("Read", "Read a file of the workspace, whole.", {"type": "object"}),
    )
    whole = Transcript(
        transcript.name,
        transcript.meta,
        system,
        transcript.messages,
        tools=tools,
        usage=transcript.usage,
    )
    counter = ApproximateCounter()
    bare = calibrate(transcript, counter)
    full = calibrate(whole, counter)
    added = counter.count_text(system) + sum(counter.count_text(t.rendered) for t in tools)
    assert added > 300
    assert [p.estimate - b.estimate for p, b in zip(full.points, bare.points, strict=True)] == [
        added
    ] * len(bare.points)
    assert [p.billed for p in full.points] == _raw_bills(FIXTURE)


# --- a request's model ---------------------------------------------------------------------------


def _two_replies(meta: dict[str, object]) -> Transcript:
    messages = (
        UserMessage(content="one"),
        AssistantMessage(content="first"),
        UserMessage(content="two"),
        AssistantMessage(content="second"),
    )
    usage = {1: ProviderUsage(100, 5), 3: ProviderUsage(120, 5)}
    return Transcript("t", meta, "", messages, usage=usage)


@pytest.mark.parametrize(
    ("meta", "models"),
    [
        ({"models": ["claude-opus-4-6"]}, ["claude-opus-4-6", "claude-opus-4-6"]),
        # Two models and no word of which answered: no request is given either.
        ({"models": ["claude-opus-4-6", "claude-haiku-4-5"]}, [None, None]),
        (
            {
                "models": ["claude-opus-4-6", "claude-haiku-4-5"],
                "reply_models": {"1": "claude-haiku-4-5"},
            },
            [None, "claude-haiku-4-5"],
        ),
        ({}, [None, None]),
    ],
)
def test_a_requests_model_comes_from_the_list_only_when_the_session_has_one(
    meta: dict[str, object], models: list[str | None]
) -> None:
    assert [r.model for r in recorded_requests(_two_replies(meta))] == models


# --- a segment without usage takes the nearest earlier segment's fixed part ---------------------


@settings(max_examples=40, deadline=None)
@given(
    st.dictionaries(st.integers(0, 12), st.integers(0, 50_000), min_size=1, max_size=5),
    st.integers(0, 14),
    st.integers(0, 10_000),
)
def test_a_segment_without_usage_takes_the_nearest_earlier_segments_fixed_part(
    fixed: dict[int, int], segment: int, estimate: int
) -> None:
    fit = CalibrationFit(
        "m", 1.25, (1.25, 1.25), {k: float(v) for k, v in fixed.items()}, {}, len(fixed)
    )
    earlier = [s for s in fixed if s <= segment]
    # The nearest segment at or before it; before the first known one, the first known one.
    expected = fixed[max(earlier)] if earlier else fixed[min(fixed)]
    assert fit.calibrated(estimate, segment) == round(expected + 1.25 * estimate)
    part = UnrecordedPart(
        "System prompt, tool schemas",
        "billed",
        "from the bill",
        {("m", k): v for k, v in sorted(fixed.items())},
    )
    assert part.size(None, segment) == expected


def test_segment_three_takes_segment_twos_fixed_part_not_the_firsts() -> None:
    fit = CalibrationFit("m", 1.0, (1.0, 1.0), {0: 20_000.0, 2: 26_000.0, 5: 31_000.0}, {}, 9)
    assert [fit.calibrated(1_000, s) for s in (0, 1, 2, 3, 4, 5, 9)] == [
        21_000,
        21_000,
        27_000,
        27_000,
        27_000,
        32_000,
        32_000,
    ]


def test_the_calibrated_estimate_of_a_recording_counts_with_the_cache_given() -> None:
    # The control for the System/tools test: a cache counts the same text the same way.
    cache = TokenCache(ApproximateCounter())
    transcript = load(FIXTURE)
    assert [p.estimate for p in calibrate(transcript, cache).points] == [
        p.estimate for p in calibrate(transcript, ApproximateCounter()).points
    ]
