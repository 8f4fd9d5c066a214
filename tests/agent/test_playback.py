"""A recording played back through the real agent loop, and its summary requests measured."""

from __future__ import annotations

import pytest

from ctxlab import TiktokenCounter
from ctxlab.agent import Agent, play, recorded_model, recorded_tools
from ctxlab.io._transcript import corpus_dir, load_transcript
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from tests.conftest import requires_corpus

RECORDING = (
    UserMessage(content="count the files"),
    AssistantMessage(content=(ToolUseBlock(id="t1", name="bash", input={"command": "ls | wc"}),)),
    UserMessage(content=(ToolResultBlock(tool_use_id="t1", content="42"),)),
    AssistantMessage(content=(TextBlock(text="There are 42."),)),
    UserMessage(content="and the hidden ones?"),
    AssistantMessage(content=(ToolUseBlock(id="t2", name="bash", input={"command": "ls -a"}),)),
    UserMessage(content=(ToolResultBlock(tool_use_id="t2", content=".git\n.env"),)),
)


async def test_a_recording_plays_back_with_its_answers_and_results() -> None:
    agent = Agent(
        model=recorded_model(RECORDING, context_window=8_000),
        tools=recorded_tools(RECORDING),
        counter=TiktokenCounter(),
    )
    done = await play(agent, RECORDING)
    # Two user turns, two calls; the recording ends on a tool result, which is not an error.
    assert done.calls == 2 and done.error is None
    assert agent.history == RECORDING
    assert agent.model.remaining == 0


@requires_corpus
@pytest.mark.parametrize("window", [16_000, 8_000])
async def test_summary_requests_of_a_real_session_fit_the_window(window: int) -> None:
    # Before summary requests were validated, this session sent 8 of 11 over the window at 8k
    # (the largest 8,729 tokens): the cached form re-sent the last request whole.
    path = corpus_dir() / "norm" / "mini_swe_agent__pytest-dev__pytest-7490.jsonl"
    transcript = load_transcript(path)
    agent = Agent(
        model=recorded_model(transcript.messages, context_window=window),
        tools=recorded_tools(transcript.messages),
        system_prompt=transcript.system,
        counter=TiktokenCounter(),
        max_steps=1_000,
    )
    done = await play(agent, transcript.messages)
    assert done.error is None
    summaries = [m for m in agent.manifests if m.purpose == "summary"]
    assert len(summaries) >= 2
    assert all(m.validation == "passed" for m in summaries)
    assert max(m.estimated_input_tokens for m in summaries) <= window * 0.95
