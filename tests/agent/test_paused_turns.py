"""A response that is not the model's reply — the provider paused (Anthropic's ``pause_turn`` of
a long server-tool turn, or ``compaction`` with ``pause_after_compaction``) — is kept and the
conversation sent back as it is, until the model replies; an ``end_turn`` with text is the
reply (the control)."""

from __future__ import annotations

import pytest

from ctxlab import Agent
from ctxlab.agent import ReplyEvent
from ctxlab.messages import AssistantMessage, TextBlock
from ctxlab.models import ModelResponse, ScriptedModel


@pytest.mark.parametrize("reason", ["pause_turn", "compaction"])
async def test_a_paused_turn_is_sent_back_until_the_model_replies(reason: str) -> None:
    paused = ModelResponse(AssistantMessage(content=(TextBlock(text="Searching…"),)), reason)
    model = ScriptedModel([paused, "Found it: the bug is in parse()."])
    agent = Agent(model=model)
    replies: list[object] = []
    agent.subscribe(lambda e: replies.append(e) if isinstance(e, ReplyEvent) else None)
    reply = await agent("Where is the bug?")
    assert [b.text for b in reply.content if isinstance(b, TextBlock)] == [
        "Found it: the bug is in parse()."
    ]
    assert len(model.requests) == 2
    # The paused message went back as it was, at the end of the second request.
    assert model.requests[1].messages[-1] == paused.message
    assert len(replies) == 1  # the pause is no reply
    assert sum(m.purpose == "reasoning" for m in agent.manifests) == 2


async def test_an_end_turn_with_text_is_the_reply() -> None:
    model = ScriptedModel([ModelResponse(AssistantMessage(content=(TextBlock(text="Done."),)))])
    reply = await Agent(model=model)("Go.")
    assert [b.text for b in reply.content if isinstance(b, TextBlock)] == ["Done."]
    assert len(model.requests) == 1
