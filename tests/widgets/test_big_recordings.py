"""A long recording opens in the Lab in time linear in its requests: each request's tokens by
placement are read from running totals its requests share, not by walking its items (a walk
of every request's items was n² in all: 10 s of a 5,000-request Lab.open), and they are the
walk's, to the token."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, Transcript, calibrate, load
from ctxlab.manifest import PLACEMENTS, ContextManifest, step_row
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.sources import ReplaySession
from tests.hostile import assert_linear

FIXTURE = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"


def _walked(manifest: ContextManifest) -> dict[str, int]:
    """Tokens per placement, summed item by item here (not by ctxlab)."""
    out = dict.fromkeys(PLACEMENTS, 0)
    for item in list(manifest.items):
        out[item.placement] += item.tokens
    return out


def _session(requests: int) -> Transcript:
    """A tool loop of ``requests`` replies, each result a few words."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the test.")]
    for n in range(requests):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"cat f{n}"})
        messages.append(AssistantMessage(content=(use,)))
        result = ToolResultBlock(tool_use_id=f"c{n}", content=f"line {n} of f{n}")
        messages.append(UserMessage(content=(result,)))
    messages.append(AssistantMessage(content="done"))
    return Transcript("long", {}, "You fix code.", tuple(messages))


def _recorded(transcript: Transcript, **options: object) -> list[ContextManifest]:
    session = ReplaySession(
        transcript,
        context_window=200_000,
        counter=ApproximateCounter(),
        view="recorded",
        **options,  # type: ignore[arg-type]
    )
    asyncio.run(session.run())
    return list(session.manifests)


@pytest.mark.parametrize("unrecorded", [None, 3_000])
def test_the_totals_of_a_recordings_requests_are_those_of_their_items(
    unrecorded: int | None,
) -> None:
    manifests = _recorded(load(FIXTURE), unrecorded_tokens=unrecorded)
    manifests += _recorded(_session(40), unrecorded_tokens=unrecorded)
    assert len(manifests) == 5 + 41
    for manifest in manifests:
        assert manifest.totals == _walked(manifest), manifest.request_id
        assert sum(manifest.totals.values()) == manifest.estimated_input_tokens
    # The control: a fixed part the file does not hold, when stated, is in every request.
    assert all(m.totals["unrecorded"] == (unrecorded or 0) for m in manifests[5:])


def test_the_rows_of_a_long_recording_take_time_linear_in_its_requests() -> None:
    def rows_of(requests: int) -> object:
        manifests = _recorded(_session(requests))

        def rows() -> None:
            for step, manifest in enumerate(manifests):
                step_row(manifest, step=step)

        return rows

    # 1,000 then 4,000 requests: a walk of each request's items reads 8 million items at 4,000.
    assert_linear(rows_of, 1_000, bound=4.0)


class _BatchCounter(ApproximateCounter):
    """Counts as `ApproximateCounter`, and says how: text by text, or in batches."""

    def __init__(self) -> None:
        super().__init__()
        self.singles = 0
        self.batched = 0

    def count_text(self, text: str) -> int:
        self.singles += 1
        return super().count_text(text)

    def count_many(self, texts: list[str]) -> list[int]:
        self.batched += len(texts)
        return [super(_BatchCounter, self).count_text(t) for t in texts]


def test_a_recordings_messages_are_counted_in_one_batch_as_it_opens() -> None:
    # A batch runs on two threads with a tokenizer that has them (toktok's `count_many`): one
    # by one the messages were most of a 5,000-request recording's opening. The counts are
    # those of one by one (the control: a counter without batches).
    transcript = _session(300)
    counter = _BatchCounter()
    session = ReplaySession(transcript, context_window=200_000, counter=counter, view="recorded")
    manifests = asyncio.run(session.run())
    # Only the System prompt is counted alone (the fixed part, before any request).
    assert counter.batched >= 2 * 300 and counter.singles <= 1
    plain = _recorded(transcript)
    assert [m.totals for m in manifests] == [m.totals for m in plain]
    assert [[i.tokens for i in m.items] for m in manifests] == [
        [i.tokens for i in m.items] for m in plain
    ]


def test_a_billed_recordings_calibration_counts_its_messages_in_one_batch() -> None:
    # A recording with usage is calibrated when its session is made, before the recorded view
    # is read: that first count is the one to batch. The fit is that of a one-by-one count.
    plain = _session(300)
    replies = [i for i, m in enumerate(plain.messages) if isinstance(m, AssistantMessage)]
    usage = {
        i: ProviderUsage(input_tokens=40 + 9 * n, output_tokens=5) for n, i in enumerate(replies)
    }
    billed = dataclasses.replace(plain, usage=usage)
    counter = _BatchCounter()
    batched = calibrate(billed, counter)
    assert counter.batched >= 2 * 300 and counter.singles <= 1
    alone = calibrate(billed, ApproximateCounter())
    assert batched.points == alone.points and batched.fits == alone.fits
    assert len(batched.points) == 301  # 300 tool calls and the final "done"
