"""A what-if over a session whose agent wrote a long run of digits ended by a letter replays as
fast as over one whose run ends with a space (issue 51: the grader's number pattern and the
summarizer's value pattern took the square of the run's length — an assistant text of 48,000
digits then a letter made one replay of one config take 16-64 s, 0.4 s with a space)."""

from __future__ import annotations

import time

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf
from ctxlab.analysis._sync import run_sync
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from tests.analysis.whatif_figures import logs_session

DIGITS = 12_000


def _session(digit: str, end: str) -> Transcript:
    """`logs_session` with, early on, the run of digits ended by ``end`` in the agent's text,
    in a command it ran and in that command's output (three readers of it)."""
    base = logs_session()
    run = digit * DIGITS + end
    call = ToolUseBlock(id="d", name="bash", input={"command": f"echo {run}"})
    extra = [
        AssistantMessage(content=run),
        UserMessage(content="Go on."),
        AssistantMessage(content=(call,)),
        UserMessage(content=(ToolResultBlock(tool_use_id="d", content=run),)),
    ]
    messages = (base.messages[0], *extra, *base.messages[1:])
    return Transcript(f"digits-{digit}", base.meta, base.system, messages)


def _replay(transcript: Transcript) -> tuple[float, WhatIf]:
    what = WhatIf(
        transcript,
        {"default": ContextConfig()},
        context_window=DIGITS // 2 + 16_000,
        counter=ApproximateCounter(),
    )
    started = time.perf_counter()
    run_sync(what.run())
    what.retention()
    what.steps()
    return time.perf_counter() - started, what


def test_a_run_of_digits_ended_by_a_letter_replays_as_fast_as_one_ended_by_a_space() -> None:
    _replay(_session("9", " "))  # warm: imports, the counter
    # Each replay its own digits: the scans of a text are kept (`_extract._memoized`).
    spaced, what = _replay(_session("1", " "))
    lettered = min(_replay(_session(d, "x"))[0] for d in "23")
    # The run is in the compacted span, its number graded (a control: the replay compacts).
    run = what.runs["default"]
    assert run.summary_requests, "the replay must compact for the test to mean anything"
    retained = what.retention()
    assert not retained.empty
    assert lettered < 3 * spaced + 0.5, (
        f"ended by a letter {lettered:.2f} s, a space {spaced:.2f} s"
    )
