"""`ScriptedModel`'s reply list: the shapes it takes, and the error naming them."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.models import tool_call


async def test_a_scripted_reply_list_takes_text_and_says_which_shapes_it_accepts() -> None:
    from ctxlab.exceptions import UsageError
    from ctxlab.models import FunctionModel

    def echo(text: str) -> str:
        """Echo."""
        return text

    calls = iter([["Let me check.", tool_call("echo", {"text": "x"})], "done"])
    agent = Agent(
        model=FunctionModel(lambda r, i: next(calls)), tools=[echo], counter=ApproximateCounter()
    )
    await agent("go")
    assert agent.history[1].content[0].text == "Let me check."  # type: ignore[union-attr]
    broken = Agent(model=FunctionModel(lambda r, i: [42]), counter=ApproximateCounter())
    with pytest.raises(UsageError, match="str, TextBlock, ToolUseBlock"):
        await broken("go")
