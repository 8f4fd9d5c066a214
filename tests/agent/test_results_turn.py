"""`ResultsTurn`: a model that says what the user turn after its calls holds besides their
results (a recording replaying its harness's notes) — the agent sends that turn, and refuses
one that drops or changes a result."""

from __future__ import annotations

import pytest

from ctxlab.agent import Agent, ResultsTurn, Tool
from ctxlab.exceptions import UsageError
from ctxlab.messages import TextBlock, ToolResultBlock, UserMessage
from ctxlab.models import ScriptedModel, tool_call


def _echo(text: str) -> str:
    """Say ``text`` back."""
    return f"echo {text}"


class _Noted(ScriptedModel):
    """Adds a note after the results; ``drop``: leaves the last result out."""

    def __init__(self, drop: bool = False) -> None:
        super().__init__(
            [[tool_call("_echo", {"text": "a"}), tool_call("_echo", {"text": "b"})], "Done."]
        )
        self.drop = drop

    def results_turn(self, results: tuple[ToolResultBlock, ...]) -> UserMessage | None:
        kept = results[:-1] if self.drop else tuple(reversed(results))
        return UserMessage(
            content=(*kept, TextBlock(text="<system-reminder>noted</system-reminder>"))
        )


async def test_the_agent_sends_the_turn_the_model_makes() -> None:
    model = _Noted()
    assert isinstance(model, ResultsTurn)
    agent = Agent(model=model, tools=[Tool.from_function(_echo)])
    assert (await agent("go")).content[0].text == "Done."  # type: ignore[union-attr]
    turn = agent.history[2]
    assert isinstance(turn, UserMessage)
    # Its results in the order the model put them (reversed), the note after them; the
    # second request held that turn as made.
    assert [b.text for b in turn.content] == [
        "echo b",
        "echo a",
        "<system-reminder>noted</system-reminder>",
    ]
    assert model.requests[1].messages[-1] == turn


async def test_a_turn_that_drops_a_result_is_refused() -> None:
    agent = Agent(model=_Noted(drop=True), tools=[Tool.from_function(_echo)])
    with pytest.raises(
        UsageError, match=r"_Noted.results_turn must return a turn holding the results"
    ):
        await agent("go")
