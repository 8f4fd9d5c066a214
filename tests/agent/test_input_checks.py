"""The agent's checks on its input: an empty message is refused."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import InvalidConversation
from ctxlab.models import ScriptedModel


def agent_with(tool: object, replies: list[object], **kwargs: object) -> Agent:
    return Agent(
        model=ScriptedModel(replies),
        tools=[tool],  # type: ignore[list-item]
        counter=ApproximateCounter(),
        **kwargs,  # type: ignore[arg-type]
    )


async def test_an_empty_user_message_is_refused_like_an_empty_string() -> None:
    def noop() -> str:
        """Nothing."""
        return ""

    agent = agent_with(noop, ["ok"])
    with pytest.raises(InvalidConversation, match="empty"):
        await agent({"role": "user", "content": []})
    assert agent.history == ()
    assert (await agent("hello")).content[0].text == "ok"  # type: ignore[union-attr]
