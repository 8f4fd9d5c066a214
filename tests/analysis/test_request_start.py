"""A request must hold messages and start with a user turn; replays begin where one can."""

from __future__ import annotations

import pytest

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    InvalidConversationStart,
    TextBlock,
    UserMessage,
    WorkingState,
    prepare,
)
from ctxlab.analysis._replay import replay


async def test_a_request_with_no_messages_fails_validation_and_says_so() -> None:
    with pytest.raises(InvalidConversationStart, match="no messages") as caught:
        await prepare(WorkingState(), context_window=8_000, counter=ApproximateCounter())
    assert caught.value.manifest is not None
    assert caught.value.manifest.validation == "invalid_conversation"


async def test_a_request_that_starts_with_an_assistant_turn_fails_validation() -> None:
    state = WorkingState(
        conversation=(
            AssistantMessage(content=(TextBlock(text="hello"),)),
            UserMessage(content="hi"),
        )
    )
    with pytest.raises(InvalidConversationStart, match="starts with an assistant") as caught:
        await prepare(state, context_window=8_000, counter=ApproximateCounter())
    assert caught.value.manifest is not None
    assert caught.value.manifest.validation == "invalid_conversation"


async def test_a_request_that_starts_with_a_user_turn_passes() -> None:
    state = WorkingState(conversation=(UserMessage(content="hi"),))
    prep = await prepare(state, context_window=8_000, counter=ApproximateCounter())
    assert prep.manifest.validation == "passed"
    assert prep.request.messages[0].role == "user"


async def test_a_replay_of_a_recording_that_starts_with_the_assistant_begins_at_the_user() -> None:
    messages = [
        AssistantMessage(content=(TextBlock(text="I was saying"),)),
        AssistantMessage(content=(TextBlock(text="and more"),)),
        UserMessage(content="now fix it"),
        AssistantMessage(content=(TextBlock(text="fixed"),)),
        UserMessage(content="thanks"),
        AssistantMessage(content=(TextBlock(text="welcome"),)),
    ]
    steps = [s async for s in replay(messages, context_window=8_000, counter=ApproximateCounter())]
    # The two leading assistant messages cannot be requested: the first request answers "now
    # fix it", and every request starts with a user turn.
    assert [s.index for s in steps] == [3, 5]
    assert all(s.manifest.validation == "passed" for s in steps)
    assert steps[0].state.conversation[0] == messages[2]


async def test_replay_steps_number_requests_apart_from_message_indexes() -> None:
    messages = [
        UserMessage(content="go"),
        AssistantMessage(content=(TextBlock(text="one"),)),
        UserMessage(content="again"),
        AssistantMessage(content=(TextBlock(text="two"),)),
    ]
    steps = [s async for s in replay(messages, context_window=8_000, counter=ApproximateCounter())]
    assert [(s.number, s.index) for s in steps] == [(0, 1), (1, 3)]
