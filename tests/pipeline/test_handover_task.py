"""The task in a handover at small windows: pinned first — a first message too large for its
share of the window is pinned cut at a line end, the cut said — or, where the summary must
state it, written first and its cut said; never repeated as the user's later instructions."""

from __future__ import annotations

from ctxlab import ApproximateCounter, replay
from ctxlab.messages import (
    AssistantMessage,
    Summary,
    UserMessage,
)
from ctxlab.pipeline import extractive_summarizer
from tests.helpers import Message, session, summary_request

TASK_LINES = [f"Requirement {n}: the parser must accept form_{n} of the input." for n in range(300)]
TASK = "\n".join(TASK_LINES)


def _session(turns: int = 40) -> list[Message]:
    return [
        *session(turns, output_chars=360, task=TASK),
        AssistantMessage(content="Next I will write the parser."),
    ]


async def test_a_task_too_large_for_its_share_is_pinned_cut_with_the_cut_said() -> None:
    # The task is ~5,000 tokens; at an 8k window its share (40 % of the input limit) holds
    # about half of it: pinned first, the rest counted — not left to a summary of ~800 tokens.
    summaries = [
        step.state.summary
        async for step in replay(_session(), context_window=8_000, counter=ApproximateCounter())
        if step.compaction is not None
    ]
    assert summaries
    for summary in summaries:
        assert summary is not None
        lines = summary.task.splitlines()
        kept = len(lines) - 1
        assert lines[:kept] == TASK_LINES[:kept] and kept >= 100
        assert lines[-1] == f"[the first message continues for {300 - kept} lines]"
        # The summary points at it, and does not repeat its lines as later instructions.
        overview = summary.fields["task_overview"]
        assert overview.startswith("The task: the user's first message, quoted below.")
        assert "Requirement" not in overview


async def test_a_task_the_summary_states_goes_first_and_its_cut_is_said() -> None:
    chatter = tuple(
        m
        for n in range(30)
        for m in (
            UserMessage(content=f"Also remember rule number {n} about the tokenizer settings."),
            AssistantMessage(content=f"Noted rule {n}."),
        )
    )
    span = (UserMessage(content=TASK), AssistantMessage(content="Starting."), *chatter)
    fields = await extractive_summarizer(summary_request(span, None, budget=600))
    overview = fields["task_overview"].splitlines()
    kept = overview.index(next(ln for ln in overview if ln.startswith("[the task continues")))
    assert overview[:kept] == TASK_LINES[:kept] and kept > 5
    assert overview[kept] == f"[the task continues for {300 - kept} more lines]"
    # The rest of the first message is not an instruction given since.
    assert not any(ln.startswith("- Requirement") for ln in overview)


async def test_a_task_no_longer_pinned_is_stated_from_the_earlier_pinned_copy() -> None:
    # The earlier summary pointed at the pinned task; this compaction cannot pin it (its
    # latest turn leaves no room): the summary states it, it does not point at nothing.
    previous = Summary(
        fields={
            "task_overview": "The task: the user's first message, quoted below.\n"
            "User instructions since, verbatim:\n- Keep the old API.",
            "current_state": "",
        },
        text="(earlier)",
        task="Port the parser to the new grammar.\nKeep tests green.",
    )
    span = (AssistantMessage(content="Working on it."),)
    overview = (await extractive_summarizer(summary_request(span, previous, budget=400)))[
        "task_overview"
    ]
    assert overview.splitlines() == [
        "Port the parser to the new grammar.",
        "Keep tests green.",
        "User instructions since, verbatim:",
        "- Keep the old API.",
    ]
    # An earlier cut is kept said, its count carried into the new cut.
    cut = Summary(
        fields={"task_overview": "The task: the user's first message, quoted below."},
        text="(earlier)",
        task="\n".join([*TASK_LINES[:200], "[the first message continues for 100 lines]"]),
    )
    overview = (await extractive_summarizer(summary_request(span, cut, budget=400)))[
        "task_overview"
    ]
    kept = len(overview.splitlines()) - 1
    assert overview.splitlines()[-1] == f"[the task continues for {300 - kept} more lines]"


async def test_the_task_goes_in_before_the_instructions_an_earlier_summary_carried() -> None:
    instructions = [f"- Also keep behaviour {n} of the tokenizer as it was." for n in range(60)]
    previous = Summary(
        fields={
            "task_overview": "\n".join(
                ["Port the parser.", "User instructions since, verbatim:", *instructions]
            )
        },
        text="(earlier)",
    )
    span = (AssistantMessage(content="Working on it."),)
    overview = (await extractive_summarizer(summary_request(span, previous, budget=400)))[
        "task_overview"
    ].splitlines()
    assert overview[0] == "Port the parser."
    # What room is left holds the latest instructions (and the heading).
    assert overview[1] == "User instructions since, verbatim:" and overview[-1] == instructions[-1]
